"""Record topics to Parquet and replay them: what SchedMate saw, kept for offline evaluation.

Layout: one dataset per topic, partitioned by the records' hour (UTC)::

    OUT/<topic>/hour=2026-11-23T17/p<partition>-<first offset>-<last offset>.parquet

Each row is one Kafka record exactly as it was — partition, offset, timestamp (ms), key, value and
headers as bytes — so replay reproduces it bit for bit; each file's metadata keeps the topic, the
event model's ``schema_version`` and JSON Schema at recording time. File names carry the offsets,
so recording again resumes after the last recorded offset of each partition and never writes a record
twice; a file is written to a temporary name and renamed, so a crash leaves no half file.

Replay publishes the records in timestamp order across topics (one hour of the archive in memory at a
time), to the same partition when the topic has it, with the original key, headers and timestamp, at
the original pace divided by ``speed`` (``None``: as fast as the broker takes them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaConnectionError

from schedmate.connectors.exceptions import ArchiveError
from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import client_options, producer_options, resolve_bootstrap
from schedmate.infra.settings import Settings
from schedmate.schemas import topic_by_name

__all__ = ["SCHEMA", "record", "replay"]

SCHEMA: Final = pa.schema([
    ("partition", pa.int32()), ("offset", pa.int64()), ("timestamp_ms", pa.int64()), ("key", pa.binary()),
    ("value", pa.binary()), ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
])  # fmt: skip
_FILE: Final = re.compile(r"^p(\d+)-(\d+)-(\d+)\.parquet$")
Progress = Callable[[int], None]


def _hour(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H")


def recorded_offsets(folder: Path) -> dict[int, int]:
    """The last recorded offset of each partition of one topic's dataset."""
    last: dict[int, int] = {}
    for path in folder.glob("hour=*/p*.parquet"):
        m = _FILE.match(path.name)
        if m:
            p, hi = int(m.group(1)), int(m.group(3))
            last[p] = max(last.get(p, -1), hi)
    return last


def _write(folder: Path, partition: int, hour: str, rows: list[dict[str, Any]], meta: dict[bytes, bytes]) -> None:
    target = folder / f"hour={hour}"
    target.mkdir(parents=True, exist_ok=True)
    name = f"p{partition}-{rows[0]['offset']:012d}-{rows[-1]['offset']:012d}.parquet"
    table = pa.Table.from_pylist(rows, schema=SCHEMA).replace_schema_metadata(meta)
    tmp = target / f".{name}.tmp"
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(target / name)


def _metadata(topic: str) -> dict[bytes, bytes]:
    meta = {b"schedmate.topic": topic.encode()}
    with contextlib.suppress(Exception):  # a topic outside the contract is recorded as bytes all the same
        spec = topic_by_name(topic)
        version = spec.model.model_fields["schema_version"].default
        meta[b"schedmate.schema_version"] = str(version).encode()
        meta[b"schedmate.json_schema"] = json.dumps(spec.json_schema(), sort_keys=True).encode()
    return meta


async def _started(client: Any, bootstrap: str) -> None:
    """Start an aiokafka client, or one :class:`BrokerError` saying what to do."""
    try:
        await asyncio.wait_for(client.start(), 15)
    except (KafkaConnectionError, TimeoutError) as exc:
        with contextlib.suppress(Exception):
            await client.stop()
        raise BrokerError(f"cannot reach the Kafka broker at {bootstrap}: is it running? (`schedmate up`)") from exc


async def _consumer(settings: Settings) -> AIOKafkaConsumer:
    bootstrap = resolve_bootstrap(settings)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                                **client_options(settings))  # fmt: skip
    await _started(consumer, bootstrap)
    return consumer


