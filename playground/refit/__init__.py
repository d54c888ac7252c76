"""Tools for refitting the meters' constants against billed counts (the ``accuracy`` command);
not needed at run time."""
