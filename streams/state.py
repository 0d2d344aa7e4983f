"""Durable per-job agent state on an internal topic, recovered without end offsets.

:class:`StateStore` is the mechanism. Each record is keyed by job id and written to the same
partition number as the input event it follows from, before that input's offset is
committed. When a worker is assigned a partition it appends a unique *marker* record to the
state partition and reads the partition from the start until it meets its own marker:
everything before the marker is the complete state. This avoids ListOffsets "latest", which
the embedded Tansu broker under-reports (Faust table recovery hangs or loses updates there);
on real Kafka it works the same way.

:class:`JobStates` is what agents use: one :class:`~schedmate.schemas.track_state.JobState`
per job, whose parts are owned by different runtimes (the track agent owns ``track``, the
diagnose agent ``failures``). Each owner registers itself; when a job is first seen on a
partition every owner loads its part, and a write always carries every owner's part.

Memory stays bounded however many jobs pass: a job every owner reports done and quiet for
``evict_after_s`` (or quiet for ``evict_idle_s`` whatever its state) is *parked* — its state
compressed in an LRU capped in bytes, the owners' in-memory copies dropped — and restored from
there if it shows up again. Recovered states of jobs not seen yet are parked the same way. A job
pushed out of the LRU keeps its state on the topic (recovered at the next assignment); if it
shows up before that, it starts afresh (logged).
"""

from __future__ import annotations

import asyncio
import json
import resource
import time
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import BaseModel, ValidationError

from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import producer_options
from schedmate.infra.logging import get_logger
from schedmate.schemas import track_state
from schedmate.schemas.track_state import JobState
from schedmate.streams.app import StreamsApp
from schedmate.streams.deadletter import RawMessage, send_dead_letter
from schedmate.streams.runtime import Runtime

__all__ = ["JobStates", "StateOwner", "StateStore"]

log = get_logger(__name__)
_MARKER_KEY = b"__schedmate_marker__"


class StateStore:
    """Reads and writes per-key state records (bytes) on one topic; one instance per worker."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        options: dict[str, Any] | None = None,
        producer_options: dict[str, Any] | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.options = options or {}
        self.producer_options = producer_options or {}
        self._producer: AIOKafkaProducer | None = None
        self._ready: dict[int, asyncio.Future[dict[str, bytes]]] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    async def start(self) -> AIOKafkaProducer:
        """Connect the state producer (idempotent)."""
        async with self._lock:
            if self._closed:
                raise BrokerError(f"the {self.topic} store is stopped")
            if self._producer is None:
                producer = AIOKafkaProducer(
                    bootstrap_servers=self.bootstrap, acks="all", linger_ms=2, max_request_size=8 << 20,
                    **self.options, **self.producer_options,
                )  # fmt: skip
                await producer.start()
                self._producer = producer
            return self._producer

    async def stop(self) -> None:
        """Cancel recoveries, flush and close (later writes are refused)."""
        self._closed = True
        for p in list(self._ready):
            self.forget(p)
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    async def put_many(self, partition: int, states: dict[str, bytes]) -> None:
        """Write records to ``partition`` and wait until the broker stored them."""
        producer = self._producer or await self.start()
        futs = [await producer.send(self.topic, v, key=k.encode(), partition=partition) for k, v in states.items()]
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

    async def states(self, partition: int) -> dict[str, bytes]:
        """The recovered states of ``partition`` (waits for recovery; one hand-out per assignment)."""
        if partition not in self._ready:
            self.recover(partition)
        fut = self._ready[partition]
        return await fut

    async def _recover(self, partition: int, timeout_s: float = 60.0) -> dict[str, bytes]:
        producer = self._producer or await self.start()
        marker = uuid.uuid4().hex.encode()
        await (await producer.send(self.topic, marker, key=_MARKER_KEY, partition=partition))
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False, **self.options)
        await consumer.start()
        tp = TopicPartition(self.topic, partition)
        states: dict[str, bytes] = {}
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
                        states[msg.key.decode()] = msg.value
            log.error("state recovery timed out; continuing with what was read", partition=partition)
            return states
        finally:
            await consumer.stop()


class StateOwner(Protocol):
    """A runtime that owns one part (a field) of every job's :class:`JobState`."""

    part: str

    def restore(self, job_id: str, state: JobState | None) -> None:
        """Load the job's part (``state`` None: a job new to this partition). Called once per job."""
        ...

    def dump(self, job_id: str) -> BaseModel:
        """The job's part as it is now."""
        ...

    def forget(self, job_id: str) -> None:
        """Drop the job (its partition moved to another worker, or it was parked)."""
        ...

    def quiet(self, job_id: str) -> tuple[float, bool]:
        """(time of the job's last activity for this owner, whether this owner is done with it)."""
        ...


