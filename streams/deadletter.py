"""Routing input an agent cannot use to the deadletter topic, with the reason and original bytes.

A dead letter always fits the producer's request limit: a key or value over its cap is kept
truncated, with its full size and SHA-256 (see :meth:`DeadLetter.of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schedmate.infra.logging import get_logger
from schedmate.schemas import deadletter as dead_schema
from schedmate.schemas.deadletter import DeadLetter

if TYPE_CHECKING:
    from schedmate.streams.app import StreamsApp

__all__ = ["RawMessage", "send_dead_letter"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RawMessage:
    """A record read outside Faust (e.g. recovered state), shaped like the messages agents dead-letter."""

    topic: str
    partition: int | None
    offset: int | None
    key: bytes | None
    value: bytes | None


async def send_dead_letter(sa: StreamsApp, message: Any, reason: str, error_type: str, agent: str) -> None:
    """Publish ``message`` (a Faust message or a :class:`RawMessage`) to deadletter and wait until it is stored."""
    dead = DeadLetter.of(
        message.topic, message.partition, message.offset, message.key, message.value, reason, error_type, agent
    )
    log.warning(
        "dead-lettered", agent=agent, reason=reason[:300], topic=message.topic,
        partition=message.partition, offset=message.offset,
    )  # fmt: skip
    fut = await sa.send(dead_schema.TOPIC, dead_schema.TOPIC.key_of(dead), dead.to_bytes())
    await fut
