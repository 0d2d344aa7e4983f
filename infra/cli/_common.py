"""The typer app, its sub-command groups, and what every command shares (settings, errors, output)."""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections.abc import Coroutine, Mapping
from typing import Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError

from schedmate.infra.exceptions import ConfigError
from schedmate.infra.settings import Settings, get_settings
from schedmate.schemas.exceptions import SchedMateError

__all__ = [
    "JSON_OPTION",
    "REPO_ROOT_HELP",
    "app",
    "bench_app",
    "eval_app",
    "fail",
    "history_app",
    "llm_app",
    "logs_app",
    "print_fields",
    "run_async",
    "schemas_app",
    "settings",
]

T = TypeVar("T")

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
llm_app = typer.Typer(help="The local LLM server.", no_args_is_help=True)
history_app = typer.Typer(help="The job history estimates learn from.", no_args_is_help=True)
for _sub, _name in ((eval_app, "eval"), (llm_app, "llm"), (logs_app, "logs"), (schemas_app, "schemas"),
                    (bench_app, "bench"), (history_app, "history")):  # fmt: skip
    app.add_typer(_sub, name=_name)

JSON_OPTION = typer.Option("--json", help="Print one JSON object.")
REPO_ROOT_HELP = (
    "Root of the job's repository around the working directory: the Advisor also reads the job's own package there "
    "(a job run from examples/x/). Default: reads stay inside the working directory."
)


def settings(quiet: bool = False) -> Settings:
    """The process's settings, with logging configured (``quiet``: warnings only, unless a level is set)."""
    from schedmate.infra.logging import configure_logging  # noqa: PLC0415

    try:
        s = get_settings()
    except ValidationError as exc:
        problems = "; ".join(f"SCHEDMATE_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        fail(ConfigError(f"invalid setting: {problems}"))
    level = "WARNING" if quiet and "SCHEDMATE_LOG_LEVEL" not in os.environ else s.log_level
    configure_logging(level, s.log_json)
    return s


def fail(exc: Exception) -> NoReturn:
    """Print ``exc`` as the one error line and exit with status 2."""
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def run_async(coro: Coroutine[Any, Any, T], *, interruptible: bool = False) -> T | None:
    """Run ``coro``; a SchedMate error ends the command with its message, Ctrl-C (if ``interruptible``) quietly."""
    try:
        return asyncio.run(coro)
    except SchedMateError as exc:
        fail(exc)
    except KeyboardInterrupt:
        if not interruptible:
            raise
        return None


def _finite_or_name(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


def print_fields(result: Mapping[str, Any], as_json: bool, width: int = 18, blank: str = "—") -> None:
    """One JSON object, or one aligned ``key: value`` line per field (``blank`` for none)."""
    if as_json:  # a non-finite float (a diverged loss) as the strings the topics carry: strict JSON
        typer.echo(json.dumps({k: _finite_or_name(v) for k, v in result.items()}))
        return
    for k, v in result.items():
        typer.echo(f"{k:>{width}}: {blank if v is None else v}")
