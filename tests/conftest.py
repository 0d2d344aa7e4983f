"""Shared fixtures: a real embedded broker per test, worker processes, event collection."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas import Event, TopicSpec

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


REAL_KAFKA = os.environ.get("SCHEDMATE_TEST_BROKER", "embedded") == "kafka"


@pytest.fixture
async def broker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    """A fresh broker with every topic (4 partitions): the embedded Tansu process, or with
    ``SCHEDMATE_TEST_BROKER=kafka`` a 3-node Apache Kafka cluster (replication 3, min.insync.replicas 2)."""
    if REAL_KAFKA:
        from schedmate.infra.kafka import ensure_topics  # noqa: PLC0415
        from schedmate.infra.run.kafka_cluster import KafkaCluster  # noqa: PLC0415

        async with KafkaCluster(tmp_path_factory.mktemp("kafka")) as k:
            await ensure_topics(k.bootstrap, 4, replication_factor=3)
            yield k
        return
    b = EmbeddedBroker(partitions=4)
    await b.start()
    try:
        yield b
    finally:
        await b.stop()


@pytest.fixture
def settings(tmp_path: Path, broker: EmbeddedBroker) -> Settings:
    """Settings pointing at the test broker, data under tmp_path."""
    real = {"replication_factor": 3, "idempotence": True} if REAL_KAFKA else {}
    return Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "data", metrics_interval_s=0.5, **real)


class WorkerProcs:
    """Starts `schedmate worker` processes against a broker and stops them all at the end."""

    def __init__(self, bootstrap: str, data_dir: Path) -> None:
        self.bootstrap = bootstrap
        self.data_dir = data_dir
        self.procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[Any] = []

    def start(
        self, classify: bool = False, interval: float = 0.5, app_id: str = "schedmate-test", **extra_env: str
    ) -> subprocess.Popen[bytes]:
        env = dict(
            os.environ,
            SCHEDMATE_BROKER=f"kafka://{self.bootstrap}",
            SCHEDMATE_DATA_DIR=str(self.data_dir),
            SCHEDMATE_METRICS_INTERVAL_S=str(interval),
            SCHEDMATE_APP_ID=app_id,
            SCHEDMATE_LOG_JSON="true",
        )
        if REAL_KAFKA:
            env.update(SCHEDMATE_REPLICATION_FACTOR="3", SCHEDMATE_IDEMPOTENCE="true")
        env.update(extra_env)
        cmd = [sys.executable, "-m", "schedmate.infra.cli", "worker"] + ([] if classify else ["--no-classify"])
        log = open(self.data_dir / f"worker-{len(self.procs)}.log", "wb")  # noqa: SIM115
        self._logs.append(log)
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def stop_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in self._logs:
            log.close()


@pytest.fixture
def workers(broker: EmbeddedBroker, tmp_path: Path) -> Iterator[WorkerProcs]:
    """Worker processes for the test broker (stopped at teardown)."""
    data = tmp_path / "data"
    data.mkdir(parents=True, exist_ok=True)
    w = WorkerProcs(broker.bootstrap, data)
    try:
        yield w
    finally:
        w.stop_all()


async def produce(bootstrap: str, spec: TopicSpec[Any], events: list[Event]) -> None:
    """Publish events keyed as the topic says and wait for all acks."""
    p = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await p.start()
    try:
        futs = [await p.send(spec.name, e.to_bytes(), key=spec.key_of(e)) for e in events]
        await asyncio.gather(*futs)
    finally:
        await p.stop()


async def collect(
    bootstrap: str, topic: str, until: Any, timeout: float = 60.0
) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """Read ``topic`` from the beginning until ``until(messages)`` is true or ``timeout`` passes.

    Returns (partition, offset, key, value) tuples.
    """
    c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False)
    await c.start()
    out: list[tuple[int, int, bytes | None, bytes | None]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            batch = await c.getmany(timeout_ms=300)
            for tp, msgs in batch.items():
                out.extend((tp.partition, m.offset, m.key, m.value) for m in msgs)
            if until(out):
                break
    finally:
        await c.stop()
    return out
