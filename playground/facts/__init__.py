"""What a run depends on, read from its log: the span grammar shared with the hidden-then-used
detector, and the ledger of the run's facts (the user's requirements, the files read and written,
the commands and how they ended, the errors)."""
