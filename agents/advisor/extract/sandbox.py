"""Static extraction in child processes, under an address-space limit and a wall-clock deadline.

The cooperative :class:`~.budget.Budget` stops the walks we know of; the process bounds what we
do not: a parser that allocates gigabytes inside C code, a recursion the budget never sees. Each
child sets ``RLIMIT_AS`` on itself and serves one extraction at a time over a pipe; a child that
overruns the deadline is killed and replaced, one that dies (out of memory) is replaced, and the
caller gets empty metadata with the reason in ``cuts``. Children are spawned (not forked from a
worker holding threads and a model) and started lazily.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue
import threading
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from schedmate.agents.advisor.extract.budget import Budget
from schedmate.agents.exceptions import WorkspaceError
from schedmate.schemas.jobs_metadata import WorkloadMetadata

__all__ = ["Extracted", "ExtractionSandbox"]


@dataclass
class Extracted:
    """One extraction's outcome: the metadata, the files read (path → sha1), and what was cut short."""

    metadata: WorkloadMetadata
    reads: dict[str, str] = field(default_factory=dict)
    cuts: list[str] = field(default_factory=list)


def _serve(conn: Connection, memory_bytes: int) -> None:  # runs in the child
    import resource  # noqa: PLC0415

    from schedmate.agents.advisor.extract.metadata import extract_metadata  # noqa: PLC0415

    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        workdir, command, budget, repo = request
        reads: dict[str, str] = {}
        cuts: list[str] = []
        try:
            repo_root = Path(repo) if repo else None
            meta = extract_metadata(
                Path(workdir), command, reads=reads, budget=Budget(**budget), cuts=cuts, repo=repo_root
            )
            reply: tuple[str, Any, Any, Any] = ("ok", meta.model_dump_json(), reads, cuts)
        except WorkspaceError as exc:
            reply = ("workspace", str(exc), None, None)
        except MemoryError:
            reply = ("ok", WorkloadMetadata().model_dump_json(), reads, [*cuts, "memory limit reached"])
        except Exception as exc:  # noqa: BLE001 -- a bug must not kill the child: report it, keep serving
            reply = ("ok", WorkloadMetadata().model_dump_json(), reads, [*cuts, f"{type(exc).__name__}: {exc}"[:300]])
        conn.send(reply)


@dataclass
class _Child:
    process: BaseProcess
    conn: Connection


class ExtractionSandbox:
    """Up to ``processes`` extraction children; :meth:`extract` blocks (call it from a worker thread)."""

    def __init__(
        self, processes: int = 2, memory_mb: int = 1024, budget: Budget | None = None, grace_s: float = 3.0
    ) -> None:
        self.processes = processes
        self.memory_bytes = memory_mb * 1024 * 1024
        self.budget = budget or Budget()
        self.deadline_s = self.budget.time_s + grace_s
        self._idle: queue.Queue[_Child] = queue.Queue()
        self._started = 0
        self._lock = threading.Lock()
        self._closed = False
        self.killed = 0  # children killed for overrunning the deadline
        self.died = 0  # children that died on their own (out of memory)

    def _spawn(self) -> _Child:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self.memory_bytes), daemon=True, name="schedmate-extract")
        proc.start()
        child.close()
        return _Child(proc, parent)

    def _take(self) -> _Child:
        with self._lock:
            if self._closed:
                raise WorkspaceError("the extraction sandbox is closed")
            if self._idle.empty() and self._started < self.processes:
                self._started += 1
                return self._spawn()
        return self._idle.get()

    def warm_up(self) -> None:
        """Start the children now (each imports the extractor once)."""
        while True:
            with self._lock:
                if self._closed or self._started >= self.processes:
                    return
                self._started += 1
            self._idle.put(self._spawn())

    def _replace(self, child: _Child) -> _Child:
        with contextlib.suppress(Exception):
            child.process.kill()
            child.process.join(5)
            child.conn.close()
        return self._spawn()

    def extract(self, workdir: Path, command: str, repo: Path | None = None) -> Extracted:
        """Metadata of ``command`` run from ``workdir`` (reading up to ``repo``, the job's repository root, if
        given); raises :class:`WorkspaceError` if the folder is unusable."""
        child = self._take()
        try:
            child.conn.send((str(workdir), command, _budget_args(self.budget), str(repo) if repo else ""))
            if not child.conn.poll(self.deadline_s):
                self.killed += 1
                child = self._replace(child)
                return Extracted(WorkloadMetadata(), cuts=[f"killed after {self.deadline_s:g} s"])
            status, payload, reads, cuts = child.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self.died += 1
            code = child.process.exitcode
            child = self._replace(child)
            return Extracted(WorkloadMetadata(), cuts=[f"extraction process died (exit code {code}; memory limit?)"])
        finally:
            self._idle.put(child)
        if status == "workspace":
            raise WorkspaceError(payload)
        return Extracted(WorkloadMetadata.model_validate_json(payload), reads, cuts)

    def close(self) -> None:
        """Stop the children."""
        with self._lock:
            self._closed = True
        while True:
            try:
                child = self._idle.get_nowait()
            except queue.Empty:
                break
            with contextlib.suppress(Exception):
                child.conn.close()
                child.process.kill()
                child.process.join(5)


def _budget_args(b: Budget) -> dict[str, Any]:
    return {k: v for k, v in asdict(b).items() if k in ("time_s", "max_files", "max_bytes", "max_nodes", "max_value")}
