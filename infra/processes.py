"""Child processes: stopping them politely (SIGTERM, then SIGKILL after a grace period), and a free port."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket

__all__ = ["free_port", "terminate"]


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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
