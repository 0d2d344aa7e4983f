"""The ``schedmate`` command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from pydantic import ValidationError

from schedmate.infra.exceptions import ConfigError
from schedmate.infra.settings import Settings, get_settings
from schedmate.schemas.exceptions import SchedMateError

__all__ = ["app", "main"]

app = typer.Typer(
    name="schedmate",
    help="Semantic signals for deep-learning cluster schedulers: live metrics, diagnoses, estimates.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
logs_app = typer.Typer(help="Publish log lines to logs.chunks.", no_args_is_help=True)
schemas_app = typer.Typer(help="The event contract.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks, each against its baseline in one run.", no_args_is_help=True)
eval_app = typer.Typer(help="Accuracy on labelled data.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
llm_app = typer.Typer(help="The local LLM server.", no_args_is_help=True)
app.add_typer(llm_app, name="llm")
app.add_typer(logs_app, name="logs")
app.add_typer(schemas_app, name="schemas")
app.add_typer(bench_app, name="bench")
history_app = typer.Typer(help="The job history estimates learn from.", no_args_is_help=True)
app.add_typer(history_app, name="history")


def _settings(quiet: bool = False) -> Settings:
    from schedmate.infra.logging import configure_logging  # noqa: PLC0415

    try:
        s = get_settings()
    except ValidationError as exc:
        problems = "; ".join(f"SCHEDMATE_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        _fail(ConfigError(f"invalid setting: {problems}"))
    level = "WARNING" if quiet and "SCHEDMATE_LOG_LEVEL" not in os.environ else s.log_level
    configure_logging(level, s.log_json)
    return s


def _fail(exc: Exception) -> NoReturn:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


# -- offline contract -------------------------------------------------------------------------


@app.command()
def metrics(
    logfile: Annotated[Path, typer.Argument(help="A training log.", exists=True, dir_okay=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Latest training progress in LOGFILE (same code path as the track agent)."""
    from schedmate.agents.tracker import metrics_of_file  # noqa: PLC0415

    snap = metrics_of_file(logfile).as_dict()
    if as_json:
        typer.echo(json.dumps(snap))
        return
    for k, v in snap.items():
        typer.echo(f"{k:>14}: {'—' if v is None else v}")


