"""SchedMate agents."""
