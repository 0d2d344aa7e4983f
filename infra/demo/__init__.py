"""``schedmate demo``: the whole pipeline on one machine with real CPU training jobs (``jobs/``)."""

__all__ = ["demo"]
