"""Following log files (paths or globs) into logs.chunks, surviving restarts and kill -9.

Each file has a checkpoint: its identity (device, inode), the byte offset after the last
published line, the next line number and chunk sequence, and the chunk *in flight*. The
in-flight record is written (fsync'd) before a chunk is sent and cleared after the broker
acknowledged it; after a crash the very same bytes are re-read and re-sent with the same
sequence number and line numbers, so consumers (which de-duplicate on line numbers) see
every line exactly once. Rotation (a new inode at the path) finishes the old file first;
truncation restarts at offset 0; line numbering continues across both.

A followed path that is (or becomes) a symlink is refused unless ``follow_symlinks`` — a job
could point its log at a secret file — as is anything but a regular file. A file deleted and
read to its end is closed and forgotten (no handle kept on deleted files). One tailer at a time
may use a checkpoint folder: it holds an exclusive lock on it while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import glob
import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO

from schedmate.connectors.chunker import Cut, LineChunkStream, compact_line
from schedmate.connectors.exceptions import CheckpointError, ConnectorError
from schedmate.connectors.publisher import Publisher
from schedmate.infra.logging import get_logger
from schedmate.schemas import logs_chunks
from schedmate.schemas.logs_chunks import LogChunk

__all__ = ["Checkpoint", "FileFollower", "LogTailer"]

log = get_logger(__name__)
READ_BLOCK = 1 << 20


@dataclass
class Checkpoint:
    """Durable position of one followed file."""

    path: str
    dev: int = 0
    ino: int = 0
    offset: int = 0
    next_line: int = 1
    seq: int = 0
    inflight: list[int] | None = None  # [start, end, first_line, seq, n_lines]

    @staticmethod
    def file_for(folder: Path, path: str) -> Path:
        """Checkpoint file of ``path`` inside ``folder``."""
        digest = hashlib.sha256(path.encode()).hexdigest()[:24]
        return folder / f"{digest}.json"

    @classmethod
    def load(cls, folder: Path, path: str) -> Checkpoint:
        """The stored checkpoint of ``path`` (a fresh one if none)."""
        f = cls.file_for(folder, path)
        try:
            return cls(**json.loads(f.read_text()))
        except FileNotFoundError:
            return cls(path=path)
        except (OSError, ValueError, TypeError) as exc:
            raise CheckpointError(f"corrupt tailer checkpoint {f}: {exc}; delete it to re-read {path}") from exc

    def save(self, folder: Path) -> None:
        """Atomically replace the stored checkpoint (write, fsync, rename)."""
        folder.mkdir(parents=True, exist_ok=True)
        f = self.file_for(folder, self.path)
        tmp = f.with_suffix(".tmp")
        with open(tmp, "w") as fh:  # noqa: PTH123
            json.dump(asdict(self), fh)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(f)


class FileFollower:
    """Follows one path; call :meth:`poll` repeatedly."""

    def __init__(
        self,
        path: str,
        job_id: str,
        publisher: Publisher,
        checkpoint_dir: Path,
        node: str | None = None,
        max_lines: int = 500,
        max_age_s: float = 0.5,
        follow_symlinks: bool = False,
    ) -> None:
        self.path = path
        self.follow_symlinks = follow_symlinks
        self.refused: str | None = None  # why the path is not read (said once per reason)
        self.job_id = job_id
        self.pub = publisher
        self.dir = checkpoint_dir
        self.cp = Checkpoint.load(checkpoint_dir, path)
        self.node = node
        self.stream = LineChunkStream(job_id, source=path, node=node, max_lines=max_lines, max_age_s=max_age_s,
                                      next_line=self.cp.next_line, seq=self.cp.seq)  # fmt: skip
        self._fh: BinaryIO | None = None
        self._gone = False
        self.lines_sent = 0

    def _refuse(self, why: str) -> bool:
        if why != self.refused:
            log.warning("not following log", path=self.path, reason=why)
            self.refused = why
        return False

    async def _open(self) -> bool:
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if self.follow_symlinks else os.O_NOFOLLOW)
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return self._refuse("it is a symlink (pass --follow-symlinks to follow it)")
            return self._refuse(f"cannot open it: {exc.strerror}")
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return self._refuse("not a regular file")
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
        self.refused = None
        cp = self.cp
        if (cp.dev, cp.ino) == (st.st_dev, st.st_ino) and cp.offset <= st.st_size:
            start = cp.offset
        else:
            if cp.ino:
                log.info("log file replaced or truncated since last run; reading it from the start", path=self.path)
            start, cp.inflight = 0, None
            cp.dev, cp.ino, cp.offset = st.st_dev, st.st_ino, 0
        self._fh = fh
        self.stream.reset(start)
        fh.seek(start)
        if cp.inflight is not None:
            await self._replay(cp.inflight)
        return True

    async def _replay(self, inflight: list[int]) -> None:
        """Re-send the chunk that was in flight when the process died, byte for byte."""
        assert self._fh is not None
        start, end, first_line, seq, n_lines = inflight
        self._fh.seek(start)
        data = self._fh.read(end - start)
        parts = data.split(b"\n")
        if parts and parts[-1] == b"":
            parts.pop()  # chunks end after a newline, except a file's unterminated last line
        lines = [compact_line(p) for p in parts]
        if len(lines) != n_lines:
            raise CheckpointError(f"{self.path} changed under an in-flight chunk; delete its checkpoint to re-read")
        chunk = LogChunk(job_id=self.job_id, source=self.path, seq=seq, first_line=first_line, lines=lines,
                         node=self.node)  # fmt: skip
        await self.pub.publish(logs_chunks.TOPIC, chunk)
        self.cp.inflight = None
        self.cp.offset, self.cp.next_line, self.cp.seq = end, first_line + n_lines, seq + 1
        self.cp.save(self.dir)
        self.stream.reset(end, next_line=self.cp.next_line, seq=self.cp.seq)
        self.lines_sent += n_lines
        log.info("re-sent in-flight chunk after restart", path=self.path, seq=seq, lines=n_lines)

    async def _send(self, cut: Cut) -> None:
        """Publish with an in-flight record so a crash at any point replays the same chunk."""
        chunk = cut.chunk
        if chunk.lines:
            self.cp.inflight = [cut.start, cut.end, chunk.first_line, chunk.seq, len(chunk.lines)]
            self.cp.save(self.dir)
        await self.pub.publish(logs_chunks.TOPIC, chunk)
        self.cp.inflight = None
        self.cp.offset, self.cp.next_line, self.cp.seq = cut.end, chunk.last_line + 1, chunk.seq + 1
        self.cp.save(self.dir)
        self.lines_sent += len(chunk.lines)

    async def poll(self, final: bool = False) -> int:
        """Read what is new, publish full or due chunks; return bytes read."""
        if self._fh is None and not await self._open():
            return 0
        assert self._fh is not None
        total = 0
        while True:
            data = self._fh.read(READ_BLOCK)
            if not data:
                break
            total += len(data)
            for cut in self.stream.feed(data):
                await self._send(cut)
            if len(data) < READ_BLOCK:
                break
        if total == 0 and not final:
            await self._check_rotation()
            if self._fh is None:  # rotated: continue with the new file now
                return await self.poll()
        for cut in self.stream.finish() if final else [c for c in [self.stream.due()] if c is not None]:
            await self._send(cut)
        return total

    @property
    def gone(self) -> bool:
        """Whether the file was deleted and everything in it was read (its handle is closed)."""
        return self._gone

    async def _check_rotation(self) -> None:
        assert self._fh is not None
        cur = os.fstat(self._fh.fileno())
        try:
            st = Path(self.path).stat() if self.follow_symlinks else Path(self.path).lstat()
        except FileNotFoundError:
            if cur.st_nlink == 0:  # deleted and read to the end: release the handle
                log.info("log file deleted; closing it", path=self.path)
                await self.poll(final=True)
                self.close()
                self._gone = True
            return
        if (st.st_dev, st.st_ino) != (cur.st_dev, cur.st_ino):
            log.info("log file rotated; finishing the old one", path=self.path)
            await self.poll(final=True)
            self._fh.close()
            self._fh = None
            self.cp.dev = self.cp.ino = self.cp.offset = 0
            self.cp.save(self.dir)
            self.stream.reset(0)
        elif st.st_size < self.stream.pos:
            log.info("log file truncated; reading it from the start", path=self.path)
            self._fh.seek(0)
            self.cp.offset = 0
            self.stream.reset(0)

    def close(self) -> None:
        """Close the file handle."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class LogTailer:
    """Follows files and globs, one :class:`FileFollower` per file; stop with :meth:`stop`."""

    def __init__(
        self,
        patterns: list[str],
        publisher: Publisher,
        checkpoint_dir: Path,
        job_id: str | None = None,
        job_id_of: Callable[[str], str] | None = None,
        poll_s: float = 0.1,
        node: str | None = None,
        max_lines: int = 500,
        follow_symlinks: bool = False,
    ) -> None:
        self.patterns = patterns
        self.follow_symlinks = follow_symlinks
        self.pub = publisher
        self.dir = checkpoint_dir
        self.job_id = job_id
        self.job_id_of = job_id_of or (lambda p: Path(p).stem)
        self.poll_s = poll_s
        self.node = node
        self.max_lines = max_lines
        self.followers: dict[str, FileFollower] = {}
        self._stop = asyncio.Event()

    def _discover(self) -> None:
        for pattern in self.patterns:
            paths = glob.glob(pattern) if glob.has_magic(pattern) else [pattern]  # noqa: PTH207
            for p in paths:
                ap = str(Path(p).absolute())
                if ap not in self.followers and (Path(ap).is_file() or not glob.has_magic(pattern)):
                    job = self.job_id or self.job_id_of(ap)
                    self.followers[ap] = FileFollower(ap, job, self.pub, self.dir, self.node, self.max_lines,
                                                      follow_symlinks=self.follow_symlinks)  # fmt: skip

    def _lock(self) -> int:
        """An exclusive lock on the checkpoint folder, or :class:`ConnectorError` if another tailer holds it."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.dir / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise ConnectorError(
                f"another tailer (pid {holder}) is using the checkpoint folder {self.dir}: stop it, or give this "
                "one its own data folder (SCHEDMATE_DATA_DIR)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        return fd

    async def run(self, once: bool = False) -> None:
        """Follow until :meth:`stop` (or, with ``once``, read everything present and return)."""
        lock = self._lock()
        try:
            await self._run(once)
        finally:
            os.close(lock)

    async def _run(self, once: bool) -> None:
        last_scan = 0.0
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            if loop.time() - last_scan > 1.0:
                self._discover()
                last_scan = loop.time()
            busy = 0
            for path, f in list(self.followers.items()):
                busy += await f.poll(final=once)
                if f.gone:
                    del self.followers[path]
            if once:
                break
            if not busy:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), self.poll_s)
        for f in self.followers.values():
            f.close()

    def stop(self) -> None:
        """Ask :meth:`run` to return after the current poll."""
        self._stop.set()
