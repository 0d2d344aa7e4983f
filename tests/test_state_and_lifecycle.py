"""Per-job state shared by the track and diagnose agents, its migration, and the worker's runtime lifecycle."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from hypothesis import given
from hypothesis import strategies as st

from schedmate.agents.failures.tail import TAIL_MARGIN, FailureTail
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.schemas.deadletter import TOPIC as DEAD
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.jobs_failures import TOPIC as FAILURES
from schedmate.schemas.jobs_metrics import TOPIC as METRICS
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk
from schedmate.schemas.track_state import TOPIC as STATE
from schedmate.schemas.track_state import JobState
from tests.conftest import WorkerProcs, collect, produce

# A record as workers before schema_version 2 wrote it: one flat object.
LEGACY = {
    "done": {"stdout": 10}, "lines_total": 10, "last_emit": 0.0, "dirty": True,
    "progress": {"latest": {"step": 9.0, "loss": 0.5}, "line": 9}, "eof": False,
    "tail": [[8, "step 8 loss 0.6"], [9, "step 9 loss 0.5"], [10, "RuntimeError: CUDA error: uncorrectable ECC error"]],
    "diagnosed": [], "finished": False, "error": 1, "warning": 0, "last_error": "RuntimeError: CUDA error",
}  # fmt: skip


@given(
    st.lists(
        st.lists(st.tuples(st.text(alphabet="abc", max_size=3), st.booleans()), max_size=80), min_size=1, max_size=12
    )
)
def test_tail_fed_in_chunks_equals_tail_fed_line_by_line(chunks: list[list[tuple[str, bool]]]) -> None:
    """The Metric Tracker hands over a chunk and its last progress line; the tail is the one line-by-line feeding gives."""
    by_line, by_chunk = FailureTail(), FailureTail()
    n = 1
    for chunk in chunks:
        progress = [i for i, (_, p) in enumerate(chunk) if p]
        for i, (text, _) in enumerate(chunk):
            by_line.add(n + i, text, bool(progress) and i == progress[-1])
        by_chunk.extend(n, [t for t, _ in chunk], progress[-1] if progress else None)
        n += len(chunk)
    assert by_chunk.tail == by_line.tail
    assert list(by_chunk.ring) == list(by_line.ring) and len(by_chunk.ring) <= TAIL_MARGIN
    assert by_chunk.lines() == by_line.lines()


def test_legacy_flat_state_is_migrated_into_owned_parts() -> None:
    """A schema-1 flat record loads as the tracker's and the failure handler's parts; the new layout round-trips."""
    s = JobState.of_record("j", json.loads(json.dumps(LEGACY)))
    assert (s.track.done, s.track.lines_total, s.track.error, s.track.progress["line"]) == ({"stdout": 10}, 10, 1, 9)
    assert s.failures.tail[-1] == (10, LEGACY["tail"][-1][1]) and s.failures.finished is False
    again = JobState.of_record("j", json.loads(s.to_bytes()))
    assert again == s and again.schema_version == 2
    with pytest.raises(ValueError, match="newer"):
        JobState.of_record("j", {**json.loads(s.to_bytes()), "schema_version": 3})
    with pytest.raises(TypeError):
        JobState.of_record("j", [1, 2])


def _partition_of(job: str, partitions: int = 4) -> int:
    ps = list(range(partitions))
    return int(DefaultPartitioner()(job.encode(), ps, ps))


@pytest.mark.integration
async def test_worker_resumes_a_job_from_a_legacy_state_record(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """A flat record written by an older worker: counting resumes after its 10 lines, its failure tail diagnoses."""
    job = "job-legacy"
    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await p.start()
    try:
        await p.send_and_wait(STATE.name, json.dumps(LEGACY).encode(), key=job.encode(), partition=_partition_of(job))
    finally:
        await p.stop()
    workers.start()
    lines = ["ValueError: a later, ordinary error", "exiting"]  # lines 11-12; 1-10 were applied before the upgrade
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id=job, seq=1, first_line=11, lines=lines, eof=True)])
    msgs = await collect(
        broker.bootstrap, METRICS.name, lambda m: any(METRICS.decode(v).lines_total >= 12 for *_, v in m), 90
    )
    last = max((METRICS.decode(v) for *_, v in msgs if METRICS.decode(v).job_id == job), key=lambda e: e.lines_total)
    assert last.lines_total == 12, "the restored count (10) was not continued"
    await produce(broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="finished", status="failed", exit_code=1)])
    fails = await collect(broker.bootstrap, FAILURES.name, lambda m: len(m) >= 1, 60)
    f = FAILURES.decode(fails[0][3])
    assert (f.first_error_line, f.category, f.infra_component) == (10, "infrastructure", "gpu"), "tail not restored"


@pytest.mark.integration
async def test_unreadable_state_record_goes_to_deadletter(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """A corrupt track.state record is dead-lettered with the reason and its bytes; the job starts afresh."""
    job, garbage = "job-corrupt", b'{"track": {"lines_total": "many"'
    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await p.start()
    try:
        await p.send_and_wait(STATE.name, garbage, key=job.encode(), partition=_partition_of(job))
    finally:
        await p.stop()
    workers.start(classify=False)
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id=job, seq=0, first_line=1, lines=["step 1 loss 1.0"] * 3)])
    dead = [DEAD.decode(v) for *_, v in await collect(broker.bootstrap, DEAD.name, lambda m: len(m) >= 1, 90)]
    assert len(dead) == 1 and dead[0].source_topic == STATE.name and dead[0].agent == "state"
    assert dead[0].value_bytes() == garbage and "unreadable job state" in dead[0].reason
    msgs = await collect(broker.bootstrap, METRICS.name, lambda m: len(m) >= 1, 60)
    assert METRICS.decode(msgs[-1][3]).lines_total == 3


def _log_events(path: Path) -> list[dict[str, Any]]:
    # the worker's log is one JSON object per line; a line that does not parse fails the test
    return [json.loads(line) for line in path.read_text(errors="replace").splitlines() if line.strip()]


@pytest.mark.integration
async def test_sigterm_stops_every_runtime(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """SIGTERM: the worker drains and commits, then each runtime stops (state producer, GPU view, pools) and it exits 0."""
    proc = workers.start(classify=False)
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id="j", seq=0, first_line=1, lines=["step 1 loss 1.0"])])
    await collect(broker.bootstrap, METRICS.name, lambda m: len(m) >= 1, 90)
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert proc.returncode == 0
    workers.stop_all()
    stopped = {
        e.get("runtime") for e in _log_events(workers.data_dir / "worker-0.log") if e.get("event") == "runtime stopped"
    }
    assert stopped == {"job-states", "gpu-health", "track", "diagnose", "advise", "history"}


async def test_ten_thousand_finished_jobs_leave_bounded_state(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """10,000 short jobs (a log with EOF and a finished event each) through one worker: every one gets its
    metrics, and the worker parks them (compressed, bounded) instead of holding 10,000 jobs' state in memory;
    a parked job that logs again resumes its line numbering (no line counted twice)."""
    proc = workers.start(SCHEDMATE_EVICT_AFTER_S="1")
    n = 10_000
    chunks = [LogChunk(job_id=f"many-{i}", seq=0, first_line=1, lines=[f"step {s} | loss 0.5" for s in range(1, 6)],
                       eof=True) for i in range(n)]  # fmt: skip
    events = [JobEvent(job_id=f"many-{i}", kind="finished", status="completed", exit_code=0) for i in range(n)]
    await produce(broker.bootstrap, CHUNKS, chunks)
    await produce(broker.bootstrap, EVENTS, events)
    seen: set[str] = set()

    def all_reported(m: list[Any]) -> bool:
        seen.update(METRICS.decode(v).job_id for *_, v in m[len(seen) :] if v)
        return len(seen) >= n

    await collect(broker.bootstrap, METRICS.name, all_reported, 300)
    assert len(seen) >= n

    def parked() -> list[dict[str, Any]]:
        text = (workers.data_dir / "worker-0.log").read_text(errors="replace")
        # every line is one JSON object: nothing (a terminal spinner's codes) may be glued to a log line
        return [r for r in (json.loads(x) for x in text.splitlines() if x.strip()) if r.get("event") ==
                "parked quiet jobs"]  # fmt: skip

    # (the worker parks on its own eviction tick: under a loaded machine that can take minutes; the wait ends as soon
    # as all are parked, so the bound only has to be generous)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and sum(r["parked_now"] for r in parked()) < n:
        await asyncio.sleep(2)
    assert sum(r["parked_now"] for r in parked()) >= n
    last = parked()[-1]
    assert last["in_memory"] < 1_000 and last["parked"] >= n - 1_000 and last["dropped"] == 0
    assert last["parked_kib"] < 64 * 1024
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id="many-7", seq=0, first_line=1,
                                                      lines=[f"step {s} | loss 0.5" for s in range(1, 8)])])  # fmt: skip
    again = await collect(broker.bootstrap, METRICS.name, lambda m: any(
        (e := METRICS.decode(v)).job_id == "many-7" and e.lines_total == 7 for *_, v in m), 60)  # fmt: skip
    totals = [e.lines_total for e in (METRICS.decode(v) for *_, v in again) if e.job_id == "many-7"]
    assert totals[-1] == 7, totals  # 5 lines before parking + 2 new ones; the first 5 not counted again
    assert proc.poll() is None
