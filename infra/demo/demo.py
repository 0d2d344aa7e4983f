"""`schedmate demo`: the whole pipeline on one machine with three real CPU training jobs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.table import Table

from schedmate.agents.advisor.history import outcome_recorded
from schedmate.connectors.publisher import Publisher
from schedmate.connectors.runner import new_job_id, run_job
from schedmate.connectors.subscriber import Subscriber
from schedmate.infra.run.slurm_cluster import SlurmCluster
from schedmate.infra.run.supervisor import LocalStack
from schedmate.infra.settings import Settings
from schedmate.schemas import jobs_estimates, jobs_events, jobs_failures, jobs_metadata, jobs_metrics, scheduler_actions
from schedmate.schemas.jobs_estimates import JobEstimate
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.jobs_failures import JobFailure
from schedmate.schemas.jobs_metadata import JobMetadata
from schedmate.schemas.jobs_metrics import JobMetrics
from schedmate.schemas.scheduler_actions import SchedulerAction

__all__ = ["DEMO_JOBS", "run_demo"]

_JOBS_DIR = Path(__file__).parent / "jobs"
# (name, script, args): three logging styles (tqdm bar, logging key=value, nanoGPT iter lines) and a job
# that fails (a user-script bug) to show its diagnosis.
DEMO_JOBS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("mlp-tqdm", "train_tqdm.py", ()),
    ("regression-kv", "train_kv.py", ()),
    ("tiny-lm-nano", "train_nano.py", ()),
    ("failing-job", "train_fail.py", ()),
)


@dataclass
class _Row:
    name: str
    job_id: str
    status: str = "submitted"
    exit_code: int | None = None
    metrics: JobMetrics | None = None
    history: list[tuple[float, float]] = field(default_factory=list)  # (t, steps/s)
    lines_in_log: int | None = None
    failure: JobFailure | None = None
    action: SchedulerAction | None = None
    meta: JobMetadata | None = None
    estimate: JobEstimate | None = None
    started_at: float | None = None
    ended_at: float | None = None


def _fmt(v: float | None, spec: str = ".4g") -> str:
    return "—" if v is None else format(v, spec)


def _table(rows: list[_Row], title: str) -> Table:
    t = Table(title=title, expand=False)
    for col in ("job", "status", "step", "epoch", "loss", "lr", "step time", "throughput", "ETA", "lines"):
        t.add_column(col, justify="right" if col not in ("job", "status") else "left")
    for r in rows:
        m = r.metrics
        if m is None:
            t.add_row(r.name, r.status, *(["—"] * 8))
            continue
        step = "—" if m.step is None else (f"{m.step}/{m.total_steps}" if m.total_steps else str(m.step))
        thr = (
            f"{m.tokens_per_s:.0f} tok/s" if m.tokens_per_s else f"{m.samples_per_s:.0f} samples/s"
            if m.samples_per_s else (f"{1 / m.step_time_s:.1f} it/s" if m.step_time_s else "—")
        )  # fmt: skip
        t.add_row(
            r.name, r.status, step, _fmt(m.epoch, "g"), _fmt(m.loss), _fmt(m.lr, ".3g"),
            "—" if m.step_time_s is None else f"{m.step_time_s * 1000:.1f} ms", thr,
            "—" if m.eta_s is None else f"{m.eta_s:.0f} s", str(m.lines_total),
        )  # fmt: skip
    return t


def _estimates(rows: list[_Row]) -> Table:
    t = Table(title="advisor: what each job is and how long it should take, published before it ran", expand=False)
    for col in ("job", "model / task / dataset", "path", "method", "p50", "p90", "actual", "conf.", "matched"):
        t.add_column(col, justify="right" if col in ("p50", "p90", "actual", "conf.") else "left")
    for r in rows:
        m, e = r.meta, r.estimate
        md = m.metadata if m is not None else None
        what = " / ".join(str(x) for x in (md.model_name, md.task, md.dataset) if x) if md is not None else "—"
        path = "—" if m is None else m.path + (f" of {m.resubmission_of}" if m.resubmission_of else "")
        actual = None if r.started_at is None or r.ended_at is None else r.ended_at - r.started_at
        t.add_row(
            r.name, what or "—", path, e.method if e else "—", _fmt(e.duration_p50_s if e else None, ".1f"),
            _fmt(e.duration_p90_s if e else None, ".1f"), _fmt(actual, ".1f"), _fmt(e.confidence if e else None, ".2f"),
            ", ".join(f"{x.job_id} ({x.score:.2f})" for x in e.matched) if e and e.matched else "—",
        )  # fmt: skip
    return t


def _plot(rows: list[_Row], out: Path) -> Path | None:
    try:
        import matplotlib as mpl  # noqa: PLC0415

        mpl.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    t0 = min((h[0][0] for h in (r.history for r in rows) if h), default=0.0)
    for r in rows:
        if r.history:
            ax.plot([t - t0 for t, _ in r.history], [v for _, v in r.history], marker=".", label=r.name)
    ax.set_xlabel("seconds since first metrics")
    ax.set_ylabel("training steps / s (from jobs.metrics)")
    ax.set_title("Live throughput of the demo jobs")
    ax.legend()
    ax.grid(alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


DemoJob = tuple[str, str, tuple[str, ...]]


def _apply(row: _Row, ev: object, demo_dir: Path) -> None:
    """Fold one event about ``row``'s job into the row."""
    if isinstance(ev, JobMetrics):
        row.metrics = ev
        if ev.steps_per_s is not None:
            row.history.append((ev.window_end, ev.steps_per_s))
    elif isinstance(ev, JobFailure):
        row.failure = ev
    elif isinstance(ev, SchedulerAction):
        row.action = ev
    elif isinstance(ev, JobMetadata):
        row.meta = ev
    elif isinstance(ev, JobEstimate):
        row.estimate = ev
    elif isinstance(ev, JobEvent):
        row.status = ev.kind if ev.kind == "started" else str(ev.status)
        row.exit_code = ev.exit_code
        if ev.kind == "started":
            row.started_at = ev.ts
        else:
            row.ended_at = ev.ts
            with contextlib.suppress(OSError):
                data = (demo_dir / f"{row.job_id}.log").read_bytes()
                row.lines_in_log = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _settled(rows: list[_Row]) -> bool:
    """Every job's outputs arrived: metrics over its whole log, an action if it failed, an estimate."""
    return all(
        r.metrics is not None
        and r.metrics.lines_total >= (r.lines_in_log or 0)
        and (r.status != "failed" or r.action is not None)
        and r.estimate is not None
        for r in rows
    )


