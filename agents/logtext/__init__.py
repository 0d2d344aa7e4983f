"""Shared kernel of log reading: line cleaning, template keys, metric slot naming, line timestamps,
template classes and their store. Used by the Metric Tracker and the Failure Handler alike."""

__all__ = ["lines", "slots", "template_store", "templates", "timestamps"]
