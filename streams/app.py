"""The Faust application: topics bound to schemas, worker settings for Tansu and real Kafka, and agents
that stop the worker (uncommitted) on an unexpected error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import faust

from schedmate.infra.kafka import client_options, faust_credentials
from schedmate.infra.logging import get_logger
from schedmate.infra.settings import Settings
from schedmate.schemas import TopicSpec

__all__ = ["StreamsApp", "add_agent", "add_batch_agent", "create_app"]

log = get_logger(__name__)


@dataclass
class StreamsApp:
    """The Faust app and the topics its agents use."""

    app: faust.App
    settings: Settings
    topics: dict[str, faust.TopicT]
    bootstrap: str
    options: dict[str, Any]

    def topic(self, spec: TopicSpec[Any]) -> faust.TopicT:
        """The Faust topic bound to ``spec``."""
        return self.topics[spec.name]


def create_app(settings: Settings, bootstrap: str, topics: Sequence[TopicSpec[Any]]) -> StreamsApp:
    """A Faust app on ``bootstrap`` with raw-bytes topics (decoding is ours, so bad input reaches deadletter).

    Settings chosen for the embedded Tansu broker (see ENVIRONMENT.md) that are also valid on Kafka:
    short session timeouts (Tansu's joins wait session_timeout/2), one record per produced batch
    (Tansu under-reports end offsets of multi-record batches, which breaks changelog recovery),
    no leader topic, no web server.
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
        topic_replication_factor=1,
        topic_disable_leader=True,
        broker_session_timeout=6,
        broker_heartbeat_interval=1,
        broker_commit_interval=1.0,
        broker_request_timeout=30,
        consumer_auto_offset_reset="earliest",
        producer_max_batch_size=16,
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
    return StreamsApp(app=app, settings=settings, topics=bound, bootstrap=bootstrap, options=client_options(settings))


async def _or_crash(sa: StreamsApp, name: str, step: Awaitable[None]) -> None:
    """Await ``step``; an unexpected error stops the worker before the offset is committed (a supervisor
    restarts it, and it resumes from the committed offsets)."""
    try:
        await step
    except Exception as exc:
        log.exception("agent failed; stopping the worker", agent=name)
        await sa.app.crash(exc)
        raise


def add_agent(sa: StreamsApp, spec: TopicSpec[Any], name: str, handle: Callable[[Any], Awaitable[None]]) -> None:
    """An agent that calls ``handle(message)`` per event."""

    async def agent(stream: faust.StreamT[Any]) -> None:
        async for event in stream.events():
            await _or_crash(sa, name, handle(event.message))

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
            await _or_crash(sa, name, handle([e.message for e in events]))

    sa.app.agent(sa.topic(spec), name=name, concurrency=1)(agent)
