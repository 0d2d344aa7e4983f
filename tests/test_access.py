"""Who may write what: SASL/SCRAM over TLS with ACLs on a real Apache Kafka, and signed results where a broker
enforces no ACLs (the embedded one), so a job's credentials or a stray client cannot forge a scheduler action."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError
from pydantic import SecretStr

from schedmate.connectors.publisher import Publisher
from schedmate.connectors.subscriber import Subscriber
from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import ensure_topics
from schedmate.infra.kafka_acls import acl_plan, render_commands
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.run.kafka_cluster import ClusterSecurity, KafkaCluster
from schedmate.infra.settings import Settings
from schedmate.infra.signing import SIGNATURE_HEADER, signature
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk
from schedmate.schemas.scheduler_actions import TOPIC as ACTIONS
from schedmate.schemas.scheduler_actions import SchedulerAction
from tests.conftest import WorkerProcs, collect

pytestmark = pytest.mark.integration
FAILING = [
    "Traceback (most recent call last):",
    '  File "/home/me/train.py", line 9, in <module>',
    "KeyError: 'missing_column'",
]
APP_ID = "schedmate-test"


async def _fail_job(pub: Publisher, job: str, node: str) -> None:
    await pub.publish(EVENTS, JobEvent(job_id=job, kind="started", node=node))
    await pub.publish(CHUNKS, LogChunk(job_id=job, seq=0, first_line=1, lines=FAILING, eof=True))
    await pub.publish(EVENTS, JobEvent(job_id=job, kind="finished", status="failed", exit_code=1))


async def _actions(settings: Settings, until_job: str, timeout: float = 120.0) -> tuple[list[SchedulerAction], int]:
    """Actions a subscriber with ``settings`` yields (from the beginning) until ``until_job``'s arrives and 2 s
    more pass; and how many it dropped as forged."""
    got: list[SchedulerAction] = []
    async with Subscriber(settings, [ACTIONS.name], from_beginning=True) as sub:

        async def read() -> None:
            async for _, ev in sub:
                assert isinstance(ev, SchedulerAction)
                got.append(ev)

        task = asyncio.create_task(read())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not any(a.job_id == until_job for a in got):
            await asyncio.sleep(0.2)
        await asyncio.sleep(2)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return got, sub.forged


async def test_signed_actions_forgeries_are_dropped(broker: EmbeddedBroker, workers: WorkerProcs,
                                                    tmp_path: Path) -> None:  # fmt: skip
    """On a broker without ACLs anyone may write scheduler.actions. With a signing key the worker signs its
    actions and a subscriber holding the key yields only those: an unsigned action, one signed with another
    key, and the worker's own signed record replayed onto another job's key are all dropped and counted."""
    key = secrets.token_hex(16)
    workers.start(app_id=APP_ID, SCHEDMATE_SIGNING_KEY=key)
    base = Settings(broker=f"kafka://{broker.bootstrap}", data_dir=tmp_path / "sub")
    keyed = base.model_copy(update={"signing_key": SecretStr(key)})
    forged = SchedulerAction(job_id="victim", action="drain_node_and_requeue", node="node-9", reason="trust me")
    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await p.start()
    try:
        value = forged.to_bytes()
        await p.send_and_wait(ACTIONS.name, value, key=b"victim")
        bad = signature(b"not-the-key", ACTIONS.name, b"victim", value)
        await p.send_and_wait(ACTIONS.name, value, key=b"victim", headers=[(SIGNATURE_HEADER, bad)])
        async with Publisher(base) as pub:
            await _fail_job(pub, "signed-job", "node-1")
        real = await collect(broker.bootstrap, ACTIONS.name, lambda m: any(k == b"signed-job" for _, _, k, _ in m), 90)
        genuine = next(v for _, _, k, v in real if k == b"signed-job")
        sig = signature(key.encode(), ACTIONS.name, b"signed-job", genuine)
        await p.send_and_wait(ACTIONS.name, genuine, key=b"victim", headers=[(SIGNATURE_HEADER, sig)])
    finally:
        await p.stop()
    trusted, dropped = await _actions(keyed, "signed-job")
    assert [a.job_id for a in trusted] == ["signed-job"] and dropped == 3
    everything, _ = await _actions(base, "signed-job")  # without the key nothing is checked: the forgeries show
    assert sorted(a.job_id for a in everything) == ["signed-job", "signed-job", "victim", "victim"]


USERS = ("admin", "worker", "connector", "scheduler")


@pytest.fixture
async def secure_kafka(tmp_path: Path) -> AsyncIterator[KafkaCluster]:
    """A 3-node Kafka with SASL_SSL (SCRAM-SHA-256) clients, ACLs enforced, SchedMate's topics and its ACL plan."""
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("needs a JVM and Maven")
    sec = ClusterSecurity.generate(tmp_path / "tls", {u: secrets.token_hex(12) for u in USERS})
    async with KafkaCluster(tmp_path / "kafka", security=sec) as k:
        await ensure_topics(k.bootstrap, 4, k.client_options(), replication_factor=3)
        await asyncio.to_thread(k.add_acls, acl_plan("worker", "connector", "scheduler", app_id=APP_ID))
        yield k


