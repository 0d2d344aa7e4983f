"""The ``schedmate`` command line, split by audience: offline, stack, measure, admin."""

from __future__ import annotations

import os
import sys

import typer

from schedmate.infra.cli import admin, archive, measure, offline, simulate, slurm, stack  # noqa: F401  (they register their commands)
from schedmate.infra.cli._common import app
from schedmate.schemas.exceptions import SchedMateError

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        app()
    except SchedMateError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(2)
