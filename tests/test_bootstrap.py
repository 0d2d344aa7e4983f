"""`infra/bootstrap.sh` on a machine without room: one clear message at once, no install, no futile retries."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[1] / "infra" / "bootstrap.sh"

# Stands in for .venv/bin/python: torch is missing, upgrading pip works, installing torch hits a full disk.
_FULL_DISK_PYTHON = """#!/usr/bin/env bash
case "$*" in
  *"import torch"*) exit 1 ;;
  *"--upgrade pip"*) exit 0 ;;
  *"torch=="*) echo "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device" >&2; exit 1 ;;
esac
exit 3
"""


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "infra").mkdir(parents=True)
    shutil.copy(_SCRIPT, root / "infra" / "bootstrap.sh")
    return root


def _bootstrap(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(root / "infra" / "bootstrap.sh")],
        env={**os.environ, "PYTHON": sys.executable, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_too_little_free_disk_stops_before_creating_anything(tmp_path: Path) -> None:
    """Less free space than an install takes: the script says how much is free and needed and where to look, and
    creates no virtual environment."""
    root = _checkout(tmp_path)
    done = _bootstrap(root, SCHEDMATE_BOOTSTRAP_MIN_FREE_MB=str(10**12))
    assert done.returncode == 1
    assert "not enough free disk" in done.stderr and "MB needed" in done.stderr and ".venv" in done.stderr
    assert not (root / ".venv").exists()


def test_a_full_disk_during_pip_is_reported_once_not_retried(tmp_path: Path) -> None:
    """pip failing with ENOSPC fails the same way on every try: the script stops at the first with the disk message
    instead of sleeping through eight attempts."""
    root = _checkout(tmp_path)
    fake = root / ".venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text(_FULL_DISK_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    started = time.monotonic()
    done = _bootstrap(root, SCHEDMATE_BOOTSTRAP_MIN_FREE_MB="0")
    assert done.returncode == 1
    assert time.monotonic() - started < 10, "a full disk must not be retried with back-off"
    assert "No space left on device" in done.stderr and "not enough free disk" in done.stderr
    assert "attempt 1 of 8" not in done.stderr
