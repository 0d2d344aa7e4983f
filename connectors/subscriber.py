"""Subscribing to SchedMate topics: decoded, validated events (the client a scheduler adapter uses)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any, Self

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaConnectionError
from rich.markup import escape

from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import client_options, resolve_bootstrap
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.settings import Settings
from schedmate.infra.signing import verify
from schedmate.schemas import Event, InvalidEventError, TopicSpec, topic_by_name

__all__ = ["Subscriber", "printable", "watch_topic"]

log = get_logger(__name__)


class Subscriber(AsyncLifecycle):
    """``async with Subscriber(settings, ["jobs.metrics"]) as sub: async for spec, ev in sub: ...``.

    With ``SCHEDMATE_SIGNING_KEY`` set, events on the worker's (signed) topics are yielded only when their
    signature verifies: a forged ``scheduler.actions`` record is dropped and counted in ``forged``.
    Without a group id it reads on its own (no committed offsets); with one it joins
    that consumer group and commits after each event has been yielded and handled.
    """

    def __init__(
        self,
        settings: Settings,
        topics: list[str],
        group_id: str | None = None,
        from_beginning: bool = False,
        bootstrap: str | None = None,
    ) -> None:
        self.settings = settings
        self.specs = {t: topic_by_name(t) for t in topics}
        self.group_id = group_id
        self.from_beginning = from_beginning
        self.bootstrap = bootstrap
        self._consumer: AIOKafkaConsumer | None = None
        self.invalid = 0
        self.forged = 0  # records on signed topics without a valid signature (only counted with a signing key)

    async def start(self) -> Self:
        """Connect and subscribe."""
        bootstrap = self.bootstrap or resolve_bootstrap(self.settings)
        consumer = AIOKafkaConsumer(
            *self.specs, bootstrap_servers=bootstrap, group_id=self.group_id,
            auto_offset_reset="earliest" if self.from_beginning else "latest",
            enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=1000,
            **client_options(self.settings),
        )  # fmt: skip
        try:
            await consumer.start()
        except KafkaConnectionError as exc:
            await consumer.stop()
            raise BrokerError(f"cannot reach the Kafka broker at {bootstrap}: is `schedmate up` running?") from exc
        self._consumer = consumer
        return self

    async def __aiter__(self) -> AsyncIterator[tuple[TopicSpec[Any], Event]]:
        assert self._consumer is not None, "start() the subscriber first"
        key = self.settings.signing_key
        secret = key.get_secret_value().encode() if key is not None else None
        async for msg in self._consumer:
            spec = self.specs[msg.topic]
            if secret is not None and spec.signed and not verify(secret, msg.topic, msg.key, msg.value, msg.headers):
                self.forged += 1
                log.warning("dropping an unsigned or forged event (SCHEDMATE_SIGNING_KEY is set)", topic=msg.topic,
                            partition=msg.partition, offset=msg.offset)  # fmt: skip
                continue
            try:
                event = spec.decode(msg.value)
            except InvalidEventError as exc:
                self.invalid += 1
                log.warning("skipping invalid event", topic=msg.topic, partition=msg.partition,
                            offset=msg.offset, reason=str(exc))  # fmt: skip
                continue
            yield spec, event
            if self.group_id is not None:
                await self._consumer.commit()

    async def stop(self) -> None:
        """Leave the group and close."""
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await consumer.stop()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: control bytes (escape sequences, bells, carriage returns) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def _fmt(event: Event) -> str:
    """One event as rich markup; what the job wrote is escaped (no markup, no control bytes reach the terminal)."""
    d = event.model_dump(exclude={"schema_version"}, exclude_none=True)
    job = d.pop("job_id", "")
    for k in ("ts", "window_start", "window_end", "submitted_at"):
        if isinstance(d.get(k), float):
            d[k] = time.strftime("%H:%M:%S", time.localtime(d[k]))
    body = " ".join(f"{k}={v}" for k, v in d.items() if v not in ([], {}, ""))
    return f"[bold]{escape(printable(str(job)))}[/bold] {escape(printable(body))}"


async def watch_topic(
    settings: Settings,
    topic: str,
    job: str | None,
    from_beginning: bool,
    as_json: bool,
    max_events: int | None,
    timeout: float | None,
) -> int:
    """Print ``topic``'s events until ``max_events``/``timeout``; return how many were printed."""
    from rich.console import Console  # noqa: PLC0415

    console = Console(highlight=False)
    n = 0

    async def _loop() -> None:
        nonlocal n
        async with Subscriber(settings, [topic], from_beginning=from_beginning) as sub:
            async for spec, event in sub:
                if job is not None and getattr(event, "job_id", None) != job:
                    continue
                if as_json:
                    print(json.dumps(event.model_dump(mode="json")), flush=True)
                else:
                    console.print(f"[cyan]{spec.name}[/cyan] {_fmt(event)}")
                n += 1
                if max_events is not None and n >= max_events:
                    return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_loop(), timeout)
    return n
