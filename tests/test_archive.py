"""Record topics to Parquet and replay them, against real broker processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schedmate.connectors.archive import describe, record, replay
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings

_TOPICS = ["jobs.submitted", "logs.chunks", "jobs.metrics"]


async def _produce(
    bootstrap: str, rows: list[tuple[str, int, bytes | None, bytes, list[tuple[str, bytes]], int]]
) -> None:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await p.start()
    try:
        for topic, partition, key, value, headers, ts in rows:
            await p.send_and_wait(topic, value, key=key, partition=partition, headers=headers, timestamp_ms=ts)
    finally:
        await p.stop()


async def _consume(bootstrap: str, topics: list[str], n: int) -> list[tuple[str, int, bytes | None, bytes, tuple, int]]:
    c = AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False)
    await c.start()
    out = []
    try:
        deadline = time.monotonic() + 30
        while len(out) < n and time.monotonic() < deadline:
            for tp, msgs in (await c.getmany(timeout_ms=500)).items():
                out += [(tp.topic, tp.partition, m.key, m.value, tuple(m.headers), m.timestamp) for m in msgs]
    finally:
        await c.stop()
    return out


def _rows(n: int, t0: int) -> list[tuple[str, int, bytes | None, bytes, list[tuple[str, bytes]], int]]:
    rows = []
    for i in range(n):
        topic = _TOPICS[i % 3]
        key = None if i % 7 == 0 else f"job-{i % 5}".encode()
        value = json.dumps({"i": i, "text": "é\u2028"}).encode() if i % 4 else bytes(range(256))  # non-UTF-8 too
        headers = [("schedmate-sig", f"sig{i}".encode()), ("trace", b"\x00\xff")] if i % 2 else []
        rows.append((topic, i % 4, key, value, headers, t0 + i * 90_000))  # 90 s apart: spans several hours
    return rows


async def test_record_then_replay_round_trips_every_record_exactly(broker: EmbeddedBroker, tmp_path: Path) -> None:
    """Records on three topics (null keys, binary values, headers, explicit timestamps over several hours) are
    recorded into hour-partitioned Parquet datasets and replayed into a second broker process byte for byte:
    same topic, partition, key, value, headers and timestamp; recording again writes nothing twice."""
    t0 = int(time.time() * 1000) - 6 * 3600_000
    rows = _rows(120, t0)
    await _produce(broker.bootstrap, rows)
    s1 = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "d1")
    out = tmp_path / "archive"
    written = await record(s1, _TOPICS, out)
    assert written == dict.fromkeys(_TOPICS, 40)
    hours = {p.name for p in (out / "logs.chunks").iterdir()}
    assert len(hours) >= 3 and all(h.startswith("hour=") for h in hours)
    meta = pq.read_schema(next((out / "jobs.submitted").glob("hour=*/*.parquet"))).metadata
    assert meta[b"schedmate.topic"] == b"jobs.submitted" and b"schedmate.json_schema" in meta

    assert await record(s1, _TOPICS, out) == dict.fromkeys(_TOPICS, 0)  # nothing new: nothing written
    await _produce(broker.bootstrap, [(t, 0, b"late", b"late", [], t0 + 10**7) for t in _TOPICS])
    assert await record(s1, _TOPICS, out) == dict.fromkeys(_TOPICS, 1)  # resumes after the last recorded offset
    assert describe(out)["jobs.metrics"]["records"] == 41

    second = EmbeddedBroker(partitions=4)
    await second.start()
    try:
        s2 = Settings(broker=f"kafka://{second.bootstrap}", data_dir=tmp_path / "d2")
        sent = await replay(s2, out)
        assert sent == dict.fromkeys(_TOPICS, 41)
        got = await _consume(second.bootstrap, _TOPICS, 123)
    finally:
        await second.stop()
    want = [(t, p, k, v, tuple(h), ts) for t, p, k, v, h, ts in rows]
    want += [(t, 0, b"late", b"late", (), t0 + 10**7) for t in _TOPICS]
    assert sorted(got, key=repr) == sorted(want, key=repr)


async def test_replay_keeps_the_original_pace_divided_by_speed(broker: EmbeddedBroker, tmp_path: Path) -> None:
    """Three records 1 s apart take about 2 s at speed 1, about 0.5 s at speed 4, and no waiting when fast."""
    t0 = int(time.time() * 1000)
    await _produce(broker.bootstrap, [("jobs.events", 0, b"k", f"{i}".encode(), [], t0 + 1000 * i) for i in range(3)])
    s = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "d")
    out = tmp_path / "a"
    await record(s, ["jobs.events"], out)
    took = {}
    for speed in (1.0, 4.0, None):
        start = time.monotonic()
        await replay(s, out, speed=speed)
        took[speed] = time.monotonic() - start
    assert 1.9 <= took[1.0] < 4.0
    assert 0.45 <= took[4.0] < 1.5
    assert took[None] < 0.45


def test_cli_record_and_replay_with_clear_errors(broker: EmbeddedBroker, tmp_path: Path) -> None:
    """`schedmate record --json` / `schedmate replay-topics --json` print what they did; a missing archive or an
    unknown topic is one clear error."""
    env = {"SCHEDMATE_BROKER": f"kafka://{broker.bootstrap}", "SCHEDMATE_DATA_DIR": str(tmp_path / "d"),
           "PATH": "/usr/bin:/bin"}  # fmt: skip
    cli = [sys.executable, "-m", "schedmate.infra.cli"]
    out = tmp_path / "arch"
    rec = subprocess.run([*cli, "record", "--out", str(out), "--topics", "jobs.events", "--json"], env=env,
                         capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert json.loads(rec.stdout)["written"] == {"jobs.events": 0}
    missing = subprocess.run([*cli, "replay-topics", str(tmp_path / "nope")], env=env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
    assert missing.returncode == 2 and "no archive at" in missing.stderr
    unknown = subprocess.run([*cli, "record", "--out", str(out), "--topics", "no.such.topic"], env=env,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert unknown.returncode == 2 and "no topic 'no.such.topic'" in unknown.stderr


async def test_record_follow_flushes_on_sigterm(broker: EmbeddedBroker, tmp_path: Path) -> None:
    """`schedmate record --follow` keeps recording what arrives after it started and, on SIGTERM, writes what it
    holds and exits 0 — nothing produced before the signal is lost."""
    import asyncio  # noqa: PLC0415
    import os  # noqa: PLC0415
    import signal  # noqa: PLC0415

    env = {**os.environ, "SCHEDMATE_BROKER": f"kafka://{broker.bootstrap}", "SCHEDMATE_DATA_DIR": str(tmp_path / "d")}
    out = tmp_path / "arch"
    proc = subprocess.Popen([sys.executable, "-m", "schedmate.infra.cli", "record", "--out", str(out), "--topics",
                             "jobs.events", "--follow", "--json"], env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        await asyncio.sleep(4)
        t0 = int(time.time() * 1000)
        await _produce(broker.bootstrap, [("jobs.events", i % 4, b"k", f"{i}".encode(), [], t0) for i in range(25)])
        await asyncio.sleep(2)
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert json.loads(stdout)["written"] == {"jobs.events": 25}
    assert describe(out)["jobs.events"]["records"] == 25
