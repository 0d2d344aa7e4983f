"""The log tailer against the real broker: live files, kill -9 and restart, rotation, truncation."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from schedmate.connectors.publisher import Publisher
from schedmate.connectors.tailer import LogTailer
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk
from tests.conftest import collect

pytestmark = pytest.mark.integration


def chunks_of(msgs: list[tuple[int, int, Any, Any]]) -> list[LogChunk]:
    """Decoded chunks in partition/offset order."""
    return [CHUNKS.decode(v) for _, _, _, v in sorted(msgs, key=lambda m: (m[0], m[1]))]


def delivered_lines(chunks: list[LogChunk]) -> dict[int, str]:
    """Line number → text after consumer-side de-duplication; asserts duplicates are identical."""
    by_seq: dict[int, LogChunk] = {}
    for c in chunks:
        if not c.lines:
            continue
        if c.seq in by_seq:
            assert by_seq[c.seq].lines == c.lines and by_seq[c.seq].first_line == c.first_line, (
                "a re-sent chunk differs"
            )
        by_seq[c.seq] = c
    out: dict[int, str] = {}
    for c in by_seq.values():
        for i, line in enumerate(c.lines):
            assert c.first_line + i not in out, f"line {c.first_line + i} delivered in two different chunks"
            out[c.first_line + i] = line
    return out


async def test_follows_a_growing_file_with_bars_and_bad_bytes(
    broker: EmbeddedBroker, settings: Settings, tmp_path: Path
) -> None:
    """Lines appended over time arrive in order, \\r bars inside lines, invalid UTF-8 replaced."""
    log = tmp_path / "train.log"
    log.write_bytes(b"")
    async with Publisher(settings) as pub:
        tailer = LogTailer([str(log)], pub, tmp_path / "cp", job_id="job-a", poll_s=0.02)
        task = asyncio.create_task(tailer.run())
        expected = []
        with log.open("ab") as fh:
            for i in range(300):
                line = b"step %d loss 1.0\r bar %d/300 \xff" % (i, i)
                fh.write(line + b"\n")
                fh.flush()
                expected.append(line.decode("utf-8", errors="replace"))
                if i % 50 == 0:
                    await asyncio.sleep(0.05)
        msgs = await collect(broker.bootstrap, CHUNKS.name, lambda m: len(delivered_lines(chunks_of(m))) >= 300, 30)
        tailer.stop()
        await task
    got = delivered_lines(chunks_of(msgs))
    assert [got[i] for i in range(1, 301)] == expected


def _run_tailer(log: Path, settings: Settings) -> subprocess.Popen[bytes]:
    env = dict(os.environ, SCHEDMATE_BROKER=settings.broker, SCHEDMATE_DATA_DIR=str(settings.data_dir))
    return subprocess.Popen(
        [sys.executable, "-m", "schedmate.infra.cli", "logs", "tail", str(log), "--job", "job-k"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


async def test_kill_9_and_restart_loses_and_duplicates_nothing(
    broker: EmbeddedBroker, settings: Settings, tmp_path: Path
) -> None:
    """The tailer is SIGKILLed twice mid-stream; every line arrives once, seq numbers stay contiguous."""
    log = tmp_path / "big.log"
    n_total = 0
    proc = _run_tailer(log, settings)
    try:
        with log.open("a") as fh:
            for round_ in range(3):
                for _ in range(4000):
                    n_total += 1
                    fh.write(f"iter {n_total}: loss {1 / n_total:.6f}, time 1.00ms\n")
                    if n_total % 400 == 0:
                        fh.flush()
                        await asyncio.sleep(0.02)
                fh.flush()
                await asyncio.sleep(0.3)
                if round_ < 2:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    proc = _run_tailer(log, settings)
        msgs = await collect(broker.bootstrap, CHUNKS.name, lambda m: len(delivered_lines(chunks_of(m))) >= n_total, 60)
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if proc.poll() is None:
            proc.kill()
    chunks = chunks_of(msgs)
    got = delivered_lines(chunks)
    assert sorted(got) == list(range(1, n_total + 1))
    assert all(got[i] == f"iter {i}: loss {1 / i:.6f}, time 1.00ms" for i in got)
    seqs = sorted({c.seq for c in chunks})
    assert seqs == list(range(len(seqs))), "sequence numbers have a gap"


async def test_rotation_and_truncation(broker: EmbeddedBroker, settings: Settings, tmp_path: Path) -> None:
    """A rotated file is finished then the new one followed; a truncated one is re-read; numbering continues."""
    log = tmp_path / "app.log"
    log.write_text("a1\na2\n")
    async with Publisher(settings) as pub:
        tailer = LogTailer([str(log)], pub, tmp_path / "cp", job_id="job-r", poll_s=0.02)
        task = asyncio.create_task(tailer.run())
        await asyncio.sleep(0.5)
        with log.open("a") as fh:
            fh.write("a3\n")
        log.rename(tmp_path / "app.log.1")
        log.write_text("b1\nb2\n")
        await asyncio.sleep(0.8)
        log.write_text("c1\n")  # truncate in place (copytruncate style): same inode, smaller
        await asyncio.sleep(0.8)
        msgs = await collect(broker.bootstrap, CHUNKS.name, lambda m: len(delivered_lines(chunks_of(m))) >= 6, 20)
        tailer.stop()
        await task
    got = delivered_lines(chunks_of(msgs))
    assert [got[i] for i in sorted(got)] == ["a1", "a2", "a3", "b1", "b2", "c1"]
    assert sorted(got) == list(range(1, 7))


def test_corrupt_checkpoint_is_reported(tmp_path: Path) -> None:
    """A damaged checkpoint names the file to delete."""
    from schedmate.connectors.exceptions import CheckpointError  # noqa: PLC0415
    from schedmate.connectors.tailer import Checkpoint  # noqa: PLC0415

    cp = Checkpoint.file_for(tmp_path, "/x.log")
    cp.write_text("{not json")
    with pytest.raises(CheckpointError, match="delete it"):
        Checkpoint.load(tmp_path, "/x.log")
    assert json.loads(json.dumps({"ok": time.time()}))


async def test_a_log_swapped_for_a_symlink_is_not_followed(
    broker: EmbeddedBroker, settings: Settings, tmp_path: Path
) -> None:
    """A job that replaces its log with a symlink to a secret file gets nothing of that file published; a deleted
    log is closed (no handle kept); a second tailer on the same checkpoint folder is refused."""
    from schedmate.connectors.exceptions import ConnectorError  # noqa: PLC0415

    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE\n")
    log = tmp_path / "job.log"
    log.write_text("l1\nl2\n")
    async with Publisher(settings) as pub:
        tailer = LogTailer([str(log)], pub, tmp_path / "cp", job_id="job-s", poll_s=0.02)
        task = asyncio.create_task(tailer.run())
        await asyncio.sleep(0.5)
        with pytest.raises(ConnectorError, match="another tailer"):
            await LogTailer([str(log)], pub, tmp_path / "cp", job_id="job-s").run(once=True)
        log.unlink()
        log.symlink_to(secret)
        await asyncio.sleep(1.0)
        follower = tailer.followers[str(log)]
        assert follower.refused is not None and "symlink" in follower.refused
        log.unlink()
        await asyncio.sleep(0.5)
        tailer.stop()
        await task
    msgs = await collect(broker.bootstrap, CHUNKS.name, lambda m: False, 3)
    got = delivered_lines(chunks_of(msgs))
    assert [got[i] for i in sorted(got)] == ["l1", "l2"]
    assert not any("TOP-SECRET" in x for c in chunks_of(msgs) for x in [*c.lines, c.partial or ""])


async def test_deleted_logs_release_their_handles(broker: EmbeddedBroker, settings: Settings, tmp_path: Path) -> None:
    """200 logs followed by a glob, read, then deleted: the tailer holds no handle on any of them."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(200):
        (folder / f"job{i}.log").write_text(f"line of job {i}\n")
    async with Publisher(settings) as pub:
        tailer = LogTailer([str(folder / "*.log")], pub, tmp_path / "cp", poll_s=0.02)
        task = asyncio.create_task(tailer.run())
        await asyncio.sleep(2.0)
        for f in folder.iterdir():
            f.unlink()

        def open_logs() -> list[Path]:
            return [p for p in Path(f"/proc/{os.getpid()}/fd").iterdir() if "/logs/job" in os.path.realpath(p)]

        deadline = time.monotonic() + 30
        while open_logs() and time.monotonic() < deadline:  # each closes after its final chunk is acknowledged
            await asyncio.sleep(0.2)
        still_open = open_logs()
        tailer.stop()
        await task
    assert still_open == []
    assert len(tailer.followers) == 0