async def record(
    settings: Settings,
    topics: list[str],
    out: Path,
    *,
    follow: bool = False,
    stop: asyncio.Event | None = None,
    flush_rows: int = 20000,
    flush_s: float = 5.0,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Append every record of ``topics`` not yet in ``out``; without ``follow`` stop at the end offsets seen at the
    start, with it run until ``stop`` is set (then flush). Returns records written per topic."""
    consumer = await _consumer(settings)
    written: dict[str, int] = dict.fromkeys(topics, 0)
    try:
        parts: list[TopicPartition] = []
        for topic in topics:
            ids = consumer.partitions_for_topic(topic)
            if not ids:
                await consumer.topics()  # refreshes the cluster metadata
                ids = consumer.partitions_for_topic(topic)
            if not ids:
                raise ArchiveError(f"the broker has no topic {topic!r}")
            parts += [TopicPartition(topic, p) for p in sorted(ids)]
        consumer.assign(parts)
        done = {t: recorded_offsets(out / t) for t in topics}
        for tp in parts:
            last = done[tp.topic].get(tp.partition)
            if last is None:
                await consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, last + 1)
        ends = await consumer.end_offsets(parts)
        metas = {t: _metadata(t) for t in topics}
        buf: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
        buffered, last_flush = 0, time.monotonic()

        def flush() -> None:
            nonlocal buffered, last_flush
            for (topic, partition, hour), rows in buf.items():
                _write(out / topic, partition, hour, rows, metas[topic])
                written[topic] += len(rows)
            buf.clear()
            buffered, last_flush = 0, time.monotonic()

        while True:
            batch = await consumer.getmany(timeout_ms=200, max_records=5000)
            for tp, msgs in batch.items():
                for m in msgs:
                    buf[(tp.topic, tp.partition, _hour(m.timestamp))].append({
                        "partition": tp.partition, "offset": m.offset, "timestamp_ms": m.timestamp, "key": m.key,
                        "value": m.value, "headers": [{"key": k, "value": v} for k, v in m.headers],
                    })  # fmt: skip
                buffered += len(msgs)
                if progress:
                    progress(len(msgs))
            caught_up = all([await _position(consumer, tp) >= ends[tp] for tp in parts])
            if buffered >= flush_rows or (buffered and (time.monotonic() - last_flush >= flush_s or caught_up)):
                await asyncio.to_thread(flush)
            if (not follow and caught_up) or (stop is not None and stop.is_set()):
                break
        await asyncio.to_thread(flush)
    finally:
        await consumer.stop()
    return written


async def _position(consumer: AIOKafkaConsumer, tp: TopicPartition) -> int:
    return int(await consumer.position(tp))


def _hours(src: Path, topics: list[str]) -> dict[str, list[tuple[str, Path]]]:
    by_hour: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for topic in topics:
        for path in sorted((src / topic).glob("hour=*/p*.parquet")):
            by_hour[path.parent.name.removeprefix("hour=")].append((topic, path))
    return dict(sorted(by_hour.items()))


def archived_topics(src: Path) -> list[str]:
    """Topics with a dataset under ``src``."""
    return sorted(p.name for p in src.iterdir() if p.is_dir() and any(p.glob("hour=*/p*.parquet")))


async def replay(
    settings: Settings,
    src: Path,
    topics: list[str] | None = None,
    *,
    speed: float | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Publish the archive's records (all topics, or ``topics``) in timestamp order; returns records per topic."""
    if not src.is_dir():
        raise ArchiveError(f"no archive at {src}: record one with `schedmate record`")
    names = topics or archived_topics(src)
    missing = [t for t in names if not (src / t).is_dir()]
    if missing or not names:
        raise ArchiveError(f"{src} has no recorded topic {missing[0] if missing else ''!r}; it has "
                           f"{', '.join(archived_topics(src)) or 'none'}")  # fmt: skip
    if speed is not None and speed <= 0:
        raise ArchiveError("--speed must be positive (omit it to replay as fast as possible)")
    bootstrap = resolve_bootstrap(settings)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, **client_options(settings),
                                **producer_options(settings))  # fmt: skip
    await _started(producer, bootstrap)
    sent: dict[str, int] = dict.fromkeys(names, 0)
    try:
        parts = {t: await producer.partitions_for(t) for t in names}
        t0: int | None = None
        w0 = time.monotonic()
        pending: list[asyncio.Future[Any]] = []
        for _, files in _hours(src, names).items():
            rows: list[tuple[int, str, int, int, dict[str, Any]]] = []
            for topic, path in files:
                for r in (await asyncio.to_thread(pq.read_table, path)).to_pylist():
                    rows.append((r["timestamp_ms"], topic, r["partition"], r["offset"], r))
            rows.sort(key=lambda x: x[:4])
            for ts, topic, partition, _, r in rows:
                if speed is not None:
                    t0 = ts if t0 is None else t0
                    wait = w0 + (ts - t0) / 1000.0 / speed - time.monotonic()
                    if wait > 0:
                        await asyncio.gather(*pending)
                        if progress:
                            progress(len(pending))
                        pending.clear()
                        await asyncio.sleep(wait)
                pending.append(await producer.send(
                    topic, value=r["value"], key=r["key"], timestamp_ms=ts,
                    partition=partition if partition in parts[topic] else None,
                    headers=[(h["key"], h["value"]) for h in r["headers"]],
                ))  # fmt: skip
                sent[topic] += 1
                if len(pending) >= 1000:
                    await asyncio.gather(*pending)
                    if progress:
                        progress(len(pending))
                    pending.clear()
        await asyncio.gather(*pending)
        if progress:
            progress(len(pending))
    finally:
        await producer.stop()
    return sent


def describe(src: Path) -> dict[str, dict[str, Any]]:
    """Records, hours and recorded schema version per topic of an archive."""
    out: dict[str, dict[str, Any]] = {}
    for topic in archived_topics(src):
        files = sorted((src / topic).glob("hour=*/p*.parquet"))
        meta = pq.read_schema(files[0]).metadata or {}
        out[topic] = {
            "records": sum(pq.read_metadata(f).num_rows for f in files),
            "hours": len({f.parent.name for f in files}),
            "schema_version": meta.get(b"schedmate.schema_version", b"").decode() or None,
        }
    return out
