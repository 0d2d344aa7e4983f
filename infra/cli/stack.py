"""Running SchedMate: the broker and workers, jobs and log sources, GPU sampling, watching topics, the demo."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer

from schedmate.infra.cli._common import REPO_ROOT_HELP, app, fail, llm_app, logs_app, run_async, settings
from schedmate.schemas.exceptions import SchedMateError

__all__ = ["demo", "llm_serve", "logs_push", "logs_tail", "nvml", "run", "up", "watch", "worker"]


@app.command()
def worker(
    no_classify: Annotated[bool, typer.Option("--no-classify", help="Skip embedding template classes.")] = False,
) -> None:
    """Run one stream worker (Faust) against the configured broker; add more to scale out."""
    from schedmate.streams.worker import run_worker  # noqa: PLC0415

    s = settings()
    try:
        run_worker(s, classify=not no_classify)
    except SchedMateError as exc:
        fail(exc)


@app.command()
def up(
    workers: Annotated[int, typer.Option(help="Stream workers to start.")] = 1,
    partitions: Annotated[int | None, typer.Option(help="Partitions per topic (default: settings).")] = None,
) -> None:
    """Start the embedded broker and stream workers; Ctrl-C (or SIGTERM) stops them cleanly."""
    from schedmate.infra.run.supervisor import run_up  # noqa: PLC0415

    s = settings()
    if partitions:
        s = s.model_copy(update={"partitions": partitions})
    run_async(run_up(s, workers))


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

    s = settings()
    run_async(watch_topic(s, topic, job, from_beginning, as_json, max_events, timeout), interruptible=True)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    workdir: Annotated[Path, typer.Option(help="Working directory of the job.")] = Path(),
    repo_root: Annotated[Path | None, typer.Option(help=REPO_ROOT_HELP)] = None,
    job_id: Annotated[str | None, typer.Option(help="Job id (default: a fresh one).")] = None,
    name: Annotated[str, typer.Option(help="Job name.")] = "",
    gpus: Annotated[int, typer.Option(help="GPUs the job asks for.")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not mirror the job's output.")] = False,
) -> None:
    """Run `-- CMD...` as a local job: lifecycle events and its output stream to Kafka."""
    from schedmate.connectors.publisher import Publisher  # noqa: PLC0415
    from schedmate.connectors.runner import run_job  # noqa: PLC0415

    s = settings()
    command = list(ctx.args)

    async def _go() -> int:
        async with Publisher(s) as pub:
            jid, rc = await run_job(pub, command, workdir, job_id, name=name, num_gpus=gpus,
                                    echo=None if quiet else sys.stdout, repo_root=repo_root)  # fmt: skip
            typer.secho(f"job {jid} exited with {rc}", err=True)
            return rc

    rc = run_async(_go())
    raise typer.Exit(rc or 0)


@logs_app.command("push")
def logs_push(
    job: Annotated[str, typer.Option(help="Job id the lines belong to.")],
    file: Annotated[str, typer.Argument(help="File to read, or - for standard input.")] = "-",
    source: Annotated[str, typer.Option(help="Name of this log source.")] = "stdout",
    first_line: Annotated[int, typer.Option(help="Line number of the first line pushed.")] = 1,
) -> None:
    """Publish a file or a pipe (`cmd | schedmate logs push --job J`) as log chunks."""
    from schedmate.connectors.push import push_stream  # noqa: PLC0415

    s = settings()
    n = run_async(push_stream(s, job, file, source, first_line))
    typer.secho(f"pushed {n} lines for job {job}", err=True)


@logs_app.command("tail")
def logs_tail(
    patterns: Annotated[list[str], typer.Argument(help="Files or globs to follow.")],
    job: Annotated[str | None, typer.Option(help="Job id for every file (default: each file's stem).")] = None,
    once: Annotated[bool, typer.Option("--once", help="Publish what is there, then exit.")] = False,
    follow_symlinks: Annotated[
        bool, typer.Option("--follow-symlinks", help="Follow a log path that is a symlink (refused by default).")
    ] = False,
    node: Annotated[str | None, typer.Option(help="Node the logs are read on (default: this host's name).")] = None,
) -> None:
    """Follow log files (rotation, truncation, restarts: no line lost or duplicated)."""
    from schedmate.connectors.push import tail_files  # noqa: PLC0415

    s = settings()
    run_async(tail_files(s, patterns, job, once, follow_symlinks, node), interruptible=True)


@app.command()
def nvml(
    interval: Annotated[float, typer.Option(help="Seconds between samples.")] = 5.0,
    count: Annotated[int | None, typer.Option(help="Samples to take (default: until stopped).")] = None,
    job: Annotated[str | None, typer.Option(help="Job id running on these GPUs.")] = None,
) -> None:
    """Publish this host's GPU samples (utilisation, memory, power, ECC, Xid) to gpu.samples."""
    from schedmate.connectors.nvml import NvmlSampler, NvmlUnavailableError  # noqa: PLC0415
    from schedmate.connectors.publisher import Publisher  # noqa: PLC0415

    s = settings()
    try:
        sampler = NvmlSampler(job_id=job).start()
    except NvmlUnavailableError as exc:
        typer.secho(str(exc), fg=typer.colors.YELLOW, err=True)
        return

    async def _go() -> int:
        async with Publisher(s) as pub:
            return await sampler.run(pub, interval, count)

    try:
        n = run_async(_go(), interruptible=True)
        if n is not None:
            typer.secho(f"published {n} sampling rounds", err=True)
    finally:
        sampler.stop()


@app.command()
def demo(
    keep: Annotated[bool, typer.Option(help="Keep the broker and worker running after the jobs end.")] = False,
    slurm: Annotated[
        bool,
        typer.Option(
            "--slurm",
            help="Run the jobs on a local Slurm cluster (root; installs slurm-wlm and munge with apt if missing).",
        ),
    ] = False,
) -> None:
    """Start everything embedded, run three real training scripts, show their live metrics."""
    from schedmate.infra.demo.demo import run_demo  # noqa: PLC0415

    s = settings(quiet=True)
    if slurm:
        from schedmate.infra.run.slurm_cluster import ensure_slurm  # noqa: PLC0415

        ensure_slurm(install=True)
    run_async(run_demo(s, keep=keep, slurm=slurm))


@llm_app.command("serve")
def llm_serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8765,
    model: Annotated[Path | None, typer.Option(help="A GGUF file (default: the packaged Gemma 3 270M).")] = None,
) -> None:
    """Serve the packaged Gemma 3 270M with llama.cpp (CPU hosts); set SCHEDMATE_LLM_ENDPOINT to use it."""
    from schedmate.infra.run.llm_server import LlamaServer, gemma_gguf  # noqa: PLC0415

    s = settings()

    async def _go() -> None:
        path = model or gemma_gguf(s.data_dir / "models")
        async with LlamaServer(path, port=port) as server:
            typer.echo(f"LLM server ready: export SCHEDMATE_LLM_ENDPOINT={server.endpoint}  (Ctrl-C stops it)")
            await asyncio.Event().wait()

    run_async(_go(), interruptible=True)
