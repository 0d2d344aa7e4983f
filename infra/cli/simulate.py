"""``schedmate simulate``: policies replayed over a cluster trace, with SchedMate's Advisor in the loop."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from schedmate.infra.cli._common import JSON_OPTION, app, fail, settings
from schedmate.schemas.exceptions import SchedMateError

__all__ = ["simulate"]

_POLICY_HELP = (
    "Comma-separated: fifo, sjf-oracle, qssf, tiresias, lucid, sjf-schedmate, lucid-schedmate (no profiling "
    "nodes: utilisations from the Advisor, new jobs' trials on shared GPUs), "
    "sjf-schedmate-manual (SchedMate's estimates, failures left to users), lucid-schedmate-profiler (Lucid's "
    "profiling nodes kept), lucid-oracle (a bound: lucid-schedmate knowing every duration and utilisation), and "
    "the preemptive srtf-oracle (a "
    "bound), srtf-qssf and srtf-schedmate (shortest remaining service first; SchedMate's reads the remaining time "
    "of running jobs from the Metric Tracker)."
)


def default_gpus(jobs: list[tuple[float, float, int]], per_node: int, load: float = 0.85) -> int:
    """The cluster size at which the trace's offered load (GPU-seconds ÷ submission span) is ``load``."""
    if len(jobs) < 2:
        return per_node
    span = max(1.0, jobs[-1][0] - jobs[0][0])
    busy = sum(d * g for _, d, g in jobs) / span
    return max(per_node, math.ceil(busy / load / per_node) * per_node)


@app.command()
def simulate(
    trace: Annotated[
        str,
        typer.Option(
            help="philly[:PATH], elasticflow[:clusterNN], helios:PATH, acme:PATH, or a "
            "CSV (submit time, duration, GPUs; optional user, name, vc, status)."
        ),
    ],
    policies: Annotated[str, typer.Option(help=_POLICY_HELP)] = "fifo,qssf,tiresias,sjf-schedmate",
    jobs: Annotated[int | None, typer.Option(help="The first N jobs in submission order.", min=1)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the workload mapping and the interference residuals.")] = 0,
    gpus: Annotated[
        int | None, typer.Option(help="Cluster GPUs (default: the trace's offered load at 85 %).", min=1)
    ] = None,
    gpus_per_node: Annotated[int, typer.Option(help="GPUs per node.", min=1)] = 8,
    early_exit: Annotated[
        float, typer.Option(help="Share of jobs that end early when the trace does not say.", min=0.0, max=1.0)
    ] = 0.3,
    failures: Annotated[
        bool,
        typer.Option(
            "--failures",
            help="Inject node faults; the SchedMate policies recover through the Failure Handler (drain + requeue).",
        ),
    ] = False,
    node_mtbf_days: Annotated[
        float, typer.Option(help="With --failures: mean days between faults of a node.", min=0.01)
    ] = 30.0,
    repair_hours: Annotated[
        float, typer.Option(help="With --failures: hours until operators fix a bad node.", min=0.0)
    ] = 6.0,
    hang_min: Annotated[
        float,
        typer.Option(
            help="With --failures: minutes a job on a node that goes bad holds its GPUs without progress before it "
            "fails (its collectives' timeout; 0: it fails at once).",
            min=0.0,
        ),
    ] = 30.0,
    user_delay_min: Annotated[
        float, typer.Option(help="With --failures: mean minutes before a user resubmits a failed job.", min=0.0)
    ] = 60.0,
    diagnosis_recall: Annotated[
        float,
        typer.Option(
            help="With --failures: share of infrastructure failures the Failure Handler diagnoses.", min=0.0, max=1.0
        ),
    ] = 0.85,
    tracker_coverage: Annotated[
        float,
        typer.Option(
            help="srtf-schedmate: share of jobs whose log gives the Metric Tracker a total (remaining time).",
            min=0.0,
            max=1.0,
        ),
    ] = 0.5,
    out: Annotated[Path, typer.Option(help="Folder for report.md, the JCT CDF plots and result.json.")] = Path(
        "simulation-report"
    ),
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Simulate scheduling policies on a GPU cluster replaying a trace; SchedMate's policies take their estimates
    from the Advisor reading each job's workload (never the job's own duration)."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from schedmate.connectors.sim.policies import Recovery  # noqa: PLC0415
    from schedmate.connectors.sim.report import HEADER, table_rows, write_report  # noqa: PLC0415
    from schedmate.connectors.sim.simulate import NEEDS_ADVISOR, POLICIES  # noqa: PLC0415
    from schedmate.connectors.sim.simulate import simulate as run_policies  # noqa: PLC0415
    from schedmate.connectors.sim.trace import load_trace  # noqa: PLC0415

    s = settings(quiet=True)
    names = [p.strip() for p in policies.split(",") if p.strip()]
    unknown = [p for p in names if p not in POLICIES]
    if unknown or not names:
        fail(
            SchedMateError(f"unknown policy {unknown[0] if unknown else '(none)'!r}; choose from {', '.join(POLICIES)}")
        )
    err = Console(stderr=True)
    try:
        loaded = load_trace(trace).head(jobs)
        size = gpus or default_gpus([(j.submit_s, j.duration_s, j.gpus) for j in loaded.jobs], gpus_per_node)
        embedder = None
        if NEEDS_ADVISOR & set(names):  # (every SchedMate policy, not only the names ending in -schedmate)
            from schedmate.agents.ml.embeddings import Embedder  # noqa: PLC0415

            embedder = Embedder(s.embedding_model, s.embedding_backend)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True, disable=as_json) as bars:  # fmt: skip

            def progress(label: str, total: int, _: int) -> Callable[[int], None]:
                task = bars.add_task(label, total=total)
                return lambda n: bars.advance(task, n)

            recovery = Recovery(user_delay_s=user_delay_min * 60, recall=diagnosis_recall, seed=seed)
            report = run_policies(loaded, names, gpus=size, gpus_per_node=gpus_per_node, seed=seed,
                                  early_exit=early_exit, embedder=embedder, progress=progress, failures=failures,
                                  recovery=recovery, node_mtbf_days=node_mtbf_days, tracker_coverage=tracker_coverage,
                                  fault_kw={"repair_s": repair_hours * 3600, "hang_s": hang_min * 60})  # fmt: skip
    except SchedMateError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps(report.as_dict()))
        return
    table = Table(title=f"{report.trace}: {report.jobs:,} jobs, {report.gpus} GPUs, seed {report.seed}")
    for h in HEADER:
        table.add_column(h, justify="left" if h == "policy" else "right")
    for row in table_rows(report):
        table.add_row(*row)
    Console().print(table)
    path = write_report(report, out)
    typer.echo(f"report: {path} (JCT CDF plots beside it); QSSF groups on {report.groups_on}")