class JobStates(Runtime):
    """Per-job state of this worker's partitions, shared by the runtimes that own its parts."""

    name = "job-states"

    def __init__(self, sa: StreamsApp) -> None:
        super().__init__()
        self.sa = sa
        self.store = StateStore(sa.bootstrap, track_state.TOPIC.name, sa.options, producer_options(sa.settings))
        self._owners: list[StateOwner] = []
        self._partition_of: dict[str, int] = {}
        self._ready: set[int] = set()  # partitions whose states are recovered
        self._parked: OrderedDict[str, tuple[int, bytes]] = OrderedDict()  # job → (partition, zlib'd state)
        self._parked_bytes = 0
        self.max_parked_bytes = sa.settings.parked_state_mb * 1024 * 1024
        self.evict_after_s = sa.settings.evict_after_s
        self.evict_idle_s = sa.settings.evict_idle_s
        self.evicted = 0
        self.dropped = 0  # parked states pushed out of the LRU

    def register(self, owner: StateOwner) -> None:
        """Add the owner of one part."""
        self._owners.append(owner)

    async def on_stop(self) -> None:
        await self.store.stop()

    async def ensure(self, partition: int) -> None:
        """Wait until ``partition``'s states are recovered (once per assignment); unreadable records go to
        deadletter and their jobs start afresh."""
        if partition not in self._ready:
            recovered = await self.store.states(partition)
            if partition in self._ready:
                return
            self._ready.add(partition)
            for job_id, raw in recovered.items():
                if job_id in self._partition_of:
                    continue
                try:
                    state = JobState.of_record(job_id, json.loads(raw))
                except (ValueError, TypeError, ValidationError) as exc:
                    record = RawMessage(self.store.topic, partition, None, job_id.encode(), raw)
                    reason = f"unreadable job state, the job starts afresh: {exc}"
                    await send_dead_letter(self.sa, record, reason, type(exc).__name__, agent="state")
                    continue
                self._park(job_id, partition, state.to_bytes())

    def partition_of(self, job_id: str) -> int | None:
        """The partition ``job_id`` is tracked in, if known here."""
        return self._partition_of.get(job_id)

    def job(self, job_id: str, partition: int) -> bool:
        """Make ``job_id`` known (restoring every part on first sight; :meth:`ensure` first); True if new here."""
        if job_id in self._partition_of:
            return False
        self._partition_of[job_id] = partition
        state = self._unpark(job_id, partition)
        for owner in self._owners:
            owner.restore(job_id, state)
        if state is not None:
            log.info("job state restored", job_id=job_id, partition=partition, lines_total=state.track.lines_total)
        return True

    def state_of(self, job_id: str) -> JobState:
        """Every part of ``job_id``'s state as it is now."""
        return JobState.model_validate({"job_id": job_id, **{o.part: o.dump(job_id) for o in self._owners}})

    async def persist(self, job_ids: Iterable[str]) -> None:
        """Write the jobs' states (grouped by partition) and wait until the broker stored them."""
        by_partition: dict[int, dict[str, bytes]] = {}
        for job_id in job_ids:
            by_partition.setdefault(self._partition_of[job_id], {})[job_id] = self.state_of(job_id).to_bytes()
        await asyncio.gather(*(self.store.put_many(p, states) for p, states in by_partition.items()))

    # -- parking: bounded memory ----------------------------------------------------------------

    def _park(self, job_id: str, partition: int, state: bytes) -> None:
        packed = zlib.compress(state, 3)
        old = self._parked.pop(job_id, None)
        if old is not None:
            self._parked_bytes -= len(old[1])
        self._parked[job_id] = (partition, packed)
        self._parked_bytes += len(packed)
        while self._parked_bytes > self.max_parked_bytes and self._parked:
            _, (_, dropped) = self._parked.popitem(last=False)
            self._parked_bytes -= len(dropped)
            self.dropped += 1

    def _unpark(self, job_id: str, partition: int) -> JobState | None:
        parked = self._parked.pop(job_id, None)
        if parked is None:
            return None
        self._parked_bytes -= len(parked[1])
        if parked[0] != partition:
            return None
        return JobState.of_record(job_id, json.loads(zlib.decompress(parked[1])))

    def evict(self, now: float | None = None) -> int:
        """Park every job that all owners are done with and that has been quiet long enough; return how many."""
        now = time.time() if now is None else now
        out = 0
        for job_id, partition in list(self._partition_of.items()):
            quiet = [o.quiet(job_id) for o in self._owners]
            last = max((t for t, _ in quiet), default=0.0)
            done = all(d for _, d in quiet)
            if (done and now - last >= self.evict_after_s) or now - last >= self.evict_idle_s:
                self._park(job_id, partition, self.state_of(job_id).to_bytes())
                del self._partition_of[job_id]
                for owner in self._owners:
                    owner.forget(job_id)
                out += 1
        self.evicted += out
        if out:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            log.info("parked quiet jobs", parked_now=out, in_memory=len(self._partition_of), parked=len(self._parked),
                     parked_kib=self._parked_bytes // 1024, dropped=self.dropped, peak_rss_mb=rss)  # fmt: skip
        return out

    @property
    def in_memory(self) -> int:
        """Jobs whose state the owners hold in memory."""
        return len(self._partition_of)

    def on_assigned(self, partitions: set[int]) -> None:
        """Start recovering the state of newly assigned partitions."""
        for p in partitions:
            self._ready.discard(p)
            self.store.recover(p)

    def on_revoked(self, partitions: set[int]) -> None:
        """Forget jobs whose partitions moved away (their new owner recovers them)."""
        for job_id in [j for j, p in self._partition_of.items() if p in partitions]:
            del self._partition_of[job_id]
            for owner in self._owners:
                owner.forget(job_id)
        for job_id in [j for j, (p, _) in self._parked.items() if p in partitions]:
            self._parked_bytes -= len(self._parked.pop(job_id)[1])
        for p in partitions:
            self._ready.discard(p)
            self.store.forget(p)
