"""`schedmate demo`: the whole pipeline on one machine with three real CPU training jobs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.table import Table

from schedmate.connectors.publisher import Publisher
from schedmate.connectors.runner import new_job_id, run_job
from schedmate.connectors.subscriber import Subscriber
from schedmate.infra.run.supervisor import LocalStack
from schedmate.infra.settings import Settings
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


async def run_demo(
    settings: Settings, keep: bool = False, jobs: tuple[DemoJob, ...] = DEMO_JOBS, settle_timeout_s: float = 60.0
) -> list[_Row]:
    """Run the demo; return its rows (the jobs, their final metrics and status)."""
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
        rows = [_Row(name, new_job_id(name)) for name, _, _ in jobs]
        again = (f"{jobs[0][0]} (again)", jobs[0][1], jobs[0][2])  # resubmitted after the first round finished
        rows.append(_Row(again[0], new_job_id(jobs[0][0])))
        by_id = {r.job_id: r for r in rows}
        topics = ["jobs.metrics", "jobs.events", "jobs.failures", "scheduler.actions", "jobs.metadata",
                  "jobs.estimates"]  # fmt: skip
        async with Subscriber(cs, topics) as sub, Publisher(cs) as pub:
            runs = [
                asyncio.create_task(
                    run_job(
                        pub,
                        [sys.executable, str(_JOBS_DIR / script), *args],
                        _JOBS_DIR,
                        r.job_id,
                        name=name,
                        log_copy=demo_dir / f"{r.job_id}.log",
                    )
                )
                for r, (name, script, args) in zip(rows[:-1], jobs, strict=True)
            ]
            live = console.is_terminal
            deadline: float | None = None

            async def consume() -> None:
                nonlocal deadline
                last_print = 0.0
                with Live(_table(rows, "live metrics"), console=console, auto_refresh=False,
                          transient=False) if live else contextlib.nullcontext() as view:  # fmt: skip
                    async for _, ev in sub:
                        row = by_id.get(getattr(ev, "job_id", ""))
                        if row is None:
                            continue
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
                            if ev.kind == "finished":
                                with contextlib.suppress(OSError):
                                    data = (demo_dir / f"{row.job_id}.log").read_bytes()
                                    row.lines_in_log = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
                        if live and view is not None:
                            view.update(_table(rows, "live metrics"), refresh=True)
                        elif time.monotonic() - last_print > 3:
                            last_print = time.monotonic()
                            console.print(_table(rows, f"metrics at {time.strftime('%H:%M:%S')}"))
                        if all(r.status in ("completed", "failed", "cancelled") for r in rows):
                            deadline = deadline or time.monotonic() + settle_timeout_s
                            if time.monotonic() > deadline or all(
                                r.metrics is not None
                                and r.metrics.lines_total >= (r.lines_in_log or 0)
                                and (r.status != "failed" or r.action is not None)
                                and r.estimate is not None
                                for r in rows
                            ):
                                return

            watcher = asyncio.create_task(consume())
            await asyncio.gather(*runs)
            await asyncio.sleep(2.0)  # the history writer records the outcomes; then the same job again
            _, script, args = again
            await run_job(pub, [sys.executable, str(_JOBS_DIR / script), *args], _JOBS_DIR, rows[-1].job_id,
                          name=jobs[0][0], log_copy=demo_dir / f"{rows[-1].job_id}.log")  # fmt: skip
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(watcher, settle_timeout_s)
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
        if keep:
            console.print("stack kept running (Ctrl-C to stop); try: schedmate watch jobs.metrics --from-beginning")
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
    return rows
