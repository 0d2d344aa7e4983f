"""Fault tolerance on a real Apache Kafka: a 3-node KRaft cluster (replication 3, min.insync.replicas 2) assembled
from Maven Central jars, idempotent producers, a broker killed mid-stream, a worker killed and one added.

Figures (lines sent/received, duplicates, seconds to recover) are printed for the record (`pytest -s`).
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from schedmate.connectors.publisher import Publisher
from schedmate.infra.kafka import ensure_topics
from schedmate.infra.run.kafka_cluster import KafkaCluster
from schedmate.infra.settings import Settings
from schedmate.schemas.jobs_estimates import TOPIC as ESTIMATES
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.jobs_failures import TOPIC as FAILURES
from schedmate.schemas.jobs_metrics import TOPIC as METRICS
from schedmate.schemas.jobs_submitted import TOPIC as SUBMITTED
from schedmate.schemas.jobs_submitted import JobSubmitted
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk
from tests.conftest import WorkerProcs, collect

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None, reason="needs a JVM and Maven"),
]
REAL = {"SCHEDMATE_REPLICATION_FACTOR": "3", "SCHEDMATE_IDEMPOTENCE": "true"}
FAILING = [
    "Traceback (most recent call last):",
    '  File "/home/me/train.py", line 9, in <module>',
    "KeyError: 'missing_column'",
]


@pytest.fixture
async def kafka(tmp_path: Path) -> AsyncIterator[KafkaCluster]:
    """A fresh 3-node cluster with SchedMate's topics (replication 3)."""
    async with KafkaCluster(tmp_path / "kafka") as k:
        await ensure_topics(k.bootstrap, 4, replication_factor=3)
        yield k


def _setup(kafka: KafkaCluster, tmp_path: Path) -> tuple[WorkerProcs, Settings]:
    """Worker processes and connector settings for the cluster (replication 3, idempotent producers)."""
    data = tmp_path / "data"
    data.mkdir()
    settings = Settings(broker=f"kafka://{kafka.bootstrap}", data_dir=data, replication_factor=3, idempotence=True)
    return WorkerProcs(kafka.bootstrap, data), settings