@app.command()
def diagnose(
    logfile: Annotated[Path, typer.Argument(help="A failed job's log.", exists=True, dir_okay=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Locate and classify the root cause of a failed job's log, and pick a recovery action."""
    from schedmate.agents.diagnosis_llm import diagnose_lines_llm  # noqa: PLC0415
    from schedmate.agents.embeddings import Embedder  # noqa: PLC0415
    from schedmate.agents.failure_knn import FailureKnn  # noqa: PLC0415
    from schedmate.agents.llm import client_from_settings  # noqa: PLC0415
    from schedmate.agents.text import split_physical_lines  # noqa: PLC0415

    s = _settings(quiet=True)
    llm = client_from_settings(s)
    knn = FailureKnn(Embedder(s.embedding_model, s.embedding_backend))  # the model loads only if needed
    d = asyncio.run(diagnose_lines_llm(split_physical_lines(logfile.read_bytes()), llm, knn=knn)).as_dict()
    if as_json:
        typer.echo(json.dumps(d))
        return
    for k, v in d.items():
        typer.echo(f"{k:>17}: {'—' if v is None else v}")


@llm_app.command("serve")
def llm_serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8765,
    model: Annotated[Path | None, typer.Option(help="A GGUF file (default: the packaged Gemma 3 270M).")] = None,
) -> None:
    """Serve the packaged Gemma 3 270M with llama.cpp (CPU hosts); set SCHEDMATE_LLM_ENDPOINT to use it."""
    from schedmate.infra.llm_server import LlamaServer, gemma_gguf  # noqa: PLC0415

    s = _settings()

    async def _go() -> None:
        path = model or gemma_gguf(s.data_dir / "models")
        async with LlamaServer(path, port=port) as server:
            typer.echo(f"LLM server ready: export SCHEDMATE_LLM_ENDPOINT={server.endpoint}  (Ctrl-C stops it)")
            await asyncio.Event().wait()

    try:
        asyncio.run(_go())
    except SchedMateError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass


@eval_app.command("diagnose")
def eval_diagnose(
    folder: Annotated[
        Path, typer.Argument(help="Folder with failed logs and labels.jsonl.", exists=True, file_okay=False)
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Score `schedmate diagnose`: root-cause line within ±3, infrastructure F1, category accuracy."""
    from schedmate.agents.embeddings import Embedder  # noqa: PLC0415
    from schedmate.agents.failure_knn import FailureKnn  # noqa: PLC0415
    from schedmate.agents.llm import client_from_settings  # noqa: PLC0415
    from schedmate.infra.evaluate_failures import evaluate_failures  # noqa: PLC0415

    s = _settings(quiet=True)
    knn = FailureKnn(Embedder(s.embedding_model, s.embedding_backend))
    out = asyncio.run(evaluate_failures(folder, llm=client_from_settings(s), knn=knn))
    if as_json:
        typer.echo(json.dumps(out))
        return
    for r in out["results"]:
        ok = r["line_ok"] and r["category_ok"]
        typer.echo(("OK   " if ok else "FAIL ") + r["id"] + ("" if ok else f" got {r['got']} want {r['want']}"))
    typer.echo(
        f"root-cause line ±3: {out['line_within_tolerance']:.1%}  category accuracy: {out['category_accuracy']:.1%}  "
        f"infrastructure P/R/F1: {out['infra_precision']:.3f}/{out['infra_recall']:.3f}/{out['infra_f1']:.3f}"
        + (f"  llm: {out['llm']}" if out["llm"] else "  (no LLM)")
    )


@eval_app.command("metrics")
def eval_metrics(
    folder: Annotated[Path, typer.Argument(help="Folder with logs and labels.jsonl.", exists=True, file_okay=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Score `schedmate metrics` against labels: step and loss exact, step time within 5%."""
    from schedmate.infra.evaluate import evaluate_metrics  # noqa: PLC0415

    out = evaluate_metrics(folder)
    if as_json:
        typer.echo(json.dumps(out))
        return
    for r in out["results"]:
        typer.echo(("OK   " if r["ok"] else "FAIL ") + r["id"] + ("" if r["ok"] else " " + json.dumps(r["wrong"])))
    typer.echo(f"fully right: {out['fully_right']}/{out['logs']} = {out['share']:.1%}")


@schemas_app.command("export")
def schemas_export(folder: Annotated[Path, typer.Argument(help="Where to write <topic>.schema.json files.")]) -> None:
    """Write the JSON Schema of every topic (for non-Python subscribers)."""
    from schedmate.schemas import export_json_schemas  # noqa: PLC0415

    for p in export_json_schemas(folder):
        typer.echo(str(p))


# -- running ------------------------------------------------------------------------------------


@app.command()
def worker(
    no_classify: Annotated[bool, typer.Option("--no-classify", help="Skip embedding template classes.")] = False,
) -> None:
    """Run one stream worker (Faust) against the configured broker; add more to scale out."""
    from schedmate.streams.worker import run_worker  # noqa: PLC0415

    s = _settings()
    try:
        run_worker(s, classify=not no_classify)
    except SchedMateError as exc:
        _fail(exc)


@app.command()
def up(
    workers: Annotated[int, typer.Option(help="Stream workers to start.")] = 1,
    partitions: Annotated[int | None, typer.Option(help="Partitions per topic (default: settings).")] = None,
) -> None:
    """Start the embedded broker and stream workers; Ctrl-C (or SIGTERM) stops them cleanly."""
    from schedmate.infra.supervisor import run_up  # noqa: PLC0415

    s = _settings()
    if partitions:
        s = s.model_copy(update={"partitions": partitions})
    try:
        asyncio.run(run_up(s, workers))
    except SchedMateError as exc:
        _fail(exc)


@app.command()
def watch(
    topic: Annotated[str, typer.Argument(help="Topic to follow, e.g. jobs.metrics.")],
    job: Annotated[str | None, typer.Option(help="Only this job.")] = None,
    from_beginning: Annotated[bool, typer.Option("--from-beginning", help="Replay the topic.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON event per line.")] = False,
    max_events: Annotated[int | None, typer.Option("--max", help="Stop after this many events.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Stop after this many seconds.")] = None,
) -> None:
    """Pretty-print a topic's events as they arrive."""
    from schedmate.connectors.subscriber import watch_topic  # noqa: PLC0415

    s = _settings()
    try:
        asyncio.run(watch_topic(s, topic, job, from_beginning, as_json, max_events, timeout))
    except SchedMateError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    workdir: Annotated[Path, typer.Option(help="Working directory of the job.")] = Path(),
    job_id: Annotated[str | None, typer.Option(help="Job id (default: a fresh one).")] = None,
    name: Annotated[str, typer.Option(help="Job name.")] = "",
    gpus: Annotated[int, typer.Option(help="GPUs the job asks for.")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not mirror the job's output.")] = False,
) -> None:
    """Run `-- CMD...` as a local job: lifecycle events and its output stream to Kafka."""
    from schedmate.connectors.publisher import Publisher  # noqa: PLC0415
    from schedmate.connectors.runner import run_job  # noqa: PLC0415

    s = _settings()
    command = list(ctx.args)

    async def _go() -> int:
        async with Publisher(s) as pub:
            jid, rc = await run_job(pub, command, workdir, job_id, name=name, num_gpus=gpus,
                                    echo=None if quiet else sys.stdout)  # fmt: skip
            typer.secho(f"job {jid} exited with {rc}", err=True)
            return rc

    try:
        raise typer.Exit(asyncio.run(_go()))
    except SchedMateError as exc:
        _fail(exc)


@logs_app.command("push")
def logs_push(
    job: Annotated[str, typer.Option(help="Job id the lines belong to.")],
    file: Annotated[str, typer.Argument(help="File to read, or - for standard input.")] = "-",
    source: Annotated[str, typer.Option(help="Name of this log source.")] = "stdout",
    first_line: Annotated[int, typer.Option(help="Line number of the first line pushed.")] = 1,
) -> None:
    """Publish a file or a pipe (`cmd | schedmate logs push --job J`) as log chunks."""
    from schedmate.connectors.push import push_stream  # noqa: PLC0415

    s = _settings()
    try:
        n = asyncio.run(push_stream(s, job, file, source, first_line))
    except SchedMateError as exc:
        _fail(exc)
    typer.secho(f"pushed {n} lines for job {job}", err=True)


@logs_app.command("tail")
def logs_tail(
    patterns: Annotated[list[str], typer.Argument(help="Files or globs to follow.")],
    job: Annotated[str | None, typer.Option(help="Job id for every file (default: each file's stem).")] = None,
    once: Annotated[bool, typer.Option("--once", help="Publish what is there, then exit.")] = False,
) -> None:
    """Follow log files (rotation, truncation, restarts: no line lost or duplicated)."""
    from schedmate.connectors.push import tail_files  # noqa: PLC0415

    s = _settings()
    try:
        asyncio.run(tail_files(s, patterns, job, once))
    except SchedMateError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass


@app.command()
def nvml(
    interval: Annotated[float, typer.Option(help="Seconds between samples.")] = 5.0,
    count: Annotated[int | None, typer.Option(help="Samples to take (default: until stopped).")] = None,
    job: Annotated[str | None, typer.Option(help="Job id running on these GPUs.")] = None,
) -> None:
    """Publish this host's GPU samples (utilisation, memory, power, ECC, Xid) to gpu.samples."""
    from schedmate.connectors.nvml import NvmlSampler, NvmlUnavailableError  # noqa: PLC0415
    from schedmate.connectors.publisher import Publisher  # noqa: PLC0415

    s = _settings()
    try:
        sampler = NvmlSampler(job_id=job).start()
    except NvmlUnavailableError as exc:
        typer.secho(str(exc), fg=typer.colors.YELLOW, err=True)
        return

    async def _go() -> int:
        async with Publisher(s) as pub:
            return await sampler.run(pub, interval, count)

    try:
        n = asyncio.run(_go())
        typer.secho(f"published {n} sampling rounds", err=True)
    except SchedMateError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass
    finally:
        sampler.stop()


@app.command()
def demo(
    keep: Annotated[bool, typer.Option(help="Keep the broker and worker running after the jobs end.")] = False,
) -> None:
    """Start everything embedded, run three real training scripts, show their live metrics."""
    from schedmate.infra.demo import run_demo  # noqa: PLC0415

    s = _settings(quiet=True)
    try:
        asyncio.run(run_demo(s, keep=keep))
    except SchedMateError as exc:
        _fail(exc)


# -- scheduling advisor -----------------------------------------------------------------------


def _advisor(s: Settings) -> Any:
    from schedmate.agents.advisor import FACETS, Advisor  # noqa: PLC0415
    from schedmate.agents.embeddings import Embedder  # noqa: PLC0415
    from schedmate.agents.history import History  # noqa: PLC0415
    from schedmate.agents.versions import VersionCache  # noqa: PLC0415

    embedder = Embedder(s.embedding_model, s.embedding_backend)
    history = History(s.store_dir, dim=FACETS * embedder.dim)
    versions = VersionCache(s.data_dir / "advisor" / "versions.jsonl")
    return Advisor(history, embedder, versions, k=s.advise_top_k, threshold=s.advise_threshold)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def advise(
    ctx: typer.Context,
    workdir: Annotated[Path, typer.Option(help="The job's working directory (read, never run or written).")] = Path(),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    user: Annotated[str, typer.Option(help="Submitting user (default: $USER).")] = "",
    name: Annotated[str, typer.Option(help="Job name, as the scheduler knows it.")] = "",
    gpus: Annotated[int, typer.Option(help="GPUs requested, as the scheduler knows it.")] = 0,
    cluster: Annotated[str, typer.Option(help="Cluster or virtual cluster.")] = "",
    job_id: Annotated[str | None, typer.Option(help="Job id (default: a fresh one).")] = None,
    record: Annotated[bool, typer.Option(help="Add the submission to the history (as a pending job).")] = False,
) -> None:
    """Metadata and a duration/GPU estimate for `-- CMD...` run from WORKDIR, as the advise agent computes them."""
    from schedmate.connectors.runner import new_job_id  # noqa: PLC0415
    from schedmate.schemas.jobs_submitted import JobSubmitted  # noqa: PLC0415

    if not ctx.args:
        _fail(ConfigError("give the job's command after `--`, e.g. schedmate advise --workdir . -- python train.py"))
    s = _settings(quiet=True)
    try:
        advisor = _advisor(s)
        sub = JobSubmitted(job_id=job_id or new_job_id("advise"), user=user or os.environ.get("USER", ""), name=name,
                           command=list(ctx.args), workdir=str(workdir), num_gpus=gpus, cluster=cluster)  # fmt: skip
        advisor.warm_up()  # model load and history views: process start-up, not advisor latency
        out = advisor.advise(sub, record=record).as_dict()
    except SchedMateError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(out))
        return
    for section in ("metadata", "estimate"):
        typer.secho(section, bold=True)
        for k, v in out[section].items():
            typer.echo(f"  {k:>22}: {'—' if v is None else v}")
    for k in ("resubmission_of", "path", "elapsed_s"):
        typer.echo(f"{k}: {out[k]}")


@history_app.command("import")
def history_import(
    trace: Annotated[Path, typer.Argument(help="CSV trace (duration + GPUs columns; see docs).", exists=True)],
) -> None:
    """Seed the job history from a CSV trace, e.g. ../shared/data/philly_jobs.csv (re-importing is harmless)."""
    from rich.progress import Progress  # noqa: PLC0415

    from schedmate.agents.advisor import FACETS  # noqa: PLC0415
    from schedmate.agents.history import History  # noqa: PLC0415
    from schedmate.agents.trace_import import import_csv  # noqa: PLC0415

    s = _settings(quiet=True)
    try:
        from schedmate.agents.embeddings import Embedder  # noqa: PLC0415

        history = History(s.store_dir, dim=FACETS * Embedder(s.embedding_model, s.embedding_backend).dim)
        total = max(0, sum(1 for _ in trace.open("rb")) - 1)
        with Progress(transient=True) as bar:
            task = bar.add_task(f"importing {trace.name}", total=total)
            result = import_csv(history, trace, progress=lambda n: bar.advance(task, n))
    except SchedMateError as exc:
        _fail(exc)
    typer.echo(f"{result.imported} jobs imported from {trace} ({result.skipped} rows skipped); "
               f"history now holds {history.count()} jobs in {s.store_dir}")  # fmt: skip


@eval_app.command("advise")
def eval_advise(
    repos: Annotated[Path, typer.Argument(help="repos.jsonl with expected metadata.", exists=True, dir_okay=False)],
    root: Annotated[Path, typer.Option(help="Folder the records' `workdir` paths are relative to.")] = Path(),
    pairs: Annotated[Path | None, typer.Option(help="similar_pairs.jsonl for the retrieval check.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Per-field metadata accuracy against labels (no LLM), and retrieval on labelled pairs."""
    from schedmate.infra.evaluate_advise import evaluate_advise  # noqa: PLC0415

    s = _settings(quiet=True)
    out = evaluate_advise(s, repos, root, pairs)
    if as_json:
        typer.echo(json.dumps(out))
        return
    for r in out["results"]:
        typer.echo(("OK   " if not r["wrong"] else "FAIL ") + r["id"] + "".join(f"\n       {w}" for w in r["wrong"]))
    typer.echo("per field: " + ", ".join(f"{k} {v}" for k, v in out["per_field"].items()))
    typer.echo(f"non-null fields right: {out['right']}/{out['total']} = {out['share']:.1%}")
    if out.get("retrieval"):
        ret = out["retrieval"]
        for p in ret["pairs"]:
            typer.echo(f"  {p['relation']:<32} {p['id_a']:>18} ~ {p['id_b']:<18} cosine {p['cosine']:.3f}")
        ranked = f"{ret['ordered_right']}/{ret['comparisons']}"
        typer.echo(f"retrieval: {ranked} (similar, different) comparisons ranked right; "
                   f"at threshold {ret['threshold']}: {ret['threshold_right']}/{len(ret['pairs'])} pairs")  # fmt: skip


# -- benchmarks -------------------------------------------------------------------------------


@bench_app.command("track")
def bench_track(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    log: Annotated[Path | None, typer.Option(help="Log to replay (default: a generated mixed log).")] = None,
    lines: Annotated[int, typer.Option(help="Lines for the template path and end to end.")] = 200_000,
    baseline_lines: Annotated[int, typer.Option(help="Lines for the per-line embedding baseline.")] = 1_000,
) -> None:
    """Template-cached tracking vs embedding every line, and end to end through the broker."""
    from schedmate.infra.bench import bench_track as _bench  # noqa: PLC0415

    s = _settings()
    try:
        result: dict[str, Any] = asyncio.run(_bench(s, log, lines, baseline_lines, progress=not as_json))
    except SchedMateError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(result))
    else:
        for k, v in result.items():
            typer.echo(f"{k:>34}: {v}")


@bench_app.command("diagnose")
def bench_diagnose(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    lines: Annotated[int, typer.Option(help="Length of the generated failed log.")] = 300_000,
) -> None:
    """Diagnosis time and classifier calls on a long failed log, vs a linear scan, in one run."""
    from schedmate.infra.bench import bench_diagnose as _bench  # noqa: PLC0415

    result = _bench(lines)
    if as_json:
        typer.echo(json.dumps(result))
    else:
        for k, v in result.items():
            typer.echo(f"{k:>18}: {v}")


@bench_app.command("advise")
def bench_advise(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    jobs: Annotated[int, typer.Option(help="Generated repositories (new jobs).")] = 40,
    repos: Annotated[Path | None, typer.Option(help="A repos.jsonl of real repositories instead.")] = None,
    rounds: Annotated[
        int, typer.Option(help="Submissions of each job through the broker (1 new + resubmissions).")
    ] = 3,
) -> None:
    """Advisor latency for new jobs and resubmissions (vs re-extracting), and jobs/min through the broker."""
    from schedmate.infra.bench_advise import bench_advise as _bench  # noqa: PLC0415

    s = _settings(quiet=True)
    try:
        result = _bench(s, jobs, repos, rounds)
    except SchedMateError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(result))
    else:
        for k, v in result.items():
            typer.echo(f"{k:>26}: {v}")


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        app()
    except SchedMateError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
