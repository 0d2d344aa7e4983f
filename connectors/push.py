"""`schedmate logs push` (a file or a pipe) and `schedmate logs tail` (followed files)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from typing import Any

from schedmate.connectors.chunker import LineChunkStream
from schedmate.connectors.exceptions import ConnectorError
from schedmate.connectors.publisher import Publisher
from schedmate.connectors.tailer import LogTailer
from schedmate.infra.exceptions import BrokerError
from schedmate.infra.settings import Settings
from schedmate.schemas import logs_chunks
from schedmate.schemas.logs_chunks import LogChunk

__all__ = ["push_stream", "tail_files"]

_MAX_PENDING = 64  # chunks in flight before a push waits for their delivery


async def push_stream(
    settings: Settings,
    job_id: str,
    file: str,
    source: str = "stdout",
    first_line: int = 1,
    connect_timeout_s: float = 20.0,
) -> int:
    """Publish every line of ``file`` (or standard input for ``-``); return the number of lines.

    Every send is checked: if any chunk was not stored, :class:`ConnectorError` says how many lines
    were not delivered (and from which line on), so the caller exits non-zero.
    """
    stream = LineChunkStream(job_id, source=source, next_line=first_line)
    loop = asyncio.get_running_loop()
    n = 0
    pending: list[tuple[asyncio.Future[Any], LogChunk]] = []
    lost: list[LogChunk] = []

    async def settle(keep: int) -> None:
        """Wait for all but the ``keep`` latest sends (bounds the chunks held in memory)."""
        while len(pending) > keep:
            fut, chunk = pending.pop(0)
            try:
                await fut
            except Exception:  # noqa: BLE001 -- any failed delivery is counted and reported
                lost.append(chunk)

    async with Publisher(settings, connect_timeout_s=connect_timeout_s) as pub:

        async def send(chunk: LogChunk) -> None:
            try:
                fut = await pub.publish(logs_chunks.TOPIC, chunk, wait=False)
            except BrokerError:
                lost.append(chunk)
                return
            assert fut is not None
            pending.append((fut, chunk))
            await settle(_MAX_PENDING)

        fh = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: PTH123, SIM115, ASYNC230
        try:
            while True:
                data = await loop.run_in_executor(None, fh.read1 if hasattr(fh, "read1") else fh.read, 65536)
                if not data:
                    break
                cuts = stream.feed(data)
                if (due := stream.due()) is not None:
                    cuts.append(due)
                for cut in cuts:
                    n += len(cut.chunk.lines)
                    await send(cut.chunk)
            for cut in stream.finish():
                n += len(cut.chunk.lines)
                await send(cut.chunk)
            await pub.flush()
            await settle(0)
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()
    if lost:
        missing = sum(len(c.lines) for c in lost)
        first = min(c.first_line for c in lost)
        raise ConnectorError(
            f"{missing} of {n} lines were not delivered (from line {first} on; {len(lost)} chunk(s) failed): "
            "check the broker and push the same input again (workers skip the lines they already have)"
        )
    return n


async def tail_files(
    settings: Settings,
    patterns: list[str],
    job_id: str | None,
    once: bool,
    follow_symlinks: bool = False,
    node: str | None = None,
) -> None:
    """Follow ``patterns`` until SIGINT/SIGTERM (or once through); chunks say they were read on ``node``."""
    async with Publisher(settings) as pub:
        tailer = LogTailer(patterns, pub, settings.data_dir / "tailer", job_id=job_id, follow_symlinks=follow_symlinks,
                           node=node or socket.gethostname())  # fmt: skip
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, tailer.stop)
        await tailer.run(once=once)
