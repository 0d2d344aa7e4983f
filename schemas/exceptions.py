"""The root exception of SchedMate and the contract's own errors."""

from __future__ import annotations

__all__ = ["InvalidEventError", "SchedMateError"]


class SchedMateError(Exception):
    """Root of every error SchedMate raises on purpose; its message says what to change."""


class InvalidEventError(SchedMateError):
    """An event's bytes do not decode into the topic's model."""
