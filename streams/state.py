"""Durable per-job agent state on a Kafka topic, recovered without end offsets.

Each state record is keyed by job id and written to the same partition number as the
input event it follows from, before that input's offset is committed. When a worker is
assigned a partition it appends a unique *marker* record to the state partition and
reads the partition from the start until it meets its own marker: everything before
the marker is the complete state. This avoids ListOffsets "latest", which the embedded
Tansu broker under-reports (Faust table recovery hangs or loses updates there); on real
Kafka it works the same way.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from schedmate.infra.logging import get_logger

__all__ = ["StateStore"]

log = get_logger(__name__)
_MARKER_KEY = b"__schedmate_marker__"


class StateStore:
    """Reads and writes per-key JSON state on one topic; one instance per worker."""

    def __init__(self, bootstrap: str, topic: str, options: dict[str, Any] | None = None) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.options = options or {}
        self._producer: AIOKafkaProducer | None = None
        self._ready: dict[int, asyncio.Future[dict[str, dict[str, Any]]]] = {}
        self._lock = asyncio.Lock()

    async def start(self) -> AIOKafkaProducer:
        """Connect the state producer (idempotent)."""
        async with self._lock:
            if self._producer is None:
                producer = AIOKafkaProducer(
                    bootstrap_servers=self.bootstrap, acks="all", linger_ms=2, max_request_size=8 << 20, **self.options
                )
                await producer.start()
                self._producer = producer
            return self._producer

    async def stop(self) -> None:
        """Flush and close."""
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    async def put_many(self, partition: int, states: dict[str, dict[str, Any]]) -> None:
        """Write states to ``partition`` and wait until the broker stored them."""
        producer = self._producer or await self.start()
        futs = [
            await producer.send(self.topic, json.dumps(v).encode(), key=k.encode(), partition=partition)
            for k, v in states.items()
        ]
        await asyncio.gather(*futs)

    def recover(self, partition: int) -> None:
        """Start recovering ``partition`` in the background (call on assignment)."""
        fut = self._ready.get(partition)
        if fut is None or fut.done():
            self._ready[partition] = asyncio.ensure_future(self._recover(partition))

    def forget(self, partition: int) -> None:
        """Drop a revoked partition's recovery."""
        fut = self._ready.pop(partition, None)
        if fut is not None and not fut.done():
            fut.cancel()

    async def states(self, partition: int) -> dict[str, dict[str, Any]]:
        """The recovered states of ``partition`` (waits for recovery; one hand-out per assignment)."""
        if partition not in self._ready:
            self.recover(partition)
        fut = self._ready[partition]
        return await fut

    async def _recover(self, partition: int, timeout_s: float = 60.0) -> dict[str, dict[str, Any]]:
        producer = self._producer or await self.start()
        marker = uuid.uuid4().hex.encode()
        await (await producer.send(self.topic, marker, key=_MARKER_KEY, partition=partition))
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False, **self.options)
        await consumer.start()
        tp = TopicPartition(self.topic, partition)
        states: dict[str, dict[str, Any]] = {}
        t0 = time.monotonic()
        try:
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            while time.monotonic() - t0 < timeout_s:
                batch = await consumer.getmany(tp, timeout_ms=500)
                for msg in batch.get(tp, []):
                    if msg.key == _MARKER_KEY:
                        if msg.value == marker:
                            log.info("state recovered", topic=self.topic, partition=partition, keys=len(states),
                                     seconds=round(time.monotonic() - t0, 3))  # fmt: skip
                            return states
                        continue
                    if msg.key is not None and msg.value is not None:
                        states[msg.key.decode()] = json.loads(msg.value)
            log.error("state recovery timed out; continuing with what was read", partition=partition)
            return states
        finally:
            await consumer.stop()