async def _follow(sub: Subscriber, rows: list[_Row], console: Console, demo_dir: Path, settle_timeout_s: float) -> None:
    """Show the jobs' events as they arrive (a live table on a terminal) until every job ended and settled."""
    live = console.is_terminal
    deadline: float | None = None
    last_print = 0.0
    with Live(_table(rows, "live metrics"), console=console, auto_refresh=False,
              transient=False) if live else contextlib.nullcontext() as view:  # fmt: skip
        async for _, ev in sub:
            row = next((r for r in rows if r.job_id == getattr(ev, "job_id", "")), None)  # ids may come late
            if row is None:
                continue
            _apply(row, ev, demo_dir)
            if live and view is not None:
                view.update(_table(rows, "live metrics"), refresh=True)
            elif time.monotonic() - last_print > 3:
                last_print = time.monotonic()
                console.print(_table(rows, f"metrics at {time.strftime('%H:%M:%S')}"))
            if all(r.status in ("completed", "failed", "cancelled") for r in rows):
                deadline = deadline or time.monotonic() + settle_timeout_s
                if time.monotonic() > deadline or _settled(rows):
                    return


def _summary(rows: list[_Row], console: Console, demo_dir: Path) -> None:
    console.print(_table(rows, "summary: final metrics of each job"))
    console.print(_estimates(rows))
    for r in rows:
        if r.failure is not None:
            f = r.failure
            console.print(
                f"[bold red]{r.name} failed[/bold red] — root cause at line {f.first_error_line}: "
                f"[bold]{f.category}[/bold]{f' / {f.infra_component}' if f.infra_component else ''} "
                f"(confidence {f.confidence:.2f}, path {'+'.join(f.path)})\n  {f.explanation}\n  evidence: "
                + " | ".join(f.evidence[:3])
                + (f"\n  action → {r.action.action}" if r.action is not None else "")
            )
    plot = _plot(rows, demo_dir / "throughput.png")
    if plot is not None:
        console.print(f"throughput over time: {plot}")


async def _run(pub: Publisher, row: _Row, job: DemoJob, demo_dir: Path) -> None:
    _, script, args = job
    await run_job(pub, [sys.executable, str(_JOBS_DIR / script), *args], _JOBS_DIR, row.job_id, name=job[0],
                  log_copy=demo_dir / f"{row.job_id}.log")  # fmt: skip


def _sbatch(cluster: SlurmCluster, job: DemoJob, demo_dir: Path, n: int) -> str:
    """Submit a demo job to Slurm from its own working directory (the job's script and a batch wrapper)."""
    name, script, args = job
    work = demo_dir / "slurm-jobs" / f"{name}-{n}"
    work.mkdir(parents=True, exist_ok=True)  # n: the submission's folder (the same n: the same job again)
    shutil.copy2(_JOBS_DIR / script, work / script)
    wrapper = work / "job.sh"
    wrapper.write_text(f"#!/bin/bash\nexec {shlex.quote(sys.executable)} -u {script} {shlex.join(args)}\n")
    wrapper.chmod(0o755)
    out = cluster.command("sbatch", "--parsable", "-J", name, "-D", str(work), "--gres=gpu:1",
                          "-o", str(work / "out-%j.log"), str(wrapper))  # fmt: skip
    return out.stdout.strip().split(";")[0]


