"""Lint and strict typing of the package are part of the test suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("schemas", "connectors", "streams", "agents", "infra")


def test_ruff_lint_and_format() -> None:
    """`ruff check` and `ruff format --check` pass on the whole repository."""
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."], cwd=REPO, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_on_the_package(tmp_path: Path) -> None:
    """mypy --strict passes on `schedmate` (laid out as installed: schedmate/<subpackage>)."""
    root = tmp_path / "src" / "schedmate"
    root.mkdir(parents=True)
    for p in PACKAGES:
        (root / p).symlink_to(REPO / p)
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "-p", "schedmate",
         "--exclude", "demo/jobs|sim/catalogue", "--cache-dir", str(REPO / ".mypy_cache")],
        cwd=tmp_path / "src", capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
