"""``schedmate record`` / ``schedmate replay-topics``: topics to Parquet and back, for offline evaluation."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Annotated

import typer

from schedmate.infra.cli._common import JSON_OPTION, app, run_async, settings

__all__ = ["record", "replay_topics"]

_DEFAULT_TOPICS = "jobs.submitted,jobs.events,logs.chunks,gpu.samples"


@app.command()
def record(
    out: Annotated[Path, typer.Option(help="Archive folder: one Parquet dataset per topic, partitioned by hour.")],
    topics: Annotated[str, typer.Option(help="Comma-separated topics (default: what connectors publish).")] = (
        _DEFAULT_TOPICS
    ),
    follow: Annotated[bool, typer.Option("--follow", help="Keep recording until Ctrl-C / SIGTERM.")] = False,
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Record topics to Parquet (resumes after what OUT already holds; a record is never written twice)."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    from schedmate.connectors.archive import record as run_record  # noqa: PLC0415

    s = settings(quiet=True)
    names = [t.strip() for t in topics.split(",") if t.strip()]

    async def main() -> dict[str, int]:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        with Progress(SpinnerColumn(), TextColumn("recorded {task.completed:,} records"), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True, disable=as_json) as bars:  # fmt: skip
            task = bars.add_task("record", total=None)
            return await run_record(s, names, out, follow=follow, stop=stop,
                                    progress=lambda n: bars.advance(task, n))  # fmt: skip

    written = run_async(main()) or {}
    if as_json:
        typer.echo(json.dumps({"out": str(out), "written": written}))
    else:
        typer.echo(f"{sum(written.values()):,} records written to {out}: {written}")


@app.command("replay-topics")
def replay_topics(
    src: Annotated[Path, typer.Argument(help="An archive written by `schedmate record`.")],
    topics: Annotated[str | None, typer.Option(help="Comma-separated topics (default: all in the archive).")] = None,
    speed: Annotated[float | None, typer.Option(help="Pace: original gaps divided by SPEED (1: real time).")] = None,
    fast: Annotated[bool, typer.Option("--fast", help="As fast as the broker takes them (the default).")] = False,
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Publish an archive's records again in timestamp order (keys, headers, timestamps, partitions kept)."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    from schedmate.connectors.archive import describe  # noqa: PLC0415
    from schedmate.connectors.archive import replay as run_replay  # noqa: PLC0415
    from schedmate.connectors.exceptions import ArchiveError  # noqa: PLC0415
    from schedmate.infra.cli._common import fail  # noqa: PLC0415

    s = settings(quiet=True)
    names = [t.strip() for t in topics.split(",") if t.strip()] if topics else None
    if not src.is_dir():
        fail(ArchiveError(f"no archive at {src}: record one with `schedmate record --out {src}`"))
    info = describe(src)
    total = sum(v["records"] for k, v in info.items() if names is None or k in names)

    async def main() -> dict[str, int]:
        with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True, disable=as_json) as bars:  # fmt: skip
            task = bars.add_task("replay", total=total)
            return await run_replay(s, src, names, speed=None if fast else speed,
                                    progress=lambda n: bars.advance(task, n))  # fmt: skip

    sent = run_async(main()) or {}
    if as_json:
        typer.echo(json.dumps({"src": str(src), "sent": sent}))
    else:
        typer.echo(f"{sum(sent.values()):,} records replayed from {src}: {sent}")
