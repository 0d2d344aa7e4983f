"""The Faust topology: the app, the agents (``track``, ``diagnose``, ``advise``, ``history``), the per-job
state they share (``state``), the gpu.samples view, dead-letter routing, and the ``worker`` that owns them.
The only place domain results become schema events."""

__all__ = ["advise", "app", "deadletter", "diagnose", "gpu_health", "history", "runtime", "state", "track", "worker"]
