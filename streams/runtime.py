"""What every long-lived part of a worker is: a :class:`Runtime` with start()/stop() and ``async with``.

The worker (:mod:`schedmate.streams.worker`) owns them: it starts them with the Faust app and
stops them, in reverse order, when the app stops (SIGTERM: the consumer drains and commits
first, then runtimes flush and close).
"""

from __future__ import annotations

from typing import Self

from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger

__all__ = ["Runtime"]

log = get_logger(__name__)


class Runtime(AsyncLifecycle):
    """A start/stop lifecycle; subclasses override :meth:`on_start` / :meth:`on_stop`."""

    name: str = "runtime"

    def __init__(self) -> None:
        self.started = False
        self.stopped = False

    async def on_start(self) -> None:
        """Acquire what the runtime needs (connections, background tasks)."""

    async def on_stop(self) -> None:
        """Flush and release everything :meth:`on_start` acquired (and thread pools)."""

    async def start(self) -> Self:
        """Start once."""
        if not self.started:
            self.started = True
            await self.on_start()
            log.debug("runtime started", runtime=self.name)
        return self

    async def stop(self) -> None:
        """Stop once (also when never started: thread pools made at construction are released)."""
        if not self.stopped:
            self.stopped = True
            await self.on_stop()
            log.info("runtime stopped", runtime=self.name)
