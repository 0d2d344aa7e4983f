"""The diagnose agent end to end on the real broker with real worker processes."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest

from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.jobs_failures import TOPIC as FAILURES
from schedmate.schemas.jobs_metrics import TOPIC as METRICS
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk
from schedmate.schemas.scheduler_actions import TOPIC as ACTIONS
from tests.conftest import WorkerProcs, collect, produce

pytestmark = pytest.mark.integration

PROGRESS = [f"step {i} | loss {1 / i:.4f} | 20.0 ms/step" for i in range(1, 301)]
FAILURE = [
    "Traceback (most recent call last):",
    '  File "/home/me/model.py", line 257, in forward',
    "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    "node-7:2211:2290 [3] NCCL INFO comm 0x55 rank 3 nranks 8 - Abort COMPLETE",
]


def decoded(msgs: list[tuple[int, int, Any, Any]], spec: Any) -> list[Any]:
    """Events of a topic."""
    return [spec.decode(v) for *_, v in msgs]


async def test_failed_job_gets_one_diagnosis_and_one_action(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """A failing job's chunks + its failed event → one jobs.failures and one scheduler.actions event. The job's
    own ECC line names its node (from the started event) but only requeues it; a second job failing the same way
    on that node corroborates it, and the node is drained."""
    workers.start()

    async def fail(job: str, node: str, tail: list[str]) -> tuple[Any, list[Any]]:
        await produce(broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="started", node=node)])
        await produce(broker.bootstrap, CHUNKS, [
            LogChunk(job_id=job, seq=0, first_line=1, lines=PROGRESS),
            LogChunk(job_id=job, seq=1, first_line=301, lines=tail, eof=True),
        ])  # fmt: skip
        await produce(broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="finished", status="failed", exit_code=1)])
        fails = decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: any(
            FAILURES.decode(v).job_id == job for *_, v in m), 90), FAILURES)  # fmt: skip
        acts = decoded(await collect(broker.bootstrap, ACTIONS.name, lambda m: any(
            ACTIONS.decode(v).job_id == job for *_, v in m), 30), ACTIONS)  # fmt: skip
        return next(f for f in fails if f.job_id == job), [a for a in acts if a.job_id == job]

    f, acts = await fail("job-ecc", "node-7", FAILURE)
    await asyncio.sleep(3)  # nothing more should come
    assert len(decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: False, 2), FAILURES)) == 1
    assert (f.first_error_line, f.category, f.infra_component, f.faulty_node) == (
        301,
        "infrastructure",
        "gpu",
        "node-7",
    )
    assert len(acts) == 1 and acts[0].diagnosis_id == f.diagnosis_id
    assert (acts[0].action, acts[0].node) == ("requeue", None)
    assert "drain:uncorroborated" in f.path

    f2, acts2 = await fail("job-ecc-2", "node-7", FAILURE)
    assert f2.faulty_node == "node-7" and "peer-jobs" in f2.path
    assert (acts2[0].action, acts2[0].node) == ("drain_node_and_requeue", "node-7")

    spoof = ["NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", "hostname gpu-node-17",
             "RuntimeError: CUDA error: unspecified launch failure"]  # fmt: skip
    f3, acts3 = await fail("job-spoof", "node-3", spoof)
    assert f3.faulty_node == "node-3" and (acts3[0].action, acts3[0].node) == ("requeue", None)
    f4, acts4 = await fail("job-spoof-2", "node-4", spoof)  # same lie, another node: no peers for gpu-node-17
    assert f4.faulty_node == "node-4" and (acts4[0].action, acts4[0].node) == ("requeue", None)


async def test_worker_restart_keeps_the_failure_tail_and_does_not_repeat(
    broker: EmbeddedBroker, workers: WorkerProcs
) -> None:
    """The worker is SIGKILLed after the job's progress; its successor diagnoses from the persisted tail,
    and a further restart after the diagnosis publishes no second diagnosis."""
    job = "job-restart"
    first = workers.start()
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id=job, seq=0, first_line=1, lines=PROGRESS[:200])])
    await collect(broker.bootstrap, METRICS.name, lambda m: any(METRICS.decode(v).step == 200 for *_, v in m), 90)
    first.send_signal(signal.SIGKILL)
    first.wait()
    second = workers.start()
    await produce(broker.bootstrap, CHUNKS, [
        LogChunk(job_id=job, seq=1, first_line=201, lines=[*PROGRESS[200:], *FAILURE], eof=True),
    ])  # fmt: skip
    await produce(broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="finished", status="failed", exit_code=1)])
    fails = decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: len(m) >= 1, 120), FAILURES)
    assert fails[0].first_error_line == 301 and fails[0].category == "infrastructure"
    await asyncio.sleep(2)  # let the diagnosed mark be committed
    second.send_signal(signal.SIGKILL)
    second.wait()
    workers.start()
    await collect(broker.bootstrap, METRICS.name, lambda m: False, 15)  # the new worker rejoins and reprocesses
    again = decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: False, 3), FAILURES)
    assert len({x.diagnosis_id for x in again}) == 1, "a second, different diagnosis was published"


async def test_fatal_error_then_silence_is_diagnosed_once(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """A job that prints a fatal error and goes quiet is diagnosed without a finished event; the later failed
    event for the same failure publishes nothing new."""
    workers.start(SCHEDMATE_FAILURE_SILENCE_S="2")
    job = "job-hang"
    fatal = ["Traceback (most recent call last):", '  File "/home/me/train.py", line 9, in <module>', "KeyError: 'x'"]
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id=job, seq=0, first_line=1, lines=[*PROGRESS[:50], *fatal])])
    fails = decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: len(m) >= 1, 90), FAILURES)
    assert (fails[0].first_error_line, fails[0].category) == (51, "user_script")
    await produce(broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="finished", status="failed", exit_code=1)])
    await asyncio.sleep(5)
    assert len(decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: False, 2), FAILURES)) == 1


async def test_gpu_samples_corroborate_an_unclear_failure(broker: EmbeddedBroker, workers: WorkerProcs) -> None:
    """An unclear CUDA error becomes a GPU infrastructure failure when the node's NVML samples show Xid 79."""
    from schedmate.schemas.gpu_samples import TOPIC as GPU  # noqa: PLC0415
    from schedmate.schemas.gpu_samples import GpuSample  # noqa: PLC0415

    workers.start()
    job = "job-xid"
    await produce(broker.bootstrap, CHUNKS, [LogChunk(job_id=job, seq=0, first_line=1, lines=PROGRESS[:20])])
    await collect(broker.bootstrap, METRICS.name, lambda m: any(METRICS.decode(v).job_id == job for *_, v in m), 90)
    await produce(broker.bootstrap, GPU, [GpuSample(node="node-9", gpu_index=2, xid_events=[79], ecc_uncorrected=0)])
    await asyncio.sleep(1)
    await produce(broker.bootstrap, CHUNKS, [
        LogChunk(job_id=job, seq=1, first_line=21, lines=["RuntimeError: CUDA error: unspecified launch failure"], eof=True),
    ])  # fmt: skip
    await produce(
        broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="finished", status="failed", exit_code=1, node="node-9")]
    )
    f = decoded(await collect(broker.bootstrap, FAILURES.name, lambda m: len(m) >= 1, 60), FAILURES)[0]
    assert (f.first_error_line, f.category, f.infra_component, f.faulty_node) == (21, "infrastructure", "gpu", "node-9")
    assert "gpu.samples" in f.path and any("Xid 79" in e for e in f.evidence)
    act = decoded(await collect(broker.bootstrap, ACTIONS.name, lambda m: len(m) >= 1, 30), ACTIONS)[0]
    assert (act.action, act.node) == ("drain_node_and_requeue", "node-9")  # the node's own sampler saw the fault


