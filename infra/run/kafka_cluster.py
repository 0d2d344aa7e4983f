"""A real Apache Kafka cluster (KRaft, combined broker+controller nodes) on this machine, for tests and benches.

Built from the jars ``infra/kafka_dist/assemble.sh`` fetches from Maven Central (a JVM 17+ runs them).
Three nodes by default, replication factor 3 and ``min.insync.replicas=2``, so one node may die
without losing an acknowledged write. Nodes can be killed and restarted to test fault tolerance.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Self

from aiokafka import AIOKafkaProducer
from aiokafka.helpers import create_ssl_context

from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka_acls import AclRule
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.processes import free_port

__all__ = ["ClusterSecurity", "KafkaCluster", "assemble_kafka"]

log = get_logger(__name__)
_REPO = Path(__file__).resolve().parents[2]
_ASSEMBLE = _REPO / "infra" / "kafka_dist" / "assemble.sh"
_LOG4J = """Configuration:
  Appenders:
    File: {name: F, fileName: "%s", PatternLayout: {pattern: "[%%d] %%p %%m (%%c)%%n"}}
  Loggers:
    Root: {level: WARN, AppenderRef: [{ref: F}]}
    Logger: [{name: kafka.server.KafkaRaftServer, level: INFO}]
"""


def assemble_kafka(dest: Path | None = None) -> Path:
    """The assembled Kafka folder (``.kafka`` in the repository by default), assembling it if needed."""
    dest = dest or Path(os.environ.get("SCHEDMATE_KAFKA_HOME", _REPO / ".kafka"))
    if shutil.which("java") is None:
        raise BrokerError("a real Kafka needs a JVM 17+: install one (e.g. apt install openjdk-17-jre-headless)")
    done = subprocess.run(["bash", str(_ASSEMBLE), str(dest)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BrokerError(f"assembling Kafka from Maven Central failed: {done.stderr.strip()[-800:]}")
    return dest


@dataclass(frozen=True)
class ClusterSecurity:
    """SASL/SCRAM-SHA-256 over TLS on the client listener, with ACLs enforced (StandardAuthorizer).

    ``keystore`` is a PKCS#12 file holding the brokers' private key and certificate, ``cafile`` the PEM
    certificate clients trust (:meth:`generate` makes both with the JDK's keytool). ``users`` are the
    SCRAM credentials written at format time (``--add-scram``); ``admin`` (a super user) is the brokers'
    own inter-broker identity. The controller listener stays PLAINTEXT on 127.0.0.1 (its anonymous
    principal is a super user): a local test cluster, not a template for production, where the
    controller listener would use mutual TLS.
    """

    keystore: Path
    keystore_password: str
    cafile: Path
    users: dict[str, str]
    admin: str = "admin"
    mechanism: str = "SCRAM-SHA-256"

    @classmethod
    def generate(cls, folder: Path, users: dict[str, str], admin: str = "admin") -> ClusterSecurity:
        """A self-signed certificate for 127.0.0.1/localhost (keytool, valid 7 days) and the given SCRAM users."""
        folder.mkdir(parents=True, exist_ok=True)
        store, cert, pw = folder / "broker.p12", folder / "ca.pem", secrets.token_hex(16)
        if shutil.which("keytool") is None:
            raise BrokerError("TLS for the test cluster needs the JDK's keytool on PATH")
        for cmd in (
            ["keytool", "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "7",
             "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
             "-keystore", str(store), "-storepass", pw, "-keypass", pw],
            ["keytool", "-exportcert", "-rfc", "-alias", "broker", "-keystore", str(store), "-storepass", pw,
             "-file", str(cert)],
        ):  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
            if done.returncode != 0:
                raise BrokerError(f"keytool failed: {(done.stderr or done.stdout).strip()[-500:]}")
        return cls(keystore=store, keystore_password=pw, cafile=cert, users=users, admin=admin)

    def client_options(self, user: str) -> dict[str, object]:
        """aiokafka options to connect as ``user``."""
        return {"security_protocol": "SASL_SSL", "ssl_context": create_ssl_context(cafile=str(self.cafile)),
                "sasl_mechanism": self.mechanism, "sasl_plain_username": user,
                "sasl_plain_password": self.users[user]}  # fmt: skip

    def admin_jaas(self) -> str:
        """The JAAS line of the admin user (the brokers' inter-broker identity, admin clients)."""
        return (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{self.admin}" '
                f'password="{self.users[self.admin]}";')  # fmt: skip

    def env(self, user: str) -> dict[str, str]:
        """``SCHEDMATE_*`` environment for a SchedMate process connecting as ``user``."""
        return {"SCHEDMATE_SECURITY_PROTOCOL": "SASL_SSL", "SCHEDMATE_SASL_MECHANISM": self.mechanism,
                "SCHEDMATE_SASL_USERNAME": user, "SCHEDMATE_SASL_PASSWORD": self.users[user],
                "SCHEDMATE_SSL_CAFILE": str(self.cafile)}  # fmt: skip


@dataclass
class _Node:
    node_id: int
    port: int
    controller_port: int
    folder: Path
    proc: subprocess.Popen[bytes] | None = None
    out: IO[bytes] | None = None


class KafkaCluster(AsyncLifecycle):
    """``async with KafkaCluster(tmp) as k: k.bootstrap`` — ``nodes`` KRaft nodes on localhost."""

    def __init__(
        self,
        folder: Path,
        nodes: int = 3,
        heap_mb: int = 512,
        extra: dict[str, str] | None = None,
        security: ClusterSecurity | None = None,
    ) -> None:
        self.folder = folder
        self.security = security
        self.heap_mb = heap_mb
        self.extra = extra or {}
        self.home: Path | None = None
        self.nodes = [_Node(i + 1, free_port(), free_port(), folder / f"node-{i + 1}") for i in range(nodes)]
        self.cluster_id = _cluster_id()

    @property
    def bootstrap(self) -> str:
        """host:port of every node."""
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    @property
    def _protocol(self) -> str:
        return "SASL_SSL" if self.security else "PLAINTEXT"

    def _properties(self, n: _Node) -> str:
        voters = ",".join(f"{m.node_id}@127.0.0.1:{m.controller_port}" for m in self.nodes)
        rf = min(3, len(self.nodes))
        props = {
            "process.roles": "broker,controller",
            "node.id": str(n.node_id),
            "controller.quorum.voters": voters,
            "listeners": f"{self._protocol}://127.0.0.1:{n.port},CONTROLLER://127.0.0.1:{n.controller_port}",
            "advertised.listeners": f"{self._protocol}://127.0.0.1:{n.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            **(self._secure_properties() if self.security else {}),
            "log.dirs": str(n.folder / "data"),
            "num.partitions": "4",
            "default.replication.factor": str(rf),
            "min.insync.replicas": str(min(2, rf)),
            "offsets.topic.replication.factor": str(rf),
            "transaction.state.log.replication.factor": str(rf),
            "transaction.state.log.min.isr": str(min(2, rf)),
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
            "unclean.leader.election.enable": "false",
            **self.extra,
        }
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def _secure_properties(self) -> dict[str, str]:
        sec = self.security
        assert sec is not None
        return {
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "SASL_SSL",
            "sasl.enabled.mechanisms": sec.mechanism,
            "sasl.mechanism.inter.broker.protocol": sec.mechanism,
            f"listener.name.sasl_ssl.{sec.mechanism.lower()}.sasl.jaas.config": sec.admin_jaas(),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(sec.keystore),
            "ssl.keystore.password": sec.keystore_password,
            "ssl.key.password": sec.keystore_password,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(sec.cafile),
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:{sec.admin};User:ANONYMOUS",
            "allow.everyone.if.no.acl.found": "false",
        }

    def _scram_args(self) -> list[str]:
        """``--add-scram`` arguments of ``kafka-storage format`` for every user (none without security)."""
        sec = self.security
        if sec is None:
            return []
        return [
            a for user, pw in sec.users.items() for a in ("--add-scram", f"{sec.mechanism}=[name={user},password={pw}]")
        ]

    def client_options(self) -> dict[str, object]:
        """aiokafka options for an administrator client (empty for a PLAINTEXT cluster)."""
        return self.security.client_options(self.security.admin) if self.security else {}

    def add_acls(self, rules: list[AclRule]) -> None:
        """Create ACLs with Kafka's own AclCommand, as the admin user."""
        sec = self.security
        if sec is None:
            raise BrokerError("ACLs need a cluster started with security (ClusterSecurity)")
        cfg = self.folder / "admin.properties"
        cfg.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism={sec.mechanism}\n"
                       f"sasl.jaas.config={sec.admin_jaas()}\n"
                       f"ssl.truststore.type=PEM\nssl.truststore.location={sec.cafile}\n")  # fmt: skip
        for rule in rules:
            cmd = self._java(self.nodes[0], "org.apache.kafka.tools.AclCommand", "--bootstrap-server", self.bootstrap,
                             "--command-config", str(cfg), *rule.args())  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
            if done.returncode != 0:
                raise BrokerError(f"adding ACLs {rule.args()} failed: {(done.stderr or done.stdout).strip()[-800:]}")

    def _java(self, n: _Node, *args: str) -> list[str]:
        assert self.home is not None
        return ["java", f"-Xmx{self.heap_mb}m", "-Xms128m", "-XX:+UseG1GC", "-Djava.awt.headless=true",
                f"-Dlog4j2.configurationFile={n.folder / 'log4j2.yaml'}", "-cp", str(self.home / "lib" / "*"),
                *args]  # fmt: skip

    async def start(self) -> Self:
        """Assemble (if needed), format every node's storage, start the nodes and wait until all serve."""
        self.home = await asyncio.to_thread(assemble_kafka)
        for n in self.nodes:
            n.folder.mkdir(parents=True, exist_ok=True)
            (n.folder / "server.properties").write_text(self._properties(n))
            (n.folder / "log4j2.yaml").write_text(_LOG4J % (n.folder / "server.log"))
            scram = self._scram_args()
            fmt = self._java(n, "kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c",
                             str(n.folder / "server.properties"), "--ignore-formatted", *scram)  # fmt: skip
            done = await asyncio.to_thread(subprocess.run, fmt, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise BrokerError(f"formatting Kafka node {n.node_id} failed: {done.stderr.strip()[-800:]}")
        for n in self.nodes:
            self._spawn(n)
        await self.wait_ready(len(self.nodes))
        return self

    def _spawn(self, n: _Node) -> None:
        if n.out is not None:
            n.out.close()
        n.out = (n.folder / "stdout.log").open("ab")
        n.proc = subprocess.Popen(
            self._java(n, "kafka.Kafka", str(n.folder / "server.properties")),
            stdout=n.out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.info("kafka node started", node=n.node_id, port=n.port, pid=n.proc.pid)

    async def wait_ready(self, brokers: int, timeout_s: float = 120.0) -> None:
        """Wait until ``brokers`` nodes are in the cluster's metadata."""
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            for n in self.nodes:
                if n.proc is not None and n.proc.poll() is not None:
                    tail = (n.folder / "stdout.log").read_text(errors="replace")[-1500:]
                    raise BrokerError(f"Kafka node {n.node_id} exited ({n.proc.returncode}): {tail}")
            p = AIOKafkaProducer(bootstrap_servers=self.bootstrap, request_timeout_ms=5000, **self.client_options())
            try:
                await p.start()
                await p.client.force_metadata_update()
                if len(p.client.cluster.brokers()) >= brokers:
                    return
            except Exception as exc:  # noqa: BLE001 -- not up yet: retry until the deadline
                last = exc
            finally:
                with contextlib.suppress(Exception):
                    await p.stop()
            await asyncio.sleep(1.0)
        raise BrokerError(f"the Kafka cluster at {self.bootstrap} did not come up in {timeout_s:g} s: {last}")

    def kill(self, node_id: int) -> None:
        """SIGKILL one node (a crash: no clean shutdown)."""
        n = self.nodes[node_id - 1]
        if n.proc is not None and n.proc.poll() is None:
            os.killpg(n.proc.pid, signal.SIGKILL)
            n.proc.wait()
        if n.out is not None:
            n.out.close()
            n.out = None
        log.info("kafka node killed", node=node_id)

    async def restart(self, node_id: int) -> None:
        """Start a killed node again and wait until the whole cluster serves."""
        self._spawn(self.nodes[node_id - 1])
        await self.wait_ready(len(self.nodes))

    async def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after 20 s)."""
        for n in self.nodes:
            if n.proc is not None and n.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(n.proc.pid, signal.SIGTERM)
        for n in self.nodes:
            if n.proc is not None:
                try:
                    await asyncio.to_thread(n.proc.wait, 20)
                except subprocess.TimeoutExpired:
                    os.killpg(n.proc.pid, signal.SIGKILL)
                    n.proc.wait()
            if n.out is not None:
                n.out.close()


def _cluster_id() -> str:
    """A random cluster id as Kafka makes them: URL-safe base64 of a UUID, never starting with ``-`` (the storage
    tool would read such an id as an option: one id in 64 did, and formatting failed)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid
