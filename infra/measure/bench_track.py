"""`schedmate bench track`: template-cached tracking vs the paper's embed-every-line, and end to end.

All three figures are measured in one run on the same log lines:

- ``template_lines_per_s``: clean → template key → cached slots/class, embedding only new
  templates (what the track agent does), single thread;
- ``per_line_embedding_lines_per_s``: the baseline: every line embedded and classified by
  nearest exemplars, then its slots named (no cache), on an evenly spaced sample;
- ``e2e_lines_per_s``: chunks produced to the embedded broker and consumed by one worker
  process until every job's jobs.metrics reports all its lines.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schedmate.agents.logtext.lines import clean_line, split_physical_lines
from schedmate.agents.logtext.slots import learn_spec, numbers_of
from schedmate.agents.logtext.template_store import Store
from schedmate.agents.logtext.templates import TemplateClassifier
from schedmate.agents.ml.embeddings import Embedder
from schedmate.agents.tracker.metric_tracker import MetricTracker
from schedmate.agents.tracker.progress import JobProgress
from schedmate.connectors.chunker import ChunkBuilder
from schedmate.infra.kafka import ensure_topics
from schedmate.infra.measure._worker import worker_process
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.run.kafka_cluster import KafkaCluster
from schedmate.infra.settings import Settings
from schedmate.schemas import jobs_metrics, logs_chunks

__all__ = ["bench_track", "load_bench_log"]

_DEV_PROGRESS = ("../shared/eval/dev/progress", "shared/eval/dev/progress")


def _synthetic(n: int) -> list[tuple[str, list[str]]]:
    import random  # noqa: PLC0415

    rng = random.Random(0)
    lines = []
    for i in range(1, n + 1):
        r = rng.random()
        loss, lr = rng.uniform(0.5, 3), rng.uniform(1e-5, 1e-3)
        if r < 0.6:
            lines.append(f"iter {i}: loss {loss:.4f}, time {rng.uniform(5, 50):.2f}ms, mfu {rng.uniform(1, 40):.2f}%")
        elif r < 0.8:
            lines.append(f"{{'loss': '{loss:.4f}', 'learning_rate': '{lr:.3e}', 'epoch': '{i / 1000:.3f}'}}")
        elif r < 0.9:
            lines.append(f"[rank{rng.randint(0, 7)}] saving checkpoint to /ckpt/step_{i}.pt")
        else:
            lines.append(f"UserWarning: grad norm {rng.uniform(1, 100):.2f} is large")
    return [("synthetic", lines)]


def load_bench_log(log: Path | None, n_lines: int) -> tuple[str, list[tuple[str, list[str]]]]:
    """(description, [(job id, lines)]) with ``n_lines`` lines in all (repeating the source if needed)."""
    sources: list[tuple[str, list[str]]] = []
    if log is not None:
        sources = [(log.stem, split_physical_lines(log.read_bytes()))]
        desc = str(log)
    else:
        folder = next((Path(p) for p in _DEV_PROGRESS if Path(p).is_dir()), None)
        if folder is not None:
            sources = [(f.stem, split_physical_lines(f.read_bytes())) for f in sorted(folder.glob("*.log"))]
            desc = f"{len(sources)} real training logs in {folder}"
        else:
            sources = _synthetic(n_lines)
            desc = "synthetic mixed log"
    out: list[tuple[str, list[str]]] = []
    total, rep = 0, 0
    while total < n_lines:
        for name, lines in sources:
            take = lines[: n_lines - total]
            if take:
                out.append((f"{name}-{rep}", take))
                total += len(take)
        rep += 1
    return desc, out


def _template_path(jobs: list[tuple[str, list[str]]], clf: TemplateClassifier) -> float:
    tracker = MetricTracker(classes=clf)
    t0 = time.perf_counter()
    for job, lines in jobs:
        for i in range(0, len(lines), 500):
            tracker.feed(job, i + 1, lines[i : i + 500])
            if clf.pending:
                clf.classify_pending()
                tracker.settle()
    return time.perf_counter() - t0


def _per_line_path(lines: list[str], clf: TemplateClassifier, batch: int = 64) -> float:
    progress = JobProgress()
    t0 = time.perf_counter()
    for i in range(0, len(lines), batch):
        texts = [clean_line(x) or " " for x in lines[i : i + batch]]
        classes = clf.classify_texts(texts)
        for n, (text, cls) in enumerate(zip(texts, classes, strict=True)):
            if cls == "progress":
                progress.update(learn_spec(text), numbers_of(text), i + n + 1)
    return time.perf_counter() - t0


@contextlib.asynccontextmanager
async def _broker(kind: str, partitions: int, data_dir: Path) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """(bootstrap, worker environment) of a fresh broker: the embedded one, or a 3-node Apache Kafka cluster."""
    if kind == "kafka":
        async with KafkaCluster(data_dir / "kafka") as k:
            await ensure_topics(k.bootstrap, partitions, replication_factor=3)
            yield k.bootstrap, {"SCHEDMATE_REPLICATION_FACTOR": "3", "SCHEDMATE_IDEMPOTENCE": "true"}
        return
    async with EmbeddedBroker(partitions) as broker:
        yield broker.bootstrap, {}


async def _e2e(
    settings: Settings, jobs: list[tuple[str, list[str]]], data_dir: Path, on_progress: Any, kind: str = "embedded"
) -> float:
    async with _broker(kind, settings.partitions, data_dir) as (bootstrap, extra):
        env = dict(os.environ, SCHEDMATE_BROKER=f"kafka://{bootstrap}", SCHEDMATE_DATA_DIR=str(data_dir),
                   SCHEDMATE_METRICS_INTERVAL_S="0.5", SCHEDMATE_LOG_LEVEL="WARNING",
                   SCHEDMATE_PARTITIONS=str(settings.partitions), **extra)  # fmt: skip
        worker = contextlib.ExitStack()
        worker.enter_context(worker_process(env))
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, max_batch_size=1 << 20,
                                    max_request_size=16 << 20)  # fmt: skip
        consumer = AIOKafkaConsumer(jobs_metrics.TOPIC.name, bootstrap_servers=bootstrap,
                                    auto_offset_reset="earliest")  # fmt: skip
        await producer.start()
        await consumer.start()
        try:

            async def send(job: str, lines: list[str]) -> None:
                b = ChunkBuilder(job, max_lines=500)
                chunks = b.add(lines)
                last = b.take()
                chunks += [last] if last is not None else []
                for c in chunks:
                    await producer.send(logs_chunks.TOPIC.name, c.to_bytes(), key=job.encode())

            async def wait_for(expected: dict[str, int], timeout: float) -> None:
                seen: dict[str, int] = {}
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline:
                    batch = await consumer.getmany(timeout_ms=200)
                    for msgs in batch.values():
                        for m in msgs:
                            ev = jobs_metrics.TOPIC.decode(m.value)
                            seen[ev.job_id] = max(seen.get(ev.job_id, 0), ev.lines_total)
                    on_progress(sum(min(seen.get(j, 0), n) for j, n in expected.items()))
                    if all(seen.get(j, 0) >= n for j, n in expected.items()):
                        return
                raise TimeoutError(f"worker did not report all lines within {timeout}s: {seen}")

            warm = [f"step={i} loss=1.0" for i in range(1, 101)]
            await send("warmup", warm)
            await producer.flush()
            await wait_for({"warmup": len(warm)}, 180)  # group join + model load, not timed
            t0 = time.perf_counter()
            for job, lines in jobs:
                await send(job, lines)
            await producer.flush()
            await wait_for({job: len(lines) for job, lines in jobs}, 900)
            return time.perf_counter() - t0
        finally:
            await consumer.stop()
            await producer.stop()
            worker.close()


async def bench_track(
    settings: Settings,
    log: Path | None,
    n_lines: int,
    baseline_lines: int,
    progress: bool = True,
    brokers: tuple[str, ...] = ("embedded",),
) -> dict[str, Any]:
    """Run the measurements (end to end once per broker in ``brokers``: embedded, kafka); return the figures."""
    from rich.progress import Progress  # noqa: PLC0415

    desc, jobs = load_bench_log(log, n_lines)
    total = sum(len(lines) for _, lines in jobs)
    embedder = Embedder(settings.embedding_model, settings.embedding_backend)
    with tempfile.TemporaryDirectory() as tmp, Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("loading the embedding model", total=None)
        clf = TemplateClassifier(embedder, Store(Path(tmp) / "db"))
        clf.warm_up()
        bar.update(task, description=f"template path: {total:,} lines", total=None)
        t_template = _template_path(jobs, clf)
        flat = [line for _, lines in jobs for line in lines]
        step = max(1, len(flat) // baseline_lines)
        sample = flat[::step][:baseline_lines]
        bar.update(task, description=f"per-line embedding baseline: {len(sample):,} lines")
        t_baseline = _per_line_path(sample, TemplateClassifier(embedder))
        e2e: dict[str, float] = {}
        for kind in brokers:
            bar.update(task, description=f"end to end through {kind}: {total:,} lines", total=total, completed=0)
            e2e[kind] = await _e2e(settings, jobs, Path(tmp) / f"e2e-{kind}", lambda n: bar.update(task, completed=n),
                                   kind)  # fmt: skip
    template_rate = total / t_template
    baseline_rate = len(sample) / t_baseline
    return {
        "log": desc,
        "lines": total,
        "template_lines_per_s": round(template_rate, 1),
        "per_line_embedding_lines_per_s": round(baseline_rate, 1),
        "ratio": round(template_rate / baseline_rate, 1),
        **{
            ("e2e_lines_per_s" if k == "embedded" else f"e2e_{k}_lines_per_s"): round(total / t, 1)
            for k, t in e2e.items()
        },
        **({"e2e_kafka_vs_embedded": round(e2e["embedded"] / e2e["kafka"], 2)} if len(e2e) == 2 else {}),
        "templates_embedded": clf.embedded_templates,
        "baseline_lines": len(sample),
    }
