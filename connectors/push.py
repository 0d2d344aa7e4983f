"""`schedmate logs push` (a file or a pipe) and `schedmate logs tail` (followed files)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

from schedmate.connectors.chunker import LineChunkStream
from schedmate.connectors.publisher import Publisher
from schedmate.connectors.tailer import LogTailer
from schedmate.infra.settings import Settings
from schedmate.schemas import logs_chunks

__all__ = ["push_stream", "tail_files"]


async def push_stream(settings: Settings, job_id: str, file: str, source: str = "stdout", first_line: int = 1) -> int:
    """Publish every line of ``file`` (or standard input for ``-``); return the number of lines."""
    stream = LineChunkStream(job_id, source=source, next_line=first_line)
    loop = asyncio.get_running_loop()
    n = 0
    async with Publisher(settings) as pub:
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
                    await pub.publish(logs_chunks.TOPIC, cut.chunk, wait=False)
            for cut in stream.finish():
                n += len(cut.chunk.lines)
                await pub.publish(logs_chunks.TOPIC, cut.chunk, wait=False)
            await pub.flush()
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()
    return n


async def tail_files(settings: Settings, patterns: list[str], job_id: str | None, once: bool) -> None:
    """Follow ``patterns`` until SIGINT/SIGTERM (or once through)."""
    async with Publisher(settings) as pub:
        tailer = LogTailer(patterns, pub, settings.data_dir / "tailer", job_id=job_id)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, tailer.stop)
        await tailer.run(once=once)
