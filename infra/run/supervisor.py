"""Running a local stack: the embedded broker plus stream-worker processes, restarted if they crash."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from typing import Self

from schedmate.infra.kafka import client_options, ensure_topics, resolve_bootstrap
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.processes import terminate
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings

__all__ = ["LocalStack", "restart_delay", "run_up"]

log = get_logger(__name__)
_HEALTHY_S = 60.0  # a worker that ran this long before exiting is restarted at once
_MAX_BACKOFF_S = 60.0


def restart_delay(ran_s: float, quick_failures: int) -> tuple[int, float]:
    """(quick failures so far, seconds to wait) for a worker that exited after running ``ran_s``.

    A worker that ran a minute or more is restarted at once; one that keeps exiting quickly waits
    1, 2, 4 … up to 60 s, so a crash loop does not spin.
    """
    if ran_s > _HEALTHY_S:
        return 0, 0.0
    n = quick_failures + 1
    return n, min(_MAX_BACKOFF_S, 2.0 ** (n - 1))


class LocalStack(AsyncLifecycle):
    """Broker (embedded unless SCHEDMATE_BROKER names one) and ``workers`` worker processes."""

    def __init__(self, settings: Settings, workers: int = 1, worker_env: dict[str, str] | None = None) -> None:
        self.settings = settings
        self.n_workers = workers
        self.worker_env = worker_env or {}
        self.broker: EmbeddedBroker | None = None
        self.bootstrap = ""
        self.procs: list[asyncio.subprocess.Process] = []
        self._stopping = False
        self._watch: asyncio.Task[None] | None = None

    @property
    def client_settings(self) -> Settings:
        """Settings that point clients at this stack's broker."""
        return self.settings.model_copy(update={"broker": f"kafka://{self.bootstrap}"})

    async def start(self) -> Self:
        """Start the broker (if embedded) and the workers."""
        s = self.settings
        if s.broker == "embedded":
            self.broker = await EmbeddedBroker(s.partitions, state_file=s.broker_state_file).start()
            self.bootstrap = self.broker.bootstrap
        else:
            self.bootstrap = resolve_bootstrap(s)
            await ensure_topics(
                self.bootstrap, s.partitions, client_options(s), replication_factor=s.replication_factor
            )
        for i in range(self.n_workers):
            self.procs.append(await self._spawn(i))
        self._watch = asyncio.get_running_loop().create_task(self._supervise())
        return self

    async def _spawn(self, i: int) -> asyncio.subprocess.Process:
        env = dict(os.environ, **self.worker_env)
        env["SCHEDMATE_BROKER"] = f"kafka://{self.bootstrap}"
        env["SCHEDMATE_PARTITIONS"] = str(self.settings.partitions)
        env["SCHEDMATE_DATA_DIR"] = str(self.settings.data_dir)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "schedmate.infra.cli", "worker", env=env, stdin=asyncio.subprocess.DEVNULL
        )
        log.info("worker started", worker=i, pid=proc.pid)
        return proc

    async def _supervise(self) -> None:
        """Restart exited workers; one that keeps failing is restarted after 1, 2, 4 … 60 s."""
        started = [time.monotonic()] * len(self.procs)
        failures = [0] * len(self.procs)
        due: list[float | None] = [None] * len(self.procs)
        while not self._stopping:
            await asyncio.sleep(0.5)
            now = time.monotonic()
            for i, p in enumerate(self.procs):
                if p.returncode is None or self._stopping:
                    continue
                if due[i] is None:
                    failures[i], delay = restart_delay(now - started[i], failures[i])
                    due[i] = now + delay
                    log.warning("worker exited; restarting it", worker=i, exit_code=p.returncode,
                                in_s=round(delay, 1), quick_failures=failures[i])  # fmt: skip
                if now >= (due[i] or 0.0):
                    self.procs[i] = await self._spawn(i)
                    started[i], due[i] = time.monotonic(), None

    async def stop(self) -> None:
        """SIGTERM the workers (they drain and commit), then stop the broker."""
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await terminate(self.procs, 20.0)
        self.procs.clear()
        if self.broker is not None:
            await self.broker.stop()
            self.broker = None


async def run_up(settings: Settings, workers: int) -> None:
    """`schedmate up`: run the stack until SIGINT/SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with LocalStack(settings, workers) as stack:
        print(
            f"SchedMate is up: broker kafka://{stack.bootstrap}, {workers} worker(s), data in {settings.data_dir}\n"
            "  stream a job:  schedmate run -- python train.py   |   cmd | schedmate logs push --job J\n"
            "  follow it:     schedmate watch jobs.metrics\n"
            "Ctrl-C stops everything.",
            flush=True,
        )
        await stop.wait()
