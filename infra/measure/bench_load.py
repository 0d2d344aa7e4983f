"""`schedmate bench load`: many concurrent jobs' logs through one worker for minutes — memory and lag over time.

A fleet of ``jobs`` concurrent jobs, each printing ``lines_per_s`` progress lines a second in one of
several real-world styles, sent as one chunk per job per second (as the connectors do). Jobs end after
a few minutes (a share of them failing with a traceback, so diagnoses run too) and new ones take their
place, so the worker sees churn, not a fixed set. One `schedmate worker` (classification on, as
deployed) consumes it all. Every ``sample_s`` the bench records the worker's resident memory and its
consumer-group lag on logs.chunks (records not yet processed, and in seconds of production at the
current rate). At the end production stops and the bench waits until every job's latest jobs.metrics
counts exactly the lines it was sent.

The baseline is the worker itself early in the run: ``rss_growth`` is the median RSS of the last
minute over that of the second (after the model has loaded and the first jobs have been seen);
``rss_mb_per_minute`` shows when bounded structures (parked states, store caches) have filled and
memory levels off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from schedmate.infra.measure._worker import worker_process
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas import jobs_events, jobs_metrics, logs_chunks
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.logs_chunks import LogChunk

__all__ = ["bench_load"]

_STYLES: tuple[Callable[[int, random.Random], str], ...] = (
    lambda s, r: f"step {s} | loss {r.uniform(0.5, 3):.4f} | lr {r.uniform(1e-5, 1e-3):.2e} | {r.random():.3f} s/it",
    lambda s, r: f"{{'loss': {r.uniform(0.5, 3):.4f}, 'grad_norm': {r.uniform(0.1, 9):.3f}, 'epoch': {s / 1000:.3f}}}",
    lambda s, r: f"iter {s}: loss {r.uniform(0.5, 3):.4f}, time {r.uniform(5, 50):.2f}ms, mfu {r.uniform(1, 40):.2f}%",
    lambda s, r: f"Epoch 3 [{s}/100000] train_loss={r.uniform(0.5, 3):.4f} samples/s={r.uniform(100, 900):.1f}",
)  # fmt: skip
_FAILURE = [
    "Traceback (most recent call last):",
    '  File "/home/user/train.py", line 211, in <module>',
    "    main()",
    '  File "/home/user/train.py", line 180, in main',
    "    batch = next(loader)",
    "KeyError: 'input_ids'",
]
_GROUP = "schedmate-load"


@dataclass
class _Job:
    job_id: str
    style: int
    ends_at: float
    fails: bool
    seq: int = 0
    sent: int = 0
    carry: float = 0.0


@dataclass
class _Fleet:
    """The jobs now running, and every job's count of lines sent."""

    size: int
    lines_per_s: float
    lifetime_s: tuple[float, float]
    fail_share: float
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    running: dict[str, _Job] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    started: int = 0
    failed: int = 0

    def new_job(self, now: float) -> _Job:
        self.started += 1
        job = _Job(f"load-{self.started:06d}", self.rng.randrange(len(_STYLES)),
                   now + self.rng.uniform(*self.lifetime_s), self.rng.random() < self.fail_share)  # fmt: skip
        self.running[job.job_id] = job
        self.sent[job.job_id] = 0
        return job


async def _sample_lag(admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer, parts: list[TopicPartition]) -> int:
    committed = await admin.list_consumer_group_offsets(_GROUP, partitions=parts)
    ends = await consumer.end_offsets(parts)
    return sum(max(0, ends[tp] - (committed[tp].offset if tp in committed and committed[tp].offset >= 0 else 0))
               for tp in parts)  # fmt: skip


