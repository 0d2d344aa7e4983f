"""SchedMate infra."""
