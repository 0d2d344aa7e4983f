"""deadletter: input an agent could not use, with the reason and the original bytes."""

from __future__ import annotations

import base64

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, new_id, now

__all__ = ["TOPIC", "DeadLetter"]


class DeadLetter(Event):
    """A rejected message: where it came from, why, and its bytes (base64)."""

    dead_id: str = Field(default_factory=new_id)
    source_topic: str
    partition: int | None = None
    offset: int | None = None
    key_b64: str | None = None
    value_b64: str | None = None
    reason: str
    error_type: str = ""
    agent: str = ""
    ts: float = Field(default_factory=now)

    @staticmethod
    def encode(raw: bytes | None) -> str | None:
        """Base64 of raw bytes (None stays None)."""
        return None if raw is None else base64.b64encode(raw).decode()

    def value_bytes(self) -> bytes | None:
        """The original message value."""
        return None if self.value_b64 is None else base64.b64decode(self.value_b64)


TOPIC = TopicSpec("deadletter", DeadLetter, "source_topic", description=DeadLetter.__doc__ or "")
