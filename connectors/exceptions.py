"""Errors of sources and sinks."""

from __future__ import annotations

from schedmate.schemas.exceptions import SchedMateError

__all__ = ["ArchiveError", "CheckpointError", "ConnectorError", "SlurmCommandError", "TraceError"]


class ConnectorError(SchedMateError):
    """Base of errors raised by connectors/."""


class CheckpointError(ConnectorError):
    """A tailer checkpoint cannot be read or written."""


class TraceError(ConnectorError):
    """A cluster trace cannot be read or lacks a column the simulator needs."""


class ArchiveError(ConnectorError):
    """A topic archive cannot be written or replayed."""


class SlurmCommandError(ConnectorError):
    """A Slurm client command is missing, timed out (controller down) or failed."""