def _rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def bench_load(
    settings: Settings,
    jobs: int = 1000,
    minutes: float = 10.0,
    lines_per_s: float = 1.0,
    job_minutes: tuple[float, float] = (2.0, 4.0),
    fail_share: float = 0.05,
    sample_s: float = 10.0,
    evict_after_s: float = 60.0,
    plot: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the load; return the figures (and write the plot)."""
    from rich.progress import Progress  # noqa: PLC0415

    fleet = _Fleet(jobs, lines_per_s, (job_minutes[0] * 60, job_minutes[1] * 60), fail_share)
    samples: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp, Progress(disable=not progress, transient=True) as bar:
        data = Path(tmp)
        async with EmbeddedBroker(settings.partitions) as broker:
            env = dict(os.environ, SCHEDMATE_BROKER=f"kafka://{broker.bootstrap}", SCHEDMATE_DATA_DIR=str(data),
                       SCHEDMATE_APP_ID=_GROUP, SCHEDMATE_LOG_LEVEL="WARNING",
                       SCHEDMATE_PARTITIONS=str(settings.partitions),
                       SCHEDMATE_EVICT_AFTER_S=str(evict_after_s))  # fmt: skip
            with worker_process(env) as worker:
                producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=20,
                                            max_batch_size=1 << 20)  # fmt: skip
                consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap)
                metrics = AIOKafkaConsumer(jobs_metrics.TOPIC.name, bootstrap_servers=broker.bootstrap,
                                           auto_offset_reset="earliest")  # fmt: skip
                admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
                for c in (producer, consumer, metrics, admin):
                    await c.start()
                reported: dict[str, int] = {}

                async def read_metrics() -> None:
                    async for m in metrics:
                        ev = jobs_metrics.TOPIC.decode(m.value)
                        reported[ev.job_id] = max(reported.get(ev.job_id, 0), ev.lines_total)

                reader = asyncio.create_task(read_metrics())
                try:
                    parts = [TopicPartition(logs_chunks.TOPIC.name, p) for p in range(settings.partitions)]
                    task = bar.add_task("starting the worker (model load)", total=None)
                    await _warm_up(producer, reported)
                    result = await _drive(fleet, producer, admin, consumer, parts, worker.pid, minutes, sample_s,
                                          samples, lambda d, n: bar.update(task, description=d, completed=n,
                                                                           total=minutes * 60))  # fmt: skip
                    bar.update(task, description="draining: waiting until every job's lines are counted")
                    drained_s, exact = await _drain(fleet, reported, timeout_s=600)
                finally:
                    reader.cancel()
                    await asyncio.gather(reader, return_exceptions=True)
                    for c in (producer, consumer, metrics):
                        await c.stop()
                    await admin.close()
    rss = [s["rss_mb"] for s in samples]
    second = [s["rss_mb"] for s in samples if 60 <= s["t_s"] < 120] or rss[:1]
    last = [s["rss_mb"] for s in samples if s["t_s"] >= samples[-1]["t_s"] - 60] or rss[-1:]
    lag_s = [s["lag_s"] for s in samples]
    if plot is not None:
        _plot(samples, plot, jobs)
    return {
        "jobs_concurrent": jobs,
        "minutes": minutes,
        "jobs_started": fleet.started,
        "jobs_failed": fleet.failed,
        "lines_sent": sum(fleet.sent.values()),
        "chunks_per_s": result["chunks_per_s"],
        "lines_per_s": result["lines_per_s"],
        "evict_after_s": evict_after_s,
        "rss_mb_second_minute": round(statistics.median(second), 1),
        "rss_mb_last_minute": round(statistics.median(last), 1),
        "rss_mb_max": round(max(rss), 1),
        "rss_growth": round(statistics.median(last) / statistics.median(second), 3),
        "rss_mb_per_minute": [round(statistics.median(m)) for m in _by_minute(samples)],
        "lag_records_max": max(int(s["lag_records"]) for s in samples),
        "lag_s_p50": round(statistics.median(lag_s), 2),
        "lag_s_max": round(max(lag_s), 2),
        "drained_after_s": round(drained_s, 1),
        "jobs_counted_exactly": f"{exact}/{len(fleet.sent)}",
        "samples": samples,
        **({"plot": str(plot)} if plot else {}),
    }


def _by_minute(samples: list[dict[str, float]]) -> list[list[float]]:
    """RSS samples grouped by the minute of the run they were taken in (empty minutes left out)."""
    minutes: dict[int, list[float]] = {}
    for s in samples:
        minutes.setdefault(int(s["t_s"] // 60), []).append(s["rss_mb"])
    return [minutes[m] for m in sorted(minutes)]


async def _warm_up(producer: AIOKafkaProducer, reported: dict[str, int]) -> None:
    """One job until the worker reports it: the group has joined and the model is loaded (not measured)."""
    lines = [f"step {i} | loss 1.0 | 100.0 ms/step" for i in range(1, 51)]
    chunk = LogChunk(job_id="load-warmup", seq=0, first_line=1, lines=lines)
    await producer.send_and_wait(logs_chunks.TOPIC.name, chunk.to_bytes(), key=b"load-warmup")
    deadline = time.monotonic() + 300
    while reported.get("load-warmup", 0) < len(lines):
        if time.monotonic() > deadline:
            raise TimeoutError("the worker did not start within 300 s")
        await asyncio.sleep(0.5)


async def _send(producer: AIOKafkaProducer, spec: Any, key: str, value: bytes) -> None:
    await producer.send(spec.name, value, key=key.encode())


async def _event(producer: AIOKafkaProducer, job_id: str, **fields: Any) -> None:
    await _send(producer, jobs_events.TOPIC, job_id, JobEvent(job_id=job_id, **fields).to_bytes())


async def _drive(
    fleet: _Fleet,
    producer: AIOKafkaProducer,
    admin: AIOKafkaAdminClient,
    consumer: AIOKafkaConsumer,
    parts: list[TopicPartition],
    pid: int,
    minutes: float,
    sample_s: float,
    samples: list[dict[str, float]],
    on_tick: Callable[[str, float], None],
) -> dict[str, float]:
    """Produce for ``minutes`` (one chunk per running job per second), sampling memory and lag."""
    t0 = time.monotonic()
    for _ in range(fleet.size):
        job = fleet.new_job(t0)
        await _event(producer, job.job_id, kind="started", node=f"node-{fleet.started % 64}")
    next_sample, tick, chunks = t0, 0, 0
    while (now := time.monotonic()) - t0 < minutes * 60:
        for job in list(fleet.running.values()):
            job.carry += fleet.lines_per_s
            n = int(job.carry)
            job.carry -= n
            ending = now >= job.ends_at
            lines = [_STYLES[job.style](job.sent + i + 1, fleet.rng) for i in range(n)]
            if ending and job.fails:
                lines += _FAILURE
            if lines or ending:
                chunk = LogChunk(job_id=job.job_id, seq=job.seq, first_line=job.sent + 1, lines=lines, eof=ending)
                await _send(producer, logs_chunks.TOPIC, job.job_id, chunk.to_bytes())
                job.seq += 1
                job.sent += len(lines)
                chunks += 1
            fleet.sent[job.job_id] = job.sent
            if ending:
                status = "failed" if job.fails else "completed"
                fleet.failed += job.fails
                await _event(producer, job.job_id, kind="finished", status=status, exit_code=int(job.fails))
                del fleet.running[job.job_id]
                new = fleet.new_job(now)
                await _event(producer, new.job_id, kind="started", node=f"node-{fleet.started % 64}")
        await producer.flush()
        if now >= next_sample:
            lag = await _sample_lag(admin, consumer, parts)
            elapsed = now - t0
            rate = chunks / max(elapsed, 1e-9)
            samples.append({"t_s": round(elapsed, 1), "rss_mb": round(_rss_mb(pid), 1), "lag_records": lag,
                            "lag_s": round(lag / rate, 2) if rate else 0.0, "running": len(fleet.running),
                            "jobs_started": fleet.started})  # fmt: skip
            next_sample += sample_s
        tick += 1
        on_tick(f"{len(fleet.running)} jobs streaming, {fleet.started} started", now - t0)
        await asyncio.sleep(max(0.0, t0 + tick - time.monotonic()))
    elapsed = time.monotonic() - t0
    return {"chunks_per_s": round(chunks / elapsed, 1), "lines_per_s": round(sum(fleet.sent.values()) / elapsed, 1)}


async def _drain(fleet: _Fleet, reported: dict[str, int], timeout_s: float) -> tuple[float, int]:
    """Seconds until every job's reported line count equals what it was sent; jobs counted exactly."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        exact = sum(reported.get(j, 0) == n for j, n in fleet.sent.items())
        if exact == len(fleet.sent):
            break
        await asyncio.sleep(1.0)
    return time.monotonic() - t0, sum(reported.get(j, 0) == n for j, n in fleet.sent.items())


def _plot(samples: list[dict[str, float]], path: Path, jobs: int) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    t = [s["t_s"] / 60 for s in samples]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax1.plot(t, [s["rss_mb"] for s in samples])
    ax1.set_ylabel("worker RSS (MB)")
    ax1.set_ylim(bottom=0)
    ax1.set_title(f"{jobs} concurrent jobs through one worker")
    ax2.plot(t, [s["lag_s"] for s in samples])
    ax2.set_ylabel("logs.chunks lag (s of production)")
    ax2.set_xlabel("minutes")
    ax2.set_ylim(bottom=0)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