async def test_on_sasl_ssl_only_the_worker_may_write_actions(secure_kafka: KafkaCluster, tmp_path: Path) -> None:
    """Connector, worker and scheduler adapter each authenticate as their own principal over TLS: a failed job's
    action reaches the adapter, the connector's principal is refused on scheduler.actions (and the adapter's
    too), a wrong password and a plaintext client are refused."""
    k = secure_kafka
    sec = k.security
    assert sec is not None
    data = tmp_path / "data"
    data.mkdir()

    def as_user(user: str) -> Settings:
        return Settings(broker=f"kafka://{k.bootstrap}", data_dir=data, replication_factor=3, idempotence=True,
                        security_protocol="SASL_SSL", sasl_mechanism=sec.mechanism, sasl_username=user,
                        sasl_password=SecretStr(sec.users[user]), ssl_cafile=sec.cafile)  # fmt: skip

    workers = WorkerProcs(k.bootstrap, data)
    try:
        workers.start(app_id=APP_ID, SCHEDMATE_REPLICATION_FACTOR="3", SCHEDMATE_IDEMPOTENCE="true",
                      **sec.env("worker"))  # fmt: skip
        forged = SchedulerAction(job_id="victim", action="drain_node_and_requeue", node="node-9")
        async with Publisher(as_user("connector")) as pub:
            await _fail_job(pub, "secure-job", "node-1")
            with pytest.raises(BrokerError, match="TopicAuthorizationFailed"):
                await pub.publish(ACTIONS, forged)
        with pytest.raises(BrokerError, match="ClusterAuthorizationFailed"):  # adapters may not produce at all
            async with Publisher(as_user("scheduler")) as pub:
                await pub.publish(ACTIONS, forged)
        got, _ = await _actions(as_user("scheduler"), "secure-job", timeout=150)
        assert [a.job_id for a in got] == ["secure-job"] and got[0].action == "notify_user"
    finally:
        workers.stop_all()
    wrong = {**sec.client_options("connector"), "sasl_plain_password": "guess"}
    for options in (wrong, {}):
        p = AIOKafkaProducer(bootstrap_servers=k.bootstrap, request_timeout_ms=5000, **options)
        with pytest.raises((KafkaError, KafkaConnectionError, asyncio.TimeoutError)):
            await asyncio.wait_for(p.start(), 30)
        await p.stop()


def test_the_acl_plan_follows_the_contract() -> None:
    """Connectors write only the jobs' inputs, the worker alone writes results, adapters only read results."""
    rules = acl_plan("worker", "connector", "sched")
    writes: dict[str, set[str]] = {}
    for r in rules:
        if r.resource == "topic" and "Write" in r.operations:
            for name in r.names:
                writes.setdefault(name, set()).add(r.principal)
    assert writes["scheduler.actions"] == {"User:worker"} and writes["jobs.failures"] == {"User:worker"}
    assert writes["logs.chunks"] == {"User:connector"} and writes["jobs.events"] == {"User:connector"}
    assert not any("User:sched" in w for w in writes.values())
    text = render_commands(rules, "b:9093", "admin.properties")
    assert text.count("kafka-acls.sh --bootstrap-server b:9093 --command-config admin.properties --add") == len(rules)
