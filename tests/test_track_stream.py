"""The track agent end to end on the real broker with real worker processes."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from schedmate.connectors.publisher import Publisher
from schedmate.connectors.tailer import LogTailer
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas.deadletter import TOPIC as DEAD
from schedmate.schemas.jobs_metrics import TOPIC as METRICS
from schedmate.schemas.jobs_metrics import JobMetrics
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk
from tests.conftest import WorkerProcs, collect, produce

pytestmark = pytest.mark.integration


def metrics_of(msgs: list[tuple[int, int, Any, Any]]) -> list[JobMetrics]:
    """Decoded jobs.metrics events in arrival order per partition."""
    return [METRICS.decode(v) for _, _, _, v in sorted(msgs, key=lambda m: (m[0], m[1]))]


def latest(msgs: list[tuple[int, int, Any, Any]], job: str) -> JobMetrics | None:
    """Latest metrics event of ``job``."""
    evs = [m for m in metrics_of(msgs) if m.job_id == job]
    return evs[-1] if evs else None


def kv_line(step: int, total: int) -> str:
    """A plain key=value progress line."""
    return (
        f"2026-01-01 00:00:00 | INFO | epoch=1/1 step={step}/{total} loss={10 / step:.5f} lr=0.000100 step_time=0.0100s"
    )


async def test_log_file_to_metrics(
    broker: EmbeddedBroker, settings: Settings, workers: WorkerProcs, tmp_path: Path
) -> None:
    """A writer appends to a log file → tailer → worker → jobs.metrics with the latest progress."""
    workers.start()
    log = tmp_path / "job.log"
    log.write_text("")
    async with Publisher(settings) as pub:
        tailer = LogTailer([str(log)], pub, tmp_path / "cp", job_id="job-file", poll_s=0.02)
        task = asyncio.create_task(tailer.run())
        with log.open("a") as fh:
            for step in range(1, 2001):
                fh.write(kv_line(step, 2000) + "\n")
                if step == 200:  # wait until the worker has joined and reported once
                    fh.flush()
                    await collect(broker.bootstrap, METRICS.name, lambda m: latest(m, "job-file") is not None, 60)
                elif step % 200 == 0:
                    fh.flush()
                    await asyncio.sleep(0.6)
        msgs = await collect(
            broker.bootstrap, METRICS.name, lambda m: (x := latest(m, "job-file")) is not None and x.step == 2000, 90
        )
        tailer.stop()
        await task
    final = latest(msgs, "job-file")
    assert final is not None
    assert (final.step, final.total_steps, final.loss, final.step_time_s) == (2000, 2000, 0.005, 0.01)
    assert final.lines_total == 2000 and final.progress_line == 2000
    steps = [m.step for m in metrics_of(msgs)]
    assert len(steps) >= 3 and steps[0] is not None and steps[0] < 2000, f"no live metrics: {steps}"
    assert steps == sorted(steps)


async def test_malformed_message_goes_to_deadletter(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """Bad bytes land in deadletter with the reason and the original bytes; good chunks still flow."""
    workers.start()
    from aiokafka import AIOKafkaProducer  # noqa: PLC0415

    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await p.start()
    bad = [b"{not json", json.dumps({"job_id": "j", "seq": 0, "first_line": 0, "lines": ["x"]}).encode()]
    for b in bad:
        await p.send_and_wait(CHUNKS.name, b, key=b"j-bad")
    await p.stop()
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id="j-good", seq=0, first_line=1, lines=[kv_line(5, 10)])])
    dead = await collect(broker.bootstrap, DEAD.name, lambda m: len(m) >= 2, 60)
    letters = [DEAD.decode(v) for _, _, _, v in dead]
    assert sorted(base64.b64decode(d.value_b64 or "") for d in letters) == sorted(bad)
    assert any("Invalid JSON" in d.reason for d in letters)
    assert any("first_line" in d.reason for d in letters)
    assert all(d.source_topic == "logs.chunks" and d.offset is not None and d.agent == "track" for d in letters)
    msgs = await collect(broker.bootstrap, METRICS.name, lambda m: latest(m, "j-good") is not None, 30)
    assert latest(msgs, "j-good").step == 5  # type: ignore[union-attr]


async def test_two_workers_one_killed_no_chunk_lost_or_double_counted(
    broker: EmbeddedBroker, workers: WorkerProcs
) -> None:
    """Two workers split the partitions; one is SIGKILLed mid-stream; the other takes over from the
    changelogged state: every job's final line count and step are exact."""
    a = workers.start()
    workers.start()
    jobs = [f"job-{i}" for i in range(8)]
    per_job = 1600
    seqs = dict.fromkeys(jobs, 0)
    sent = dict.fromkeys(jobs, 0)

    async def send_round(n_lines: int) -> None:
        batch = []
        for j in jobs:
            start = sent[j] + 1
            lines = [kv_line(s, per_job) for s in range(start, start + n_lines)]
            batch.append(LogChunk(job_id=j, seq=seqs[j], first_line=start, lines=lines))
            seqs[j] += 1
            sent[j] += n_lines
        await produce(broker.bootstrap, CHUNKS, batch)

    def two_workers(m: list[tuple[int, int, Any, Any]]) -> bool:
        return len({x.worker for x in metrics_of(m)}) >= 2

    # first part: keep the stream flowing until both workers have emitted. A worker that joins after the
    # other has consumed everything owns partitions but has nothing to report, so the stream must not stop.
    first: list[tuple[int, int, Any, Any]] = []
    for _ in range(32):  # at most 800 lines per job, about 100 s
        await send_round(25)
        first = await collect(broker.bootstrap, METRICS.name, two_workers, 3)
        if two_workers(first):
            break
    assert two_workers(first), "both workers should own partitions"
    a.send_signal(signal.SIGKILL)
    a.wait()
    while (rest := per_job - sent[jobs[0]]) > 0:
        await send_round(min(100, rest))
        await asyncio.sleep(0.2)
    assert all(v == per_job for v in sent.values())

    def done(m: list[tuple[int, int, Any, Any]]) -> bool:
        return all((x := latest(m, j)) is not None and x.lines_total >= per_job for j in jobs)

    msgs = await collect(broker.bootstrap, METRICS.name, done, 120)
    for j in jobs:
        final = latest(msgs, j)
        assert final is not None, j
        assert final.lines_total == per_job, (j, final.lines_total)
        assert final.step == per_job
