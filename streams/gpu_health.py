"""A worker-local view of gpu.samples (all partitions): recent GPU faults per node, GPU usage per job.

gpu.samples is keyed by node, not by job, so every worker reads the whole topic (it is small:
one sample per GPU per interval) without a consumer group, starting a window back in time,
and keeps only what agents ask for: fault evidence (Xid events and increases of uncorrectable
ECC errors) for the diagnose agent, each job's mean utilisation and peak memory for the
history writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, defaultdict, deque
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import gpu_samples as gpu_schema
from schedmate.streams.runtime import Runtime

__all__ = ["GpuHealth"]

log = get_logger(__name__)


class GpuHealth(Runtime):
    """Follows gpu.samples; answers "what GPU faults did node N report since t?" and "how did job J use its GPUs?"."""

    name = "gpu-health"

    def __init__(self, bootstrap: str, options: dict[str, Any] | None = None, window_s: float = 3600.0) -> None:
        super().__init__()
        self.bootstrap = bootstrap
        self.options = options or {}
        self.window_s = window_s
        self._faults: dict[str, deque[tuple[float, str, int | None]]] = defaultdict(lambda: deque(maxlen=256))
        self._ecc: dict[tuple[str, int], int] = {}
        self._task: asyncio.Task[None] | None = None
        self._usage: OrderedDict[str, tuple[int, float, float]] = OrderedDict()  # job → (n, Σ util, peak MB)
        self.samples = 0

    def record(
        self,
        node: str,
        ts: float,
        gpu: int,
        xids: list[int],
        ecc_uncorrected: int | None,
        job_id: str | None = None,
        util_pct: float | None = None,
        mem_used_mb: float | None = None,
    ) -> None:
        """Account one sample (also used directly in tests)."""
        self.samples += 1
        if job_id:
            n, total, peak = self._usage.pop(job_id, (0, 0.0, 0.0))
            self._usage[job_id] = (n + (util_pct is not None), total + (util_pct or 0.0), max(peak, mem_used_mb or 0.0))
            if len(self._usage) > 10_000:
                self._usage.popitem(last=False)
        for x in xids:
            self._faults[node].append((ts, f"Xid {x} on {node} GPU {gpu}", x))
        if ecc_uncorrected is not None:
            before = self._ecc.get((node, gpu))
            self._ecc[(node, gpu)] = ecc_uncorrected
            if before is not None and ecc_uncorrected > before:
                self._faults[node].append(
                    (ts, f"uncorrectable ECC errors {before}→{ecc_uncorrected} on {node} GPU {gpu}", None)
                )

    def job_usage(self, job_id: str) -> tuple[float | None, float | None]:
        """Mean GPU utilisation (%) and peak memory (MB) of a job's samples, if any were seen."""
        n, total, peak = self._usage.get(job_id, (0, 0.0, 0.0))
        return (round(total / n, 1) if n else None, peak or None)

    def faults(self, node: str | None, since: float) -> list[tuple[str, int | None]]:
        """(description, xid) of faults on ``node`` since ``since``."""
        if node is None:
            return []
        return [(d, x) for ts, d, x in self._faults.get(node, ()) if ts >= since]

    async def on_start(self) -> None:
        """Follow the topic in the background."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def on_stop(self) -> None:
        """Stop following."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False, **self.options)
        await consumer.start()
        try:
            parts = consumer.partitions_for_topic(gpu_schema.TOPIC.name) or set()
            tps = [TopicPartition(gpu_schema.TOPIC.name, p) for p in sorted(parts)]
            consumer.assign(tps)
            since_ms = int((time.time() - self.window_s) * 1000)
            offsets = await consumer.offsets_for_times(dict.fromkeys(tps, since_ms))
            for tp in tps:
                found = offsets.get(tp)
                if found is not None:
                    consumer.seek(tp, found.offset)
                else:
                    await consumer.seek_to_end(tp)
            async for msg in consumer:
                try:
                    s = gpu_schema.TOPIC.decode(msg.value)
                except InvalidEventError:
                    continue
                self.record(s.node, s.ts, s.gpu_index, s.xid_events, s.ecc_uncorrected, s.job_id, s.util_pct,
                            s.mem_used_mb)  # fmt: skip
        except Exception:  # the view is best-effort evidence; diagnoses work without it
            log.exception("gpu.samples view stopped")
        finally:
            await consumer.stop()