def _latest(msgs: list[tuple[int, int, Any, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for *_, v in msgs:
        e = METRICS.decode(v)
        if e.job_id not in out or e.lines_total >= out[e.job_id].lines_total:
            out[e.job_id] = e
    return out


class Stream:
    """Sends jobs' log lines round by round through the real (idempotent) Publisher."""

    def __init__(self, pub: Publisher, jobs: list[str]) -> None:
        self.pub = pub
        self.jobs = jobs
        self.sent = dict.fromkeys(jobs, 0)
        self.seq = dict.fromkeys(jobs, 0)

    async def round(self, n: int) -> None:
        for j in self.jobs:
            first = self.sent[j] + 1
            lines = [f"step {s} | loss {1 / s:.4f} | 20.0 ms/step" for s in range(first, first + n)]
            await self.pub.publish(CHUNKS, LogChunk(job_id=j, seq=self.seq[j], first_line=first, lines=lines))
            self.seq[j] += 1
            self.sent[j] += n


async def _chunk_duplicates(bootstrap: str) -> tuple[int, int]:
    """(records in logs.chunks, records whose (job, seq) was already seen)."""
    msgs = await collect(bootstrap, CHUNKS.name, lambda m: False, 5)
    seen: set[tuple[str, int]] = set()
    dup = 0
    for *_, v in msgs:
        c = CHUNKS.decode(v)
        dup += (c.job_id, c.seq) in seen
        seen.add((c.job_id, c.seq))
    return len(msgs), dup


async def test_a_broker_killed_mid_stream_loses_nothing(kafka: KafkaCluster, tmp_path: Path) -> None:
    """Node 2 is SIGKILLed while 8 jobs stream (and others are submitted and fail); the producers (acks=all,
    idempotent) and the worker ride it out: every line counted once, every failure and estimate published."""
    workers, settings = _setup(kafka, tmp_path)
    try:
        workers.start(**REAL)
        jobs = [f"kjob-{i}" for i in range(8)]
        async with Publisher(settings) as pub:
            stream = Stream(pub, jobs)
            for _ in range(5):
                await stream.round(50)
            await collect(kafka.bootstrap, METRICS.name, lambda m: len(_latest(m)) == len(jobs), 120)
            killed_at = time.monotonic()
            kafka.kill(2)
            for i in range(10):
                await stream.round(50)
                await pub.publish(SUBMITTED, JobSubmitted(job_id=f"ksub-{i}", user="u", command=["python", "t.py"]))
            for j in ("kfail-a", "kfail-b"):
                await pub.publish(CHUNKS, LogChunk(job_id=j, seq=0, first_line=1, lines=FAILING, eof=True))
                await pub.publish(EVENTS, JobEvent(job_id=j, kind="finished", status="failed", exit_code=1))
            want = dict(stream.sent)

            def caught_up(m: list[Any]) -> bool:
                latest = _latest(m)
                return all(j in latest and latest[j].lines_total >= want[j] for j in jobs)

            msgs = await collect(kafka.bootstrap, METRICS.name, caught_up, 180)
            recovered_s = time.monotonic() - killed_at
            await kafka.restart(2)
            for _ in range(3):
                await stream.round(50)
        final = await collect(kafka.bootstrap, METRICS.name, lambda m: all(
            _latest(m)[j].lines_total >= stream.sent[j] for j in jobs if j in _latest(m)) and len(_latest(m)) >= 8, 120)  # fmt: skip
        latest = _latest(final)
        assert {j: latest[j].lines_total for j in jobs} == stream.sent, "lines lost or counted twice"
        fails = [
            FAILURES.decode(v) for *_, v in await collect(kafka.bootstrap, FAILURES.name, lambda m: len(m) >= 2, 90)
        ]
        assert {f.job_id for f in fails} == {"kfail-a", "kfail-b"} and len({f.diagnosis_id for f in fails}) == 2
        est = await collect(
            kafka.bootstrap, ESTIMATES.name, lambda m: len({ESTIMATES.decode(v).job_id for *_, v in m}) >= 10, 120
        )
        assert len({ESTIMATES.decode(v).job_id for *_, v in est}) == 10
        records, dup = await _chunk_duplicates(kafka.bootstrap)
        assert dup == 0
        print(f"\nbroker killed: lines sent {sum(stream.sent.values())}, counted {sum(latest[j].lines_total for j in jobs)},"
              f" chunk records {records}, duplicate records {dup}, caught up {recovered_s:.1f} s after the kill")  # fmt: skip
        assert msgs
    finally:
        workers.stop_all()


async def test_a_worker_killed_and_a_worker_added_rebalance_exactly(kafka: KafkaCluster, tmp_path: Path) -> None:
    """Two workers; one is SIGKILLed mid-stream and a third joins: every job's line count is exact."""
    workers, settings = _setup(kafka, tmp_path)
    try:
        a = workers.start(**REAL)
        workers.start(**REAL)
        jobs = [f"wjob-{i}" for i in range(8)]
        async with Publisher(settings) as pub:
            stream = Stream(pub, jobs)
            # Metrics are emitted on progress, so keep streaming until both workers own partitions and report
            # (the second worker may join after the first has drained everything sent so far).
            two_workers = lambda m: len({METRICS.decode(v).worker for *_, v in m}) >= 2  # noqa: E731
            deadline = time.monotonic() + 120
            first: list[tuple[int, int, Any, Any]] = []
            while time.monotonic() < deadline and not two_workers(first):
                await stream.round(100)
                await asyncio.sleep(0.5)
                first = await collect(kafka.bootstrap, METRICS.name, two_workers, 5)
            assert two_workers(first), "the second worker never got partitions"
            killed_at = time.monotonic()
            a.send_signal(signal.SIGKILL)
            a.wait()
            for _ in range(3):
                await stream.round(100)
            workers.start(**REAL)
            for _ in range(3):
                await stream.round(100)
                await asyncio.sleep(0.5)
        msgs = await collect(kafka.bootstrap, METRICS.name, lambda m: len(_latest(m)) >= 8 and all(
            _latest(m)[j].lines_total >= stream.sent[j] for j in jobs), 180)  # fmt: skip
        recovered_s = time.monotonic() - killed_at
        latest = _latest(msgs)
        assert {j: latest[j].lines_total for j in jobs} == stream.sent
        assert all(latest[j].step == stream.sent[j] for j in jobs)
        print(f"\nworker killed + added: lines sent {sum(stream.sent.values())}, counted "
              f"{sum(latest[j].lines_total for j in jobs)}, caught up {recovered_s:.1f} s after the kill")  # fmt: skip
    finally:
        workers.stop_all()
