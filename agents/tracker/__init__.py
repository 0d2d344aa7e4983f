"""The Metric Tracker: per-job training progress (step, loss, throughput, ETA, ...) from raw log lines."""

__all__ = ["metric_tracker", "progress"]
