"""Offline commands (no broker): what the agents say about one log or one job, with the agents' own code."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from schedmate.infra.cli._common import (
    JSON_OPTION,
    REPO_ROOT_HELP,
    app,
    fail,
    print_fields,
    run_async,
    settings,
)
from schedmate.infra.exceptions import ConfigError
from schedmate.schemas.exceptions import SchedMateError
from schedmate.schemas.jobs_metadata import WorkloadMetadata

__all__ = ["advise", "diagnose", "metrics"]


def _react_refiner(
    s: object, workdir: Path, command: str, reports: list[dict[str, object]], repo: Path | None = None
) -> Callable[[WorkloadMetadata], WorkloadMetadata] | None:
    """The ReAct agent as the advisor's refine step, when an LLM is configured (its report lands in ``reports``)."""
    from schedmate.agents.advisor.react import react_fill  # noqa: PLC0415
    from schedmate.agents.ml.llm import client_from_settings  # noqa: PLC0415

    if not getattr(s, "llm_endpoint", None):
        return None

    def refine(meta: WorkloadMetadata) -> WorkloadMetadata:
        async def run() -> WorkloadMetadata:
            client = client_from_settings(s)
            if client is None:  # pragma: no cover - checked above
                return meta
            try:
                refined, report = await react_fill(workdir, command, meta, client, repo=repo)
            finally:
                await client.close()
            reports.append(report.as_dict())
            return refined

        return asyncio.run(run())

    return refine


@app.command()
def metrics(
    logfile: Annotated[Path, typer.Argument(help="A training log.", exists=True, dir_okay=False)],
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Latest training progress in LOGFILE (same code path as the track agent)."""
    from schedmate.agents.tracker.metric_tracker import metrics_of_file  # noqa: PLC0415

    print_fields(metrics_of_file(logfile).as_dict(), as_json, width=14)


@app.command()
def diagnose(
    logfile: Annotated[Path, typer.Argument(help="A failed job's log.", exists=True, dir_okay=False)],
    as_json: Annotated[bool, JSON_OPTION] = False,
    node: Annotated[
        list[str] | None,
        typer.Option(help="A node of the job's allocation, as the scheduler says (repeat for several)."),
    ] = None,
) -> None:
    """Locate and classify the root cause of a failed job's log, and pick a recovery action.

    The faulty node is one of the job's allocation (``--node``), never a node only the log names;
    draining a node takes evidence beyond one log, so here a hardware fault gets at most ``requeue``.
    """
    from schedmate.agents.failures.gpu_evidence import corroborate  # noqa: PLC0415
    from schedmate.agents.failures.knn import FailureKnn  # noqa: PLC0415
    from schedmate.agents.failures.llm_vote import diagnose_lines_llm  # noqa: PLC0415
    from schedmate.agents.logtext.lines import split_physical_lines  # noqa: PLC0415
    from schedmate.agents.ml.embeddings import Embedder  # noqa: PLC0415
    from schedmate.agents.ml.llm import client_from_settings  # noqa: PLC0415

    s = settings(quiet=True)
    llm = client_from_settings(s)
    knn = FailureKnn(Embedder(s.embedding_model, s.embedding_backend))  # the model loads only if needed
    d = run_async(diagnose_lines_llm(split_physical_lines(logfile.read_bytes()), llm, knn=knn, allocation=node or ()))
    assert d is not None
    corroborate(d, d.faulty_node, faults=[])  # one log alone: says why a node is not drained
    print_fields(d.as_dict(), as_json, width=17)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def advise(
    ctx: typer.Context,
    workdir: Annotated[Path, typer.Option(help="The job's working directory (read, never run or written).")] = Path(),
    repo_root: Annotated[Path | None, typer.Option(help=REPO_ROOT_HELP)] = None,
    as_json: Annotated[bool, JSON_OPTION] = False,
    user: Annotated[str, typer.Option(help="Submitting user (default: $USER).")] = "",
    name: Annotated[str, typer.Option(help="Job name, as the scheduler knows it.")] = "",
    gpus: Annotated[int, typer.Option(help="GPUs requested, as the scheduler knows it.")] = 0,
    cluster: Annotated[str, typer.Option(help="Cluster or virtual cluster.")] = "",
    job_id: Annotated[str | None, typer.Option(help="Job id (default: a fresh one).")] = None,
    record: Annotated[bool, typer.Option(help="Add the submission to the history (as a pending job).")] = False,
    react: Annotated[
        bool,
        typer.Option(help="With an LLM configured, let the ReAct agent fill the fields the static pass left open."),
    ] = True,
) -> None:
    """Metadata and a duration/GPU estimate for `-- CMD...` run from WORKDIR, as the advise agent computes them."""
    from schedmate.agents.advisor.advisor import Advisor  # noqa: PLC0415
    from schedmate.connectors.runner import new_job_id  # noqa: PLC0415
    from schedmate.schemas.jobs_submitted import JobSubmitted  # noqa: PLC0415

    if not ctx.args:
        fail(ConfigError("give the job's command after `--`, e.g. schedmate advise --workdir . -- python train.py"))
    s = settings(quiet=True)
    try:
        advisor = Advisor.from_settings(s)
        sub = JobSubmitted(job_id=job_id or new_job_id("advise"), user=user or os.environ.get("USER", ""), name=name,
                           command=list(ctx.args), workdir=str(workdir), num_gpus=gpus, cluster=cluster,
                           repo_root=str(repo_root) if repo_root else "")  # fmt: skip
        advisor.warm_up()  # model load and history views: process start-up, not advisor latency
        reports: list[dict[str, object]] = []
        refine = _react_refiner(s, workdir, " ".join(ctx.args), reports, repo_root) if react else None
        try:
            out = advisor.advise(sub, record=record, refine=refine).as_dict()
        finally:
            advisor.close()
        if reports:
            out["react"] = reports[0]
    except SchedMateError as exc:
        fail(exc)
    if as_json:
        print_fields(out, as_json=True)
        return
    for section in ("metadata", "estimate"):
        typer.secho(section, bold=True)
        for k, v in out[section].items():
            typer.echo(f"  {k:>22}: {'—' if v is None else v}")
    for k in ("resubmission_of", "path", "elapsed_s"):
        typer.echo(f"{k}: {out[k]}")
