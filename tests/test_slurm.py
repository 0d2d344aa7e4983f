"""The Slurm source and sink against a real Slurm cluster (slurmctld + 3 slurmd with fake GPUs) started by the tests,
a real broker and real worker processes. Run alone with `pytest -m slurm`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from schedmate.connectors.slurm.sink import SlurmSink
from schedmate.connectors.slurm.source import SlurmSource
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.run.slurm_cluster import SlurmCluster, SlurmError, ensure_slurm
from schedmate.infra.settings import Settings
from schedmate.schemas.gpu_samples import TOPIC as GPU
from schedmate.schemas.gpu_samples import GpuSample
from schedmate.schemas.jobs_estimates import TOPIC as ESTIMATES
from schedmate.schemas.jobs_estimates import JobEstimate
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_metrics import TOPIC as METRICS
from schedmate.schemas.jobs_submitted import TOPIC as SUBMITTED
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.scheduler_actions import TOPIC as ACTIONS
from schedmate.schemas.scheduler_actions import SchedulerAction
from tests.conftest import WorkerProcs, collect, produce

pytestmark = [pytest.mark.slurm, pytest.mark.integration]


@pytest.fixture
def slurm(tmp_path: Path) -> Iterator[SlurmCluster]:
    """A fresh 3-node Slurm cluster (4 fake GPUs per node), stopped at the end (its jobs cancelled)."""
    try:
        ensure_slurm(install=True)
    except SlurmError as exc:  # pragma: no cover - only where packages cannot be installed
        pytest.skip(str(exc))
    if os.geteuid() != 0:  # pragma: no cover
        pytest.skip("the local Slurm cluster's daemons run as root")
    cluster = SlurmCluster(tmp_path / "slurm", nodes=3, gpus_per_node=4)
    cluster.start_sync()
    try:
        yield cluster
    finally:
        cluster.teardown()


@contextlib.asynccontextmanager
async def running(component: Any) -> AsyncIterator[Any]:
    """Start a source or sink, run it in the background, stop it at the end."""
    await component.start()
    task = asyncio.create_task(component.run())
    try:
        yield component
    finally:
        component.request_stop() if hasattr(component, "request_stop") else None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        await component.stop()


def sbatch(cluster: SlurmCluster, workdir: Path, script: str, *opts: str) -> str:
    """Submit ``script`` (written to workdir/train.sh) and return the Slurm job id."""
    path = workdir / "train.sh"
    path.write_text("#!/bin/bash\n" + script)
    path.chmod(0o755)
    out = cluster.command("sbatch", "--parsable", "-D", str(workdir), "-o", str(workdir / "out-%j.log"), *opts,
                          str(path))  # fmt: skip
    return out.stdout.strip().split(";")[0]


def job_state(cluster: SlurmCluster, sid: str) -> dict[str, str]:
    """``scontrol show job`` as a dict."""
    from schedmate.connectors.slurm.commands import parse_kv  # noqa: PLC0415

    return parse_kv(cluster.command("scontrol", "show", "job", "-o", sid).stdout)


def decoded(msgs: list[tuple[int, int, Any, Any]], spec: Any) -> list[Any]:
    """Events of a topic."""
    return [spec.decode(v) for *_, v in msgs]


PROGRESS = 'for i in $(seq 1 {n}); do echo "step $i/{n} | loss 0.$((1000 - i)) | 20.0 ms/step"; sleep {pause}; done\n'


async def test_jobs_progress_reaches_jobs_metrics_and_a_gpu_failure_drains_the_node_and_reruns_elsewhere(
    broker: EmbeddedBroker, workers: WorkerProcs, slurm: SlurmCluster, tmp_path: Path
) -> None:
    """An sbatch job printing progress → jobs.submitted, started (node list from Slurm), logs.chunks and live
    jobs.metrics. A job that dies on node1 with a GPU ECC error while node1's NVML sampler reports Xid 48 → a
    diagnosis → the sink drains node1 (Reason names the diagnosis) and requeues the job excluding it → it reruns on
    another node and completes; the source publishes the failed attempt and the second start and end."""
    settings = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "conn")
    workers.start()
    work = tmp_path / "proj"
    work.mkdir()
    async with running(SlurmSource(settings, slurm.env, poll_s=0.5)), running(SlurmSink(settings, slurm.env)) as sink:
        sid = sbatch(slurm, work, PROGRESS.format(n=60, pause=0.1), "--gres=gpu:2", "-J", "progress")
        key = f"slurm-{sid}"
        metrics = decoded(
            await collect(
                broker.bootstrap,
                METRICS.name,
                lambda m: any(METRICS.decode(v).job_id == key and (METRICS.decode(v).step or 0) >= 10 for *_, v in m),
                120,
            ),
            METRICS,
        )
        assert any(m.job_id == key and m.total_steps == 60 for m in metrics)
        subs = [s for s in decoded(await collect(broker.bootstrap, SUBMITTED.name, lambda m: len(m) >= 1, 30),
                                   SUBMITTED) if s.job_id == key]  # fmt: skip
        assert subs and subs[0].num_gpus == 2 and subs[0].workdir == str(work) and subs[0].command == ["train.sh"]

        bad = work / "bad"
        bad.mkdir()
        script = ("sleep 4\n" + PROGRESS.format(n=30, pause=0.05) + 'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then\n'
                  '  echo "Traceback (most recent call last):"\n'
                  '  echo "  File \\"/home/me/model.py\\", line 257, in forward"\n'
                  '  echo "RuntimeError: CUDA error: uncorrectable ECC error encountered"\n  exit 1\nfi\n'
                  'echo done\n')  # fmt: skip
        fid = sbatch(slurm, bad, script, "--gres=gpu:1", "--requeue")
        fkey = f"slurm-{fid}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and job_state(slurm, fid).get("JobState") != "RUNNING":
            await asyncio.sleep(0.2)
        node_a = job_state(slurm, fid)["NodeList"]
        await collect(broker.bootstrap, EVENTS.name, lambda m: any(EVENTS.decode(v).job_id == fkey for *_, v in m), 30)
        await asyncio.sleep(1.0)  # node A's NVML sampler reports the Xid while the job runs
        await produce(broker.bootstrap, GPU, [GpuSample(node=node_a, gpu_index=0, xid_events=[48])])
        acts = decoded(await collect(broker.bootstrap, ACTIONS.name, lambda m: any(
            ACTIONS.decode(v).job_id == fkey for *_, v in m), 120), ACTIONS)  # fmt: skip
        act = next(a for a in acts if a.job_id == fkey)
        assert (act.action, act.node) == ("drain_node_and_requeue", node_a)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and job_state(slurm, fid).get("JobState") != "COMPLETED":
            await asyncio.sleep(0.5)
        final = job_state(slurm, fid)
        assert final.get("JobState") == "COMPLETED" and final.get("NodeList") != node_a, final
        assert node_a in final.get("ExcNodeList", "")
        drained = slurm.command("scontrol", "show", "node", node_a).stdout
        assert "DRAIN" in drained and (act.diagnosis_id or "") in drained
        assert any(a.what == "drain_node_and_requeue" and not a.refused for a in sink.log)
        events = [e for e in decoded(await collect(broker.bootstrap, EVENTS.name, lambda m: sum(
            EVENTS.decode(v).job_id == fkey for *_, v in m) >= 4, 60), EVENTS) if e.job_id == fkey]  # fmt: skip
        kinds = [(e.kind, e.status, e.node) for e in events]
        assert kinds[:2] == [("started", None, node_a), ("finished", "failed", node_a)]
        assert kinds[2][0] == "started" and kinds[2][2] != node_a and kinds[3][:2] == ("finished", "completed")


async def test_a_log_line_cannot_make_the_sink_drain_a_node_outside_the_allocation(
    broker: EmbeddedBroker, slurm: SlurmCluster, tmp_path: Path
) -> None:
    """An action naming a node the job never ran on (as a job's own output might claim) is refused; dry-run only
    reports; an action applied twice (redelivered) is applied once; a job requeued as often as allowed is held
    (with a notification) instead of requeued again."""
    settings = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "conn")
    work = tmp_path / "w"
    work.mkdir()
    sid = sbatch(slurm, work, "exit 3\n", "-w", "node2")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and job_state(slurm, sid).get("JobState") != "FAILED":
        await asyncio.sleep(0.3)
    sink = SlurmSink(settings, slurm.env, state_dir=tmp_path / "sink")
    sink.dir.mkdir(parents=True)
    spoof = SchedulerAction(job_id=f"slurm-{sid}", action="drain_node_and_requeue", node="node3", diagnosis_id="d1")
    got = await sink.apply_action(spoof)
    assert got is not None and got.refused and "not in the job's allocation" in got.refused and not got.commands
    assert "DRAIN" not in slurm.command("scontrol", "show", "node", "node3").stdout
    dry = SlurmSink(settings, slurm.env, dry_run=True, state_dir=tmp_path / "dry")
    dry.dir.mkdir(parents=True)
    real = SchedulerAction(job_id=f"slurm-{sid}", action="drain_node_and_requeue", node="node2", diagnosis_id="d2")
    plan = await dry.apply_action(real)
    assert plan is not None and ["scontrol", "requeuehold", sid] in plan.commands
    assert "DRAIN" not in slurm.command("scontrol", "show", "node", "node2").stdout  # dry: nothing done
    first = await sink.apply_action(real)
    again = await sink.apply_action(real)
    assert first is not None and not first.refused and again is not None and again.refused == "already applied"
    assert "DRAIN" in slurm.command("scontrol", "show", "node", "node2").stdout
    other = await sink.apply_action(SchedulerAction(job_id="job-elsewhere", action="requeue"))
    assert other is None  # not this cluster's job
    assert job_state(slurm, sid).get("Restarts") == "1"  # requeued once (excluding node2)
    strict = SlurmSink(settings, slurm.env, max_requeues=1, state_dir=tmp_path / "strict")
    strict.dir.mkdir(parents=True)
    held = await strict.apply_action(SchedulerAction(job_id=f"slurm-{sid}", action="requeue", diagnosis_id="d3"))
    assert held is not None and held.what.startswith("hold") and ["scontrol", "hold", sid] in held.commands
    state = job_state(slurm, sid)
    assert state.get("JobState") == "PENDING" and state.get("Priority") == "0"  # held: it will not start
    assert json.loads((tmp_path / "strict" / "notifications.jsonl").read_text())["diagnosis_id"] == "d3"


async def _start_order(slurm: SlurmCluster, broker: EmbeddedBroker, tmp_path: Path, sink_on: bool) -> list[str]:
    settings = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / f"conn-{sink_on}")
    work = tmp_path / f"order-{sink_on}"
    work.mkdir()
    whole = ("-N", str(len(slurm.nodes)), "--exclusive")  # each job takes the whole cluster: one at a time
    blocker = sbatch(slurm, work, "sleep 60\n", *whole)
    time.sleep(1)
    jobs = [sbatch(slurm, work, "date +%s.%N > start-$SLURM_JOB_ID; sleep 1\n", *whole) for _ in range(4)]
    p50 = dict(zip(jobs, [7200.0, 60.0, 86400.0, 600.0], strict=True))  # the Advisor's estimates
    await produce(broker.bootstrap, ESTIMATES, [JobEstimate(job_id=f"slurm-{j}", duration_p50_s=p50[j], method="similar",
                                                            confidence=0.9) for j in jobs])  # fmt: skip
    if sink_on:
        async with running(SlurmSink(settings, slurm.env, actions=False, state_dir=tmp_path / "s")):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                nice = slurm.command("squeue", "-h", "-o", "%i %y").stdout.split("\n")
                if sum(1 for line in nice if line.split() and line.split()[0] in jobs and line.split()[1] != "0") >= 4:
                    break
                await asyncio.sleep(0.3)
    slurm.command("scancel", blocker)
    deadline = time.monotonic() + 60

    def stamped(j: str) -> bool:
        f = work / f"start-{j}"
        return f.exists() and f.read_text().endswith("\n")

    while time.monotonic() < deadline and not all(stamped(j) for j in jobs):
        await asyncio.sleep(0.3)
    started = {j: float((work / f"start-{j}").read_text()) for j in jobs}
    return [f"{p50[j]:.0f}" for j in sorted(jobs, key=lambda j: started[j])]


async def test_pending_jobs_start_shortest_first_with_the_sink_and_fifo_without(
    broker: EmbeddedBroker, slurm: SlurmCluster, tmp_path: Path
) -> None:
    """Four pending jobs with estimates 2 h, 1 min, 1 day, 10 min wait behind jobs filling every node; with the
    sink on they start 1 min, 10 min, 2 h, 1 day (Nice from the estimates; running jobs untouched); off, in
    submission order."""
    on = await _start_order(slurm, broker, tmp_path, sink_on=True)
    assert on == ["60", "600", "7200", "86400"]
    off = await _start_order(slurm, broker, tmp_path, sink_on=False)
    assert off == ["7200", "60", "86400", "600"]


async def test_the_source_restarted_mid_run_loses_no_event_and_no_line(
    broker: EmbeddedBroker, slurm: SlurmCluster, tmp_path: Path
) -> None:
    """While a job prints 400 lines, the controller is restarted under the running source (an outage it polls
    through), then the source process is SIGKILLed; a second job is submitted and ends while it is down.
    Restarted, it publishes every line of both jobs (each line number once after de-duplication, none missing)
    and each job's submitted, started and finished event exactly once."""
    env = {**slurm.env, "SCHEDMATE_BROKER": f"kafka://{broker.bootstrap}", "SCHEDMATE_DATA_DIR": str(tmp_path / "d")}
    cmd = [sys.executable, "-m", "schedmate.infra.cli", "slurm", "source", "--poll", "0.5"]
    work = tmp_path / "r"
    work.mkdir()
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        a = sbatch(slurm, work, 'for i in $(seq 1 400); do echo "line $i"; sleep 0.015; done\n')
        await asyncio.sleep(1.5)
        await asyncio.to_thread(slurm.restart_controller)  # slurmctld down and up again; its state survives
        await asyncio.sleep(1.0)
        assert first.poll() is None  # the source lived through the outage
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        b = sbatch(slurm, work, 'for i in $(seq 1 50); do echo "line $i"; done\n')
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and {job_state(slurm, x).get("JobState") for x in (a, b)} != {"COMPLETED"}:
            await asyncio.sleep(0.5)
        second = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            keys = {f"slurm-{a}": 400, f"slurm-{b}": 50}

            def done(msgs: list[Any]) -> bool:
                seen: dict[str, set[int]] = {k: set() for k in keys}
                for *_, v in msgs:
                    c = CHUNKS.decode(v)
                    if c.job_id in seen:
                        seen[c.job_id].update(range(c.first_line, c.first_line + len(c.lines)))
                return all(len(seen[k]) >= n for k, n in keys.items())

            chunks = decoded(await collect(broker.bootstrap, CHUNKS.name, done, 90), CHUNKS)
            events = list(decoded(await collect(broker.bootstrap, EVENTS.name, lambda m: sum(
                EVENTS.decode(v).kind == "finished" for *_, v in m) >= 2, 60), EVENTS))  # fmt: skip
            subs = decoded(await collect(broker.bootstrap, SUBMITTED.name, lambda m: len(m) >= 2, 30), SUBMITTED)
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(20)
    finally:
        if first.poll() is None:
            first.kill()
    for key, n in keys.items():
        lines: dict[int, str] = {}
        for c in chunks:
            if c.job_id == key:
                for i, text in enumerate(c.lines, start=c.first_line):
                    assert lines.setdefault(i, text) == text  # a resent line is the same line
        assert sorted(lines) == list(range(1, n + 1)) and lines[n] == f"line {n}"
        assert sorted((e.kind, e.status) for e in events if e.job_id == key) == [("finished", "completed"),
                                                                                 ("started", None)]  # fmt: skip
        assert sum(s.job_id == key for s in subs) == 1
    assert json.loads((tmp_path / "d" / "slurm" / "source.json").read_text())["jobs"][a]["finished"]


async def test_demo_on_slurm_runs_the_jobs_through_the_source_and_the_sink(tmp_path: Path) -> None:
    """`schedmate demo --slurm`: the demo's jobs run as sbatch jobs on a local Slurm cluster; the Slurm source
    brings their metrics, the failing job's diagnosis comes back and the sink records its user notification; the
    resubmission is recognised as one."""
    from schedmate.infra.demo.demo import DEMO_JOBS, run_demo  # noqa: PLC0415

    try:
        ensure_slurm(install=True)
    except SlurmError as exc:  # pragma: no cover
        pytest.skip(str(exc))
    jobs = tuple(j for j in DEMO_JOBS if j[0] in ("mlp-tqdm", "failing-job"))
    rows = await run_demo(Settings(data_dir=tmp_path / "data"), jobs=jobs, settle_timeout_s=60, slurm=True)
    by_name = {r.name: r for r in rows}
    ok, failed, again = by_name["mlp-tqdm"], by_name["failing-job"], by_name["mlp-tqdm (again)"]
    assert ok.job_id.startswith("slurm-") and ok.status == "completed" and ok.metrics is not None
    assert failed.status == "failed" and failed.failure is not None and failed.action is not None
    notes = (tmp_path / "data" / "slurm" / "notifications.jsonl").read_text().splitlines()
    assert [json.loads(n)["job_id"] for n in notes] == [failed.job_id]
    assert again.meta is not None and again.meta.resubmission_of == ok.job_id


async def test_a_job_that_ended_and_was_forgotten_while_the_source_was_down_comes_from_the_jobcomp_log(
    broker: EmbeddedBroker, tmp_path: Path
) -> None:
    """With MinJobAge at 2 s, a job that runs and ends while the source is down is gone from squeue when it
    starts; the job-completion log still gives its submission, start (node list) and end (failed, exit code 3)."""
    cluster = SlurmCluster(tmp_path / "s", nodes=2, gpus_per_node=1, min_job_age_s=2)
    await cluster.start()
    try:
        settings = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "conn")
        work = tmp_path / "w"
        work.mkdir()
        sid = sbatch(cluster, work, 'echo "step 1/2"\nexit 3\n')
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sid in cluster.command("squeue", "-h", "-o", "%i").stdout.split():
            await asyncio.sleep(0.5)
        assert sid not in cluster.command("squeue", "-h", "-o", "%i").stdout.split()  # the controller forgot it
        source = SlurmSource(settings, cluster.env)
        await source.start()
        try:
            await source.poll()
        finally:
            await source.stop()
        key = f"slurm-{sid}"
        events = [e for e in decoded(await collect(broker.bootstrap, EVENTS.name, lambda m: len(m) >= 2, 30), EVENTS)
                  if e.job_id == key]  # fmt: skip
        assert [(e.kind, e.status, e.exit_code) for e in events] == [("started", None, None), ("finished", "failed", 3)]
        assert events[0].nodes and events[0].node in cluster.nodes
        subs = decoded(await collect(broker.bootstrap, SUBMITTED.name, lambda m: len(m) >= 1, 30), SUBMITTED)
        assert [s.job_id for s in subs] == [key] and subs[0].workdir == str(work)
    finally:
        cluster.teardown()


