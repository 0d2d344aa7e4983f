"""Stopping child processes politely: SIGTERM, then SIGKILL after a grace period."""

from __future__ import annotations

import asyncio
import contextlib
import signal

__all__ = ["terminate"]


async def terminate(procs: list[asyncio.subprocess.Process], grace_s: float) -> None:
    """SIGTERM every running process, wait up to ``grace_s`` each, SIGKILL the ones still running."""
    for proc in procs:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
