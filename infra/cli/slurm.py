"""``schedmate slurm …``: a local Slurm cluster, the Slurm source (jobs + logs to Kafka) and sink (estimates and
actions applied to Slurm)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Annotated

import typer

from schedmate.infra.cli._common import app, run_async, settings

__all__ = ["slurm_app"]

slurm_app = typer.Typer(help="Slurm: a local cluster to try it on, the source and the sink.", no_args_is_help=True)
app.add_typer(slurm_app, name="slurm")

_ROOT = typer.Option(help="Folder of the local cluster (config, state, logs).")


def _root(root: Path | None) -> Path:
    return root or settings(quiet=True).data_dir / "slurm-cluster"


def _env(conf: Path | None) -> dict[str, str] | None:
    return {**os.environ, "SLURM_CONF": str(conf)} if conf else None


@slurm_app.command("up")
def slurm_up(
    root: Annotated[Path | None, _ROOT] = None,
    nodes: Annotated[int, typer.Option(help="Nodes (one slurmd each).", min=1)] = 3,
    gpus: Annotated[int, typer.Option(help="Fake GPUs per node.", min=0)] = 4,
    install: Annotated[bool, typer.Option("--install", help="apt-get install slurm-wlm and munge if missing.")] = False,
) -> None:
    """Start (or reuse) a local Slurm cluster; prints the SLURM_CONF to export."""
    from schedmate.infra.run.slurm_cluster import SlurmCluster, ensure_slurm  # noqa: PLC0415

    ensure_slurm(install)
    cluster = SlurmCluster(_root(root), nodes=nodes, gpus_per_node=gpus).start_sync()
    typer.echo(f"export SLURM_CONF={cluster.conf}")


@slurm_app.command("down")
def slurm_down(
    root: Annotated[Path | None, _ROOT] = None,
    teardown: Annotated[bool, typer.Option("--teardown", help="Also delete its folder.")] = False,
) -> None:
    """Cancel the local cluster's jobs and stop its daemons."""
    from schedmate.infra.run.slurm_cluster import SlurmCluster  # noqa: PLC0415

    folder = _root(root)
    nodes = json.loads((folder / "cluster.json").read_text())["nodes"] if (folder / "cluster.json").is_file() else []
    cluster = SlurmCluster(folder, nodes=max(1, len(nodes)))
    cluster.teardown() if teardown else cluster.stop_sync()
    typer.echo(f"stopped the Slurm cluster at {folder}")


def _serve(component: object) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with component as c:  # type: ignore[attr-defined]
            task = asyncio.create_task(c.run())
            waiter = asyncio.create_task(stop.wait())
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            for t in (task, waiter):
                t.cancel()
            await asyncio.gather(task, waiter, return_exceptions=True)

    run_async(main(), interruptible=True)


@slurm_app.command("source")
def slurm_source(
    conf: Annotated[Path | None, typer.Option(help="slurm.conf (default: SLURM_CONF or Slurm's own default).")] = None,
    poll: Annotated[float, typer.Option(help="Seconds between squeue polls.", min=0.2)] = 2.0,
    cluster: Annotated[str, typer.Option(help="Cluster name on jobs.submitted.")] = "slurm",
) -> None:
    """Publish the cluster's submissions, starts, ends and job output (restart-safe)."""
    from schedmate.connectors.slurm.source import SlurmSource  # noqa: PLC0415

    _serve(SlurmSource(settings(), _env(conf), poll_s=poll, cluster=cluster))


@slurm_app.command("sink")
def slurm_sink(
    conf: Annotated[Path | None, typer.Option(help="slurm.conf (default: SLURM_CONF or Slurm's own default).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report what would be done.")] = False,
    order: Annotated[bool, typer.Option(help="Order pending jobs shortest-expected first.")] = True,
    actions: Annotated[bool, typer.Option(help="Apply scheduler.actions (drain, requeue, notify).")] = True,
    max_nice: Annotated[int, typer.Option(help="The largest Nice the sink sets.", min=0, max=2_000_000)] = 10_000,
    nice_per_decade: Annotated[float, typer.Option(help="Nice added per 10x longer expected duration.", min=0)] = (
        1000.0
    ),
    max_requeues: Annotated[
        int, typer.Option(help="Hold a job requeued this often instead of requeuing it.", min=0)
    ] = 3,
) -> None:
    """Apply estimates (pending-job order) and failure actions to Slurm."""
    from schedmate.connectors.slurm.sink import SlurmSink  # noqa: PLC0415

    sink = SlurmSink(settings(), _env(conf), dry_run=dry_run, order=order, actions=actions, max_nice=max_nice,
                     nice_per_decade=nice_per_decade, max_requeues=max_requeues)  # fmt: skip
    _serve(sink)
