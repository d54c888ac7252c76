"""What a person is shown, as values first: the reports the CLI prints, the before/after view,
its HTML, the compaction step-through and the token view. Nothing here decides anything."""
