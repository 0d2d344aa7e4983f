"""deadletter: input an agent could not use, with the reason and the original bytes."""

from __future__ import annotations

import base64
import hashlib
from typing import Final

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, new_id, now

__all__ = ["MAX_KEY_BYTES", "MAX_VALUE_BYTES", "TOPIC", "DeadLetter"]

MAX_VALUE_BYTES: Final = 512 * 1024  # base64 adds a third: the letter stays well under a 1 MB request
MAX_KEY_BYTES: Final = 16 * 1024


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
    value_size: int | None = Field(default=None, description="size of the original value in bytes")
    value_sha256: str | None = Field(default=None, description="SHA-256 of the whole original value")
    truncated: bool = Field(default=False, description="key or value kept only in part (see the sizes and hash)")

    @classmethod
    def of(
        cls,
        topic: str,
        partition: int | None,
        offset: int | None,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        error_type: str = "",
        agent: str = "",
    ) -> DeadLetter:
        """A dead letter of a raw message; a key or value over its cap is truncated (size and hash kept)."""
        cut = (key is not None and len(key) > MAX_KEY_BYTES) or (value is not None and len(value) > MAX_VALUE_BYTES)
        return cls(
            source_topic=topic,
            partition=partition,
            offset=offset,
            key_b64=cls.encode(None if key is None else key[:MAX_KEY_BYTES]),
            value_b64=cls.encode(None if value is None else value[:MAX_VALUE_BYTES]),
            reason=reason[:2000],
            error_type=error_type[:200],
            agent=agent[:200],
            value_size=None if value is None else len(value),
            value_sha256=None if value is None else hashlib.sha256(value).hexdigest(),
            truncated=cut,
        )

    @staticmethod
    def encode(raw: bytes | None) -> str | None:
        """Base64 of raw bytes (None stays None)."""
        return None if raw is None else base64.b64encode(raw).decode()

    def value_bytes(self) -> bytes | None:
        """The original message value."""
        return None if self.value_b64 is None else base64.b64decode(self.value_b64)


TOPIC = TopicSpec("deadletter", DeadLetter, "source_topic", description=DeadLetter.__doc__ or "")
