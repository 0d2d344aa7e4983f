"""SchedMate streams."""
