"""Administration: seeding the job history, and exporting the event contract for non-Python subscribers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from schedmate.infra.cli._common import app, fail, history_app, schemas_app, settings
from schedmate.schemas.exceptions import SchedMateError

__all__ = ["acls", "history_import", "history_repair", "schemas_export"]


@history_app.command("repair")
def history_repair() -> None:
    """Repair a damaged history: restore its newest readable version, or move it aside and start empty."""
    from schedmate.agents.advisor.history import repair  # noqa: PLC0415

    s = settings(quiet=True)
    typer.echo(repair(s.store_dir))


@history_app.command("import")
def history_import(
    trace: Annotated[Path, typer.Argument(help="CSV trace (duration + GPUs columns; see docs).", exists=True)],
) -> None:
    """Seed the job history from a CSV trace, e.g. ../shared/data/philly_jobs.csv (re-importing is harmless)."""
    from rich.progress import Progress  # noqa: PLC0415

    from schedmate.agents.advisor.facets import vector_dim  # noqa: PLC0415
    from schedmate.agents.advisor.history import History  # noqa: PLC0415
    from schedmate.agents.advisor.trace_import import import_csv  # noqa: PLC0415
    from schedmate.agents.ml.embeddings import Embedder  # noqa: PLC0415

    s = settings(quiet=True)
    try:
        history = History(s.store_dir, dim=vector_dim(Embedder(s.embedding_model, s.embedding_backend)))
        total = max(0, sum(1 for _ in trace.open("rb")) - 1)
        with Progress(transient=True) as bar:
            task = bar.add_task(f"importing {trace.name}", total=total)
            result = import_csv(history, trace, progress=lambda n: bar.advance(task, n))
    except SchedMateError as exc:
        fail(exc)
    typer.echo(f"{result.imported} jobs imported from {trace} ({result.skipped} rows skipped); "
               f"history now holds {history.count()} jobs in {s.store_dir}")  # fmt: skip


@schemas_app.command("export")
def schemas_export(folder: Annotated[Path, typer.Argument(help="Where to write <topic>.schema.json files.")]) -> None:
    """Write the JSON Schema of every topic (for non-Python subscribers)."""
    from schedmate.schemas import export_json_schemas  # noqa: PLC0415

    for p in export_json_schemas(folder):
        typer.echo(str(p))


@app.command()
def acls(
    worker: Annotated[str, typer.Option(help="The worker's principal (User: is added to a bare name).")] = "worker",
    connector: Annotated[str, typer.Option(help="The connectors' principal (jobs' inputs only).")] = "connector",
    scheduler: Annotated[str, typer.Option(help="Scheduler adapters' principal (read results).")] = "scheduler",
    bootstrap: Annotated[str, typer.Option(help="The cluster's bootstrap servers.")] = "BROKER:9093",
    command_config: Annotated[str | None, typer.Option(help="Admin client properties (SASL/SSL).")] = None,
    scheduler_group: Annotated[str, typer.Option(help="Group-id prefix of the adapters' consumers.")] = "scheduler",
) -> None:
    """Print the kafka-acls commands that let only the worker write results (scheduler.actions among them),
    connectors write only jobs' inputs and adapters only read: review, then run them as a Kafka admin."""
    from schedmate.infra.kafka_acls import acl_plan, render_commands  # noqa: PLC0415

    s = settings(quiet=True)
    rules = acl_plan(worker, connector, scheduler, app_id=s.app_id, scheduler_group=scheduler_group)
    typer.echo(render_commands(rules, bootstrap, command_config))
