"""The Faust application: topics bound to schemas, worker settings for Tansu and real Kafka."""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import faust

from schedmate.infra.broker import client_options
from schedmate.infra.logging import get_logger
from schedmate.infra.settings import Settings
from schedmate.schemas import TopicSpec

__all__ = ["StreamsApp", "add_agent", "create_app"]

log = get_logger(__name__)


@dataclass
class StreamsApp:
    """The Faust app and the topics its agents use."""

    app: faust.App
    settings: Settings
    topics: dict[str, faust.TopicT]
    bootstrap: str
    options: dict[str, Any]

    def topic(self, spec: TopicSpec) -> faust.TopicT:  # type: ignore[type-arg]
        """The Faust topic bound to ``spec``."""
        return self.topics[spec.name]


def _credentials(settings: Settings) -> Any:
    if settings.security_protocol == "PLAINTEXT":
        return None
    ctx = None
    if settings.security_protocol in ("SSL", "SASL_SSL"):
        ctx = ssl.create_default_context(cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None)
    if settings.security_protocol.startswith("SASL"):
        return faust.SASLCredentials(
            username=settings.sasl_username,
            password=settings.sasl_password.get_secret_value() if settings.sasl_password else None,
            mechanism=settings.sasl_mechanism or "PLAIN",
            ssl_context=ctx,
        )
    return faust.SSLCredentials(ctx)


def create_app(settings: Settings, bootstrap: str, topics: tuple[TopicSpec, ...]) -> StreamsApp:  # type: ignore[type-arg]
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
        broker_credentials=_credentials(settings),
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


def add_agent(sa: StreamsApp, spec: TopicSpec, name: str, handle: Callable[[Any], Awaitable[None]]) -> None:  # type: ignore[type-arg]
    """An agent that calls ``handle(message)`` per event; an unexpected error stops the worker uncommitted."""

    async def agent(stream: faust.StreamT) -> None:  # type: ignore[type-arg]
        async for event in stream.events():
            try:
                await handle(event.message)
            except Exception as exc:
                log.exception("agent failed; stopping the worker", agent=name)
                await sa.app.crash(exc)
                raise

    sa.app.agent(sa.topic(spec), name=name, concurrency=1)(agent)
