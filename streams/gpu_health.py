"""A worker-local view of node health: gpu.samples and jobs.failures (all partitions).

gpu.samples is keyed by node, not by job, so every worker reads the whole topic (it is small:
one sample per GPU per interval) without a consumer group, starting a window back in time,
and keeps only what agents ask for: fault evidence (Xid events and increases of uncorrectable
ECC errors) for the diagnose agent, each job's mean utilisation and peak memory for the
history writer. From jobs.failures (also small) it keeps which jobs recently got a hardware
verdict on which node: several jobs failing that way on one node corroborate each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, defaultdict, deque
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from schedmate.agents.failures.gpu_evidence import NODE_COMPONENTS
from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import gpu_samples as gpu_schema
from schedmate.schemas import jobs_failures as failures_schema
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
        self._verdicts: OrderedDict[str, deque[tuple[float, str]]] = OrderedDict()  # node → (ts, job) hardware verdicts
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

    def record_verdict(self, node: str, ts: float, job_id: str) -> None:
        """A job got a hardware verdict (GPU, NVLink, node) on ``node`` (bounded: 64 per node, 10,000 nodes)."""
        seen = self._verdicts.pop(node, None) or deque(maxlen=64)
        seen.append((ts, job_id))
        self._verdicts[node] = seen
        if len(self._verdicts) > 10_000:
            self._verdicts.popitem(last=False)

    def peer_jobs(self, node: str | None, since: float, exclude: str) -> set[str]:
        """Jobs other than ``exclude`` with a hardware verdict on ``node`` since ``since``."""
        if node is None:
            return set()
        return {j for ts, j in self._verdicts.get(node, ()) if ts >= since and j != exclude}

    def job_usage(self, job_id: str) -> tuple[float | None, float | None]:
        """Mean GPU utilisation (%) and peak memory (MB) of a job's samples, if any were seen."""
        n, total, peak = self._usage.get(job_id, (0, 0.0, 0.0))
        return (round(total / n, 1) if n else None, peak or None)

    def faults(self, node: str | None, since: float) -> list[tuple[str, int | None]]:
        """(description, xid) of faults on ``node`` since ``since``."""
        if node is None:
            return []
        return [(d, x) for ts, d, x in self._faults.get(node, ()) if ts >= since]

    def _apply(self, topic: str, value: bytes | None) -> None:
        try:
            if topic == failures_schema.TOPIC.name:
                f = failures_schema.TOPIC.decode(value)
                if f.category == "infrastructure" and f.infra_component in NODE_COMPONENTS and f.faulty_node:
                    self.record_verdict(f.faulty_node, f.ts, f.job_id)
                return
            s = gpu_schema.TOPIC.decode(value)
        except InvalidEventError:
            return
        self.record(s.node, s.ts, s.gpu_index, s.xid_events, s.ecc_uncorrected, s.job_id, s.util_pct, s.mem_used_mb)

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
            # A fresh consumer without a group knows no topic's partitions: read the whole cluster's metadata.
            cluster = await consumer._client.fetch_all_metadata()
            tps = [
                TopicPartition(topic, p)
                for topic in (gpu_schema.TOPIC.name, failures_schema.TOPIC.name)
                for p in sorted(cluster.partitions_for_topic(topic) or set())
            ]
            consumer.assign(tps)
            since_ms = int((time.time() - self.window_s) * 1000)
            offsets = await consumer.offsets_for_times(dict.fromkeys(tps, since_ms))
            # Partitions with nothing in the window start at their end offset as of now (an explicit
            # offset: a lazy seek_to_end could resolve after a record written meanwhile and skip it).
            quiet = [tp for tp in tps if offsets.get(tp) is None]
            ends = await consumer.end_offsets(quiet) if quiet else {}
            for tp in tps:
                found = offsets.get(tp)
                consumer.seek(tp, found.offset if found is not None else ends[tp])
            async for msg in consumer:
                self._apply(msg.topic, msg.value)
        except Exception:  # the view is best-effort evidence; diagnoses work without it
            log.exception("gpu.samples view stopped")
        finally:
            await consumer.stop()
