"""SchedMate connectors."""
