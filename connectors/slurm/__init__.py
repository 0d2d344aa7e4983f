"""Slurm: the source (jobs and their logs to Kafka) and the sink (estimates and actions applied to Slurm)."""

__all__ = ["commands", "sink", "source"]
