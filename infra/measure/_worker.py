"""A `schedmate worker` process for a benchmark."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

__all__ = ["worker_process"]


@contextlib.contextmanager
def worker_process(env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """One `schedmate worker` process for a benchmark, stopped (SIGTERM, then SIGKILL) on exit."""
    worker = subprocess.Popen([sys.executable, "-m", "schedmate.infra.cli", "worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield worker
    finally:
        worker.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.wait(20)
        if worker.poll() is None:
            worker.kill()