async def _submissions_of(broker: EmbeddedBroker, tmp_path: Path, answer: list[dict[str, Any]]) -> list[Any]:
    """One poll of a Slurm source whose controller answers ``answer`` (as `squeue --json` would), and the
    submissions it published through the broker."""
    settings = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "conn")
    source = SlurmSource(settings, {"SLURM_CONF": str(tmp_path / "none.conf")})

    async def jobs() -> list[dict[str, Any]]:
        return answer

    await source.start()
    try:
        source.slurm.jobs = jobs  # type: ignore[method-assign]  # the controller's answer, as squeue would give it
        await source.poll()
    finally:
        await source.stop()
    return decoded(await collect(broker.bootstrap, SUBMITTED.name, lambda m: len(m) >= 1, 30), SUBMITTED)


async def test_one_malformed_slurm_job_does_not_stop_the_others(broker: EmbeddedBroker, tmp_path: Path) -> None:
    """A job whose fields the contract refuses (a NUL in its working directory) is skipped with a warning; the job
    after it in the same poll is still published."""
    bad = {"job_id": 7, "job_state": "PENDING", "user_name": "u", "current_working_directory": "/x\x00y"}
    good = {"job_id": 8, "job_state": "PENDING", "user_name": "u", "current_working_directory": str(tmp_path),
            "command": f"{tmp_path}/run.sh", "tres_per_node": "gres:gpu:4", "node_count": 1}  # fmt: skip
    subs = await _submissions_of(broker, tmp_path, [bad, good])
    assert [(s.job_id, s.num_gpus, s.command) for s in subs] == [("slurm-8", 4, ["run.sh"])]


async def test_a_job_run_inside_a_git_repository_names_its_root_and_commit(
    broker: EmbeddedBroker, tmp_path: Path
) -> None:
    """A job whose working directory is `proj/examples/cifar` of a git repository: its submission names `proj` as
    the repository root the Advisor may read up to, with the commit and branch checked out there."""
    root = tmp_path / "proj"
    work = root / "examples" / "cifar"
    work.mkdir(parents=True)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    job = {"job_id": 9, "job_state": "PENDING", "user_name": "u", "current_working_directory": str(work),
           "command": f"{work}/run.sh", "tres_per_node": "gres:gpu:1", "node_count": 1}  # fmt: skip
    subs = await _submissions_of(broker, tmp_path, [job])
    assert [(s.repo_root, s.git_commit, s.git_branch) for s in subs] == [(str(root.resolve()), "a" * 40, "main")]
