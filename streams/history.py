"""The ``history`` writer: jobs.events → the job history the advisor's estimates learn from.

It notes starts and fills in outcomes (status, duration, and the job's mean GPU utilisation and
peak memory as seen on gpu.samples); outcome writes are idempotent upserts, so a redelivered
event changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from schedmate.agents.advisor.history import History
from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_events as events_schema
from schedmate.streams.app import StreamsApp, add_batch_agent
from schedmate.streams.gpu_health import GpuHealth
from schedmate.streams.runtime import Runtime

__all__ = ["HistoryRuntime", "register_history"]

log = get_logger(__name__)


class HistoryRuntime(Runtime):
    """Writes starts and outcomes to the history (LanceDB) in its own thread."""

    name = "history"

    def __init__(self, history: History, gpu: GpuHealth | None = None) -> None:
        super().__init__()
        self.history = history
        self.gpu = gpu
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history")
        self.outcomes = 0

    async def on_stop(self) -> None:
        """Let a write in progress finish, then release the thread."""
        self._pool.shutdown(wait=True)

    async def handle(self, messages: Sequence[Any]) -> None:
        """A batch of jobs.events messages → history (start times and outcomes), one read and one write."""
        rows: list[tuple[str, str, str | None, float, float | None, float | None]] = []
        for message in messages:
            try:
                event = events_schema.TOPIC.decode(message.value)
            except InvalidEventError:
                continue  # the diagnose agent on the same topic dead-letters it once
            util, mem = (None, None)
            if event.kind == "finished" and self.gpu is not None:
                util, mem = self.gpu.job_usage(event.job_id)
            rows.append((event.job_id, event.kind, event.status, event.ts, util, mem))
        if rows:
            n = await asyncio.get_running_loop().run_in_executor(self._pool, self.history.record_events, rows)
            self.outcomes += n
            log.debug("job events recorded", events=len(rows), outcomes=n)


def register_history(sa: StreamsApp, history: History, gpu: GpuHealth | None) -> HistoryRuntime:
    """Add the history writer to the app."""
    rt = HistoryRuntime(history, gpu)
    add_batch_agent(sa, events_schema.TOPIC, "history", rt.handle)
    return rt
