"""Publishing events: an aiokafka producer that knows the topics' models and keys."""

from __future__ import annotations

import asyncio
from typing import Any, Self

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from schedmate.connectors.redaction import EdgeRedactor
from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import client_options, producer_options, resolve_bootstrap
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.settings import Settings
from schedmate.schemas import Event, TopicSpec

__all__ = ["Publisher"]


class Publisher(AsyncLifecycle):
    """``async with Publisher(settings) as pub: await pub.publish(TOPIC, event)``."""

    def __init__(self, settings: Settings, bootstrap: str | None = None, connect_timeout_s: float = 20.0) -> None:
        self.settings = settings
        self.bootstrap = bootstrap
        self.connect_timeout_s = connect_timeout_s
        self._producer: AIOKafkaProducer | None = None
        self.sent = 0
        self.redactor = EdgeRedactor() if settings.redact else None

    async def start(self) -> Self:
        """Connect (retrying with back-off for ``connect_timeout_s``)."""
        bootstrap = self.bootstrap or resolve_bootstrap(self.settings)
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type(KafkaConnectionError),
                wait=wait_exponential(multiplier=0.2, max=2.0),
                stop=stop_after_delay(self.connect_timeout_s),
                reraise=True,
            ):
                with attempt:
                    producer = AIOKafkaProducer(
                        bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=1 << 20,
                        max_request_size=8 << 20, **client_options(self.settings), **producer_options(self.settings),
                    )  # fmt: skip
                    try:
                        await producer.start()
                    except KafkaError:
                        await producer.stop()
                        raise
                    self._producer = producer
        except KafkaConnectionError as exc:
            raise BrokerError(
                f"cannot reach the Kafka broker at {bootstrap}: start it with `schedmate up`, "
                "or point SCHEDMATE_BROKER at a running cluster"
            ) from exc
        except KafkaError as exc:
            raise BrokerError(
                f"the Kafka broker at {bootstrap} refused this producer ({type(exc).__name__}): check "
                "SCHEDMATE_SASL_USERNAME/SCHEDMATE_SASL_PASSWORD and the principal's ACLs (`schedmate acls`)"
            ) from exc
        return self

    async def publish(self, spec: TopicSpec[Any], event: Event, wait: bool = True) -> asyncio.Future[Any] | None:
        """Send ``event`` keyed by the topic's key (secrets redacted, unless turned off); by default wait until the
        broker stored it. With ``wait=False`` the delivery future is returned: await it to learn whether the
        event was stored (it raises if not)."""
        if self._producer is None:
            raise BrokerError("publisher is not started: use `async with Publisher(...)`")
        if self.redactor is not None:
            event = self.redactor.event(event)
        try:
            fut = await self._producer.send(spec.name, event.to_bytes(), key=spec.key_of(event))
            if wait:
                await fut
        except KafkaError as exc:
            raise BrokerError(f"could not publish to {spec.name}: {exc}") from exc
        self.sent += 1
        return None if wait else fut

    async def flush(self) -> None:
        """Wait for every buffered event."""
        if self._producer is not None:
            await self._producer.flush()

    async def stop(self) -> None:
        """Flush and close."""
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()
