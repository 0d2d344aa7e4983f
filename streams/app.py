"""The Faust application: topics bound to schemas, worker settings for Tansu and real Kafka, and agents
that dead-letter an event they fail on and go on — stopping the worker (uncommitted) only when the
infrastructure fails (broker, store, model)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import faust
from aiokafka.errors import KafkaError

from schedmate.agents.exceptions import EmbeddingModelError, StoreError
from schedmate.infra.exceptions import InfraError
from schedmate.infra.kafka import client_options, faust_credentials
from schedmate.infra.logging import get_logger
from schedmate.infra.settings import Settings
from schedmate.infra.signing import signed_headers
from schedmate.schemas import TopicSpec

__all__ = ["StreamsApp", "add_agent", "add_batch_agent", "create_app", "is_infrastructure"]

log = get_logger(__name__)


@dataclass
class StreamsApp:
    """The Faust app and the topics its agents use."""

    app: faust.App
    settings: Settings
    topics: dict[str, faust.TopicT]
    bootstrap: str
    options: dict[str, Any]
    signing_secret: bytes | None = None  # SCHEDMATE_SIGNING_KEY, read once

    def topic(self, spec: TopicSpec[Any]) -> faust.TopicT:
        """The Faust topic bound to ``spec``."""
        return self.topics[spec.name]

    async def send(self, spec: TopicSpec[Any], key: bytes, value: bytes) -> Awaitable[Any]:
        """Produce one record to ``spec``'s topic (signed when it is a signed topic and a key is set);
        returns the delivery future."""
        headers = signed_headers(self.signing_secret, spec.name, key, value) if spec.signed else []
        return await self.topic(spec).send(key=key, value=value, headers=headers or None)


def create_app(settings: Settings, bootstrap: str, topics: Sequence[TopicSpec[Any]]) -> StreamsApp:
    """A Faust app on ``bootstrap`` with raw-bytes topics (decoding is ours, so bad input reaches deadletter).

    Settings chosen for the embedded Tansu broker (see ENVIRONMENT.md) that are also valid on Kafka:
    short session timeouts (Tansu's joins wait session_timeout/2), no leader topic, no web server,
    in-memory tables only. Produced batches are normal-sized: Tansu's under-reported end offsets
    broke Faust's changelog recovery, but job state is recovered by markers (:mod:`.state`), which
    does not read end offsets, so the one-record-per-batch workaround is gone on both brokers.
    """
    (settings.data_dir / "faust").mkdir(parents=True, exist_ok=True)
    brokers = ";".join(f"kafka://{b}" for b in bootstrap.split(","))
    app = faust.App(
        settings.app_id,
        broker=brokers,
        broker_credentials=faust_credentials(settings),
        store="memory://",
        autodiscover=False,
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication_factor,
        topic_disable_leader=True,
        broker_session_timeout=6,
        broker_heartbeat_interval=1,
        broker_commit_interval=1.0,
        broker_request_timeout=30,
        consumer_auto_offset_reset="earliest",
        producer_linger_ms=0,
        table_standby_replicas=0,
        stream_buffer_maxsize=4096,
        web_enabled=False,
        datadir=str(settings.data_dir / "faust" / settings.app_id),
    )
    bound = {
        t.name: app.topic(
            t.name,
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=t.partitions or settings.partitions,
        )
        for t in topics
    }
    secret = settings.signing_key.get_secret_value().encode() if settings.signing_key else None
    return StreamsApp(app=app, settings=settings, topics=bound, bootstrap=bootstrap, options=client_options(settings),
                      signing_secret=secret)  # fmt: skip


_INFRASTRUCTURE: tuple[type[BaseException], ...] = (
    KafkaError, ConnectionError, TimeoutError, InfraError, StoreError, EmbeddingModelError,
)  # fmt: skip


def is_infrastructure(exc: BaseException) -> bool:
    """Whether ``exc`` is the platform failing (broker, store, model), not one event being bad."""
    return isinstance(exc, _INFRASTRUCTURE)


async def _guarded(sa: StreamsApp, name: str, step: Awaitable[None], messages: Sequence[Any]) -> None:
    """Await ``step`` (the handling of ``messages``).

    An error of the event (anything but the infrastructure failing: a RecursionError on a hostile
    script, an ArrowInvalid on an absurd value) sends those messages to deadletter with the reason,
    and the agent goes on. An infrastructure failure stops the worker before the offset is committed
    (its supervisor restarts it, backing off, and it resumes from the committed offsets).
    """
    try:
        await step
    except Exception as exc:
        if is_infrastructure(exc):
            log.exception("infrastructure failed; stopping the worker", agent=name)
            await sa.app.crash(exc)
            raise
        log.exception("agent failed on an event; dead-lettering it", agent=name, events=len(messages))
        from schedmate.streams.deadletter import send_dead_letter  # noqa: PLC0415 -- deadletter imports this module

        reason = f"{name} failed on this event: {type(exc).__name__}: {exc}"
        for m in messages:
            await send_dead_letter(sa, m, reason, type(exc).__name__, agent=name)


def add_agent(sa: StreamsApp, spec: TopicSpec[Any], name: str, handle: Callable[[Any], Awaitable[None]]) -> None:
    """An agent that calls ``handle(message)`` per event."""

    async def agent(stream: faust.StreamT[Any]) -> None:
        async for event in stream.events():
            await _guarded(sa, name, handle(event.message), [event.message])

    sa.app.agent(sa.topic(spec), name=name, concurrency=1)(agent)


def add_batch_agent(
    sa: StreamsApp,
    spec: TopicSpec[Any],
    name: str,
    handle: Callable[[Sequence[Any]], Awaitable[None]],
    max_events: int = 256,
    within_s: float = 0.2,
) -> None:
    """An agent that calls ``handle(messages)`` per batch (up to ``max_events``, or what came in ``within_s``)."""

    async def agent(stream: faust.StreamT[Any]) -> None:
        async for events in stream.take_events(max_events, within=within_s):  # type: ignore[attr-defined]
            messages = [e.message for e in events]
            await _guarded(sa, name, handle(messages), messages)

    sa.app.agent(sa.topic(spec), name=name, concurrency=1)(agent)
