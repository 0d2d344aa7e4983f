"""SchedMate schemas."""
