"""Running SchedMate.

The floor (``settings``, ``logging``, ``exceptions``, ``processes``, ``lifecycle``, ``kafka``, ``redact``,
``signing``) is imported by every package and imports none of them; the roof (``run/``, ``cli/``,
``measure/``, ``demo/``) uses everything and only ``cli/`` reaches ``measure/`` and ``demo/``."""

__all__ = ["exceptions", "kafka", "lifecycle", "logging", "processes", "redact", "settings", "signing"]
