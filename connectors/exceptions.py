"""Errors of sources and sinks."""

from __future__ import annotations

from schedmate.schemas.exceptions import SchedMateError

__all__ = ["CheckpointError", "ConnectorError"]


class ConnectorError(SchedMateError):
    """Base of errors raised by connectors/."""


class CheckpointError(ConnectorError):
    """A tailer checkpoint cannot be read or written."""