async def test_secrets_reach_no_topic(broker: EmbeddedBroker, workers: WorkerProcs, tmp_path: Any) -> None:
    """A job printing credentials: `logs push` redacts them before publishing; with edge redaction turned off the
    raw log carries them, but the worker still publishes no secret in failures, actions or metrics."""
    from schedmate.connectors.push import push_stream  # noqa: PLC0415
    from schedmate.infra.settings import Settings  # noqa: PLC0415

    workers.start()
    secret_tail = [
        "connecting to postgres://admin:hunter2@db.internal:5432/runs",
        "Traceback (most recent call last):",
        '  File "/home/me/train.py", line 9, in <module>',
        "ValueError: login failed for password=hunter2 (token sk_live_51HxYzAbCdEfGhIjKlMnOp)",
    ]
    log = tmp_path / "job.log"
    log.write_text("\n".join([*PROGRESS[:50], *secret_tail]) + "\n")
    for job, redact in (("job-redacted", True), ("job-raw", False)):
        s = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / job, redact=redact)
        assert await push_stream(s, job, str(log)) == 54
        await produce(broker.bootstrap, EVENTS, [JobEvent(job_id=job, kind="finished", status="failed", exit_code=1)])
    fails = await collect(broker.bootstrap, FAILURES.name, lambda m: len(m) >= 2, 90)
    assert len(fails) == 2
    raw = {j: b"".join(v or b"" for *_, v in await collect(broker.bootstrap, t.name, lambda m: False, 3))
           for j, t in (("chunks", CHUNKS), ("failures", FAILURES), ("actions", ACTIONS), ("metrics", METRICS))}  # fmt: skip
    chunks = [CHUNKS.decode(v) for *_, v in await collect(broker.bootstrap, CHUNKS.name, lambda m: False, 2)]
    by_job = {j: " ".join(x for c in chunks if c.job_id == j for x in c.lines) for j in ("job-redacted", "job-raw")}
    assert "hunter2" not in by_job["job-redacted"] and "[REDACTED]" in by_job["job-redacted"]
    assert "hunter2" in by_job["job-raw"]  # the operator turned edge redaction off for this connector
    for topic in ("failures", "actions", "metrics"):
        assert b"hunter2" not in raw[topic] and b"sk_live_51H" not in raw[topic], topic
    assert b"ValueError" in raw["failures"]