async def _recorded(cs: Settings, job_id: str, limit_s: float = 60.0) -> None:
    """Wait until the worker's history writer has recorded ``job_id``'s outcome (a resubmission's estimate draws on
    it), at most ``limit_s``: a fixed pause lost that race on a loaded machine."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if await asyncio.to_thread(outcome_recorded, cs.store_dir, job_id):
            return
        await asyncio.sleep(0.5)


async def _run_slurm(
    cs: Settings, rows: list[_Row], jobs: tuple[DemoJob, ...], demo_dir: Path, watcher: asyncio.Task[None]
) -> None:
    """The jobs through a local Slurm cluster: the Slurm source publishes them, the sink applies what comes back."""
    from schedmate.connectors.slurm.sink import SlurmSink  # noqa: PLC0415
    from schedmate.connectors.slurm.source import SlurmSource  # noqa: PLC0415

    cluster = SlurmCluster(cs.data_dir / "demo-slurm", nodes=2, gpus_per_node=2)
    await cluster.start()
    source, sink = SlurmSource(cs, cluster.env, poll_s=0.5), SlurmSink(cs, cluster.env)
    await source.start()
    await sink.start()
    tasks = [asyncio.create_task(source.run()), asyncio.create_task(sink.run())]
    try:

        async def submit(job: DemoJob, row: _Row, n: int) -> _Row:
            row.job_id = f"slurm-{await asyncio.to_thread(_sbatch, cluster, job, demo_dir, n)}"
            return row

        async def ended(row: _Row, limit_s: float = 600.0) -> None:
            deadline = time.monotonic() + limit_s  # a job Slurm cannot run must not hang the demo
            while row.status not in ("completed", "failed", "cancelled") and not watcher.done():
                if time.monotonic() > deadline:
                    return
                await asyncio.sleep(0.5)  # the watcher folds the events into the rows

        first = [await submit(job, row, i) for i, (job, row) in enumerate(zip(jobs, rows, strict=False))]
        await asyncio.gather(*(ended(r) for r in first))
        await _recorded(cs, first[0].job_id)  # the history holds the first run; then the same job again
        await ended(await submit(jobs[0], rows[-1], 0))  # the same folder and command: a resubmission
        for r in rows:  # the log as Slurm wrote it, for the summary's line count
            for out in (demo_dir / "slurm-jobs").glob(f"*/out-{r.job_id.removeprefix('slurm-')}.log"):
                shutil.copy2(out, demo_dir / f"{r.job_id}.log")
    finally:
        source.request_stop()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await source.stop()
        await sink.stop()
        await cluster.stop()


async def run_demo(
    settings: Settings,
    keep: bool = False,
    jobs: tuple[DemoJob, ...] = DEMO_JOBS,
    settle_timeout_s: float = 60.0,
    slurm: bool = False,
) -> list[_Row]:
    """Run the demo; return its rows (the jobs, their final metrics and status). With ``slurm``, the jobs run on a
    local Slurm cluster watched by the Slurm source and acted on by the Slurm sink."""
    console = Console() if sys.stdout.isatty() else Console(width=140)
    settings = settings.model_copy(update={"metrics_interval_s": min(settings.metrics_interval_s, 2.0)})
    demo_dir = settings.data_dir / "demo"
    demo_dir.mkdir(parents=True, exist_ok=True)
    console.print("[bold]SchedMate demo[/bold]: embedded broker + 1 stream worker + real CPU training jobs "
                  "(one fails, one is resubmitted)")  # fmt: skip
    quiet = {"SCHEDMATE_LOG_LEVEL": os.environ.get("SCHEDMATE_LOG_LEVEL", "WARNING")}  # the tables are the output
    async with LocalStack(settings, workers=1, worker_env={"SCHEDMATE_METRICS_INTERVAL_S": "2", **quiet}) as stack:
        cs = stack.client_settings
        console.print(f"broker kafka://{stack.bootstrap}; jobs' logs mirrored in {demo_dir}")
        # Slurm gives job ids at submission: until then a row has a placeholder id no event carries
        rows = [_Row(name, f"{name}-to-submit" if slurm else new_job_id(name)) for name, _, _ in jobs]
        again = f"{jobs[0][0]} (again)"
        rows.append(_Row(again, f"{again}-to-submit" if slurm else new_job_id(jobs[0][0])))  # resubmitted later
        topics = [t.name for t in (jobs_metrics.TOPIC, jobs_events.TOPIC, jobs_failures.TOPIC, scheduler_actions.TOPIC,
                                   jobs_metadata.TOPIC, jobs_estimates.TOPIC)]  # fmt: skip
        async with Subscriber(cs, topics) as sub, Publisher(cs) as pub:
            watcher = asyncio.create_task(_follow(sub, rows, console, demo_dir, settle_timeout_s))
            if slurm:
                await _run_slurm(cs, rows, jobs, demo_dir, watcher)
            else:
                await asyncio.gather(*(_run(pub, r, job, demo_dir) for r, job in zip(rows[:-1], jobs, strict=True)))
                await _recorded(cs, rows[0].job_id)  # the history holds the first run; then the same job again
                await _run(pub, rows[-1], jobs[0], demo_dir)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(watcher, settle_timeout_s)
        _summary(rows, console, demo_dir)
        if keep:
            console.print("stack kept running (Ctrl-C to stop); try: schedmate watch jobs.metrics --from-beginning")
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
    return rows
