"""Errors of the semantic layer."""

from __future__ import annotations

from schedmate.schemas.exceptions import SchedMateError

__all__ = ["AgentError", "EmbeddingModelError", "StoreError", "TraceFormatError", "WorkspaceError"]


class AgentError(SchedMateError):
    """Base of errors raised by agents/."""


class EmbeddingModelError(AgentError):
    """The configured embedding model cannot be loaded."""


class StoreError(AgentError):
    """The LanceDB store cannot be opened or written."""


class WorkspaceError(AgentError):
    """A path outside the job's working directory, or an unreadable file."""


class TraceFormatError(AgentError):
    """A trace file SchedMate cannot read as job history."""
