"""Shared pieces of every event model: immutability, versioning, topic binding."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schedmate.schemas.exceptions import InvalidEventError

__all__ = ["Event", "TopicSpec", "new_id", "now"]


def now() -> float:
    """Unix time in seconds (event timestamps)."""
    return time.time()


def new_id() -> str:
    """A fresh event id (idempotency key for consumers)."""
    return uuid.uuid4().hex


class Event(BaseModel):
    """Base of every topic's model: frozen, strict about unknown fields, versioned."""

    # A non-finite float (a diverged loss) travels as the string "NaN", "Infinity" or "-Infinity".
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, ser_json_inf_nan="strings")
    SCHEMA_VERSION: ClassVar[int] = 1
    schema_version: int = Field(default=1, ge=1, description="Version of this event's schema.")

    def to_bytes(self) -> bytes:
        """JSON encoding used on the wire."""
        return self.model_dump_json().encode()


E = TypeVar("E", bound=Event)


@dataclass(frozen=True)
class TopicSpec(Generic[E]):
    """A topic: its name, event model, key field and default partition count."""

    name: str
    model: type[E]
    key_field: str
    partitions: int | None = None  # None: the configured default
    description: str = ""
    internal: bool = False  # agents' own state: compacted, not part of the subscriber contract
    # Who writes it: connectors (jobs' inputs) or the worker (results, signed when a signing key is set).
    # Broker ACLs (`schedmate acls`) grant WRITE by this, so a connector's principal cannot forge results.
    producer: Literal["connector", "worker"] = "worker"

    @property
    def signed(self) -> bool:
        """Whether the worker signs this topic's records (see ``schedmate.infra.signing``)."""
        return self.producer == "worker" and not self.internal

    def key_of(self, event: E) -> bytes:
        """The Kafka key of ``event`` (keeps one job's events in one partition)."""
        return str(getattr(event, self.key_field)).encode()

    def decode(self, value: bytes | None) -> E:
        """Validate raw bytes into the topic's model, or raise :class:`InvalidEventError`."""
        if value is None:
            raise InvalidEventError(f"{self.name}: empty message (tombstone) where an event was expected")
        try:
            event = self.model.model_validate_json(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "<root>"
            raise InvalidEventError(
                f"{self.name}: invalid {self.model.__name__} at {where}: {first.get('msg')}"
                f" ({exc.error_count()} error(s))"
            ) from exc
        if event.schema_version > self.model.SCHEMA_VERSION:
            raise InvalidEventError(
                f"{self.name}: schema_version {event.schema_version} is newer than this worker's "
                f"{self.model.SCHEMA_VERSION}; upgrade schedmate"
            )
        return event

    def json_schema(self) -> dict[str, Any]:
        """JSON Schema of the event, annotated with the topic and key."""
        schema = self.model.model_json_schema()
        schema["$id"] = f"schedmate/{self.name}.json"
        schema["x-topic"] = self.name
        schema["x-key"] = self.key_field
        schema["description"] = self.description or schema.get("description", "")
        return schema
