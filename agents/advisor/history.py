"""Job history in LanceDB: what each job was (metadata, vector) and how it went (duration, status, GPU use).

One row per job id. A submission writes a ``pending`` row (metadata and vector, no outcome);
the job's finish fills in the outcome. Writes are upserts keyed by job id, so a redelivered
event or a re-imported trace changes nothing. Retrieval is cosine top-k over finished jobs,
optionally filtered by user and cluster. A compact in-memory view of finished jobs' outcomes
(for the fallback estimator) is kept and refreshed on writes. Methods block: call them from a
worker thread in async code.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Final, ParamSpec, TypeVar

import numpy as np
import pyarrow as pa

from schedmate.agents.exceptions import StoreError
from schedmate.agents.ml.lance import connect

__all__ = ["FINISHED", "GroupSummary", "History", "HistoryMatch", "Outcome", "outcome_recorded", "repair"]

P = ParamSpec("P")
R = TypeVar("R")

_TABLE: Final = "history"
FINISHED: Final = ("completed", "failed", "cancelled")


@dataclass(frozen=True)
class Outcome:
    """A finished job as the fallback estimator sees it."""

    job_id: str
    user: str
    cluster: str
    name: str
    num_gpus: int
    duration_s: float
    status: str
    gpu_util_pct: float | None
    gpu_mem_mb: float | None


@dataclass(frozen=True)
class GroupSummary:
    """What a group of finished jobs says about the next one like them."""

    n: int
    p50_s: float
    p90_s: float
    gpu_util_pct: float | None
    gpu_mem_mb: float | None
    early_exit_prob: float

    @classmethod
    def of(cls, members: list[Outcome]) -> GroupSummary:
        """Summarise ``members`` (non-empty)."""
        d = np.sort(np.asarray([o.duration_s for o in members], dtype=np.float64))
        util = [o.gpu_util_pct for o in members if o.gpu_util_pct is not None]
        mem = [o.gpu_mem_mb for o in members if o.gpu_mem_mb is not None]
        return cls(
            n=len(members),
            p50_s=round(float(np.quantile(d, 0.5, method="inverted_cdf")), 1),
            p90_s=round(float(np.quantile(d, 0.9, method="inverted_cdf")), 1),
            gpu_util_pct=round(float(np.mean(util)), 1) if util else None,
            gpu_mem_mb=round(float(np.max(mem)), 1) if mem else None,
            early_exit_prob=round(sum(o.status in ("failed", "cancelled") for o in members) / len(members), 3),
        )


@dataclass(frozen=True)
class HistoryMatch:
    """A similar past job and how similar it is (cosine similarity)."""

    outcome: Outcome
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)


def _schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("job_id", pa.string()),
            pa.field("user", pa.string()),
            pa.field("cluster", pa.string()),
            pa.field("name", pa.string()),
            pa.field("workdir", pa.string()),
            pa.field("command", pa.string()),
            pa.field("num_gpus", pa.int32()),
            pa.field("git_commit", pa.string()),
            pa.field("git_branch", pa.string()),
            pa.field("metadata", pa.string()),  # WorkloadMetadata JSON ("" for imported traces)
            pa.field("text", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            pa.field("has_vector", pa.bool_()),
            pa.field("submit_ts", pa.float64()),
            pa.field("start_ts", pa.float64()),
            pa.field("end_ts", pa.float64()),
            pa.field("duration_s", pa.float64()),
            pa.field("status", pa.string()),  # pending | completed | failed | cancelled
            pa.field("gpu_util_pct", pa.float64()),
            pa.field("gpu_mem_mb", pa.float64()),
            pa.field("source", pa.string()),  # live | import
            pa.field("updated", pa.float64()),
        ]
    )


_REPAIR = "run `schedmate history repair` (restores the newest readable version, or moves the table aside)"


def _guarded(method: Callable[P, R]) -> Callable[P, R]:
    """Turn a damaged or unreachable table (lance I/O errors) into one :class:`StoreError` that says what to do."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except StoreError:
            raise
        except (RuntimeError, OSError) as exc:
            self = args[0]
            path = getattr(self, "path", "?")
            raise StoreError(f"the job history at {path} cannot be read or written ({exc}); {_REPAIR}") from exc

    return wrapper


def repair(path: Path) -> str:
    """Bring a damaged history table back: the newest version that reads in full, else an empty one.

    A table no version of which reads is moved aside (``history.lance.damaged-<time>``), never deleted.
    Returns what was done.
    """
    db = connect(path)
    folder = path / f"{_TABLE}.lance"
    if not folder.exists():
        return f"no history table at {path}: nothing to repair"
    try:
        table = db.open_table(_TABLE)
        versions = sorted((int(v["version"]) for v in table.list_versions()), reverse=True)
    except (RuntimeError, OSError, ValueError):
        table, versions = None, []
    for v in versions:
        assert table is not None
        try:
            table.checkout(v)
            rows = table.to_arrow().num_rows
            table.restore(v)
        except (RuntimeError, OSError, ValueError):
            continue
        return f"restored version {v} of the history at {path} ({rows} jobs)"
    aside = folder.with_name(f"{folder.name}.damaged-{int(time.time())}")
    folder.rename(aside)
    return f"no readable version: moved the damaged table to {aside}; a new, empty history starts there"


def outcome_recorded(path: Path, job_id: str) -> bool:
    """Whether the history at ``path`` holds ``job_id``'s outcome yet (read only: from a process beside the worker
    that writes it; False while there is no history table)."""
    if not (path / f"{_TABLE}.lance").exists():
        return False
    try:
        row = _row_of(connect(path).open_table(_TABLE), job_id)
    except (RuntimeError, OSError, ValueError):
        return False
    return row is not None and row.get("status") in FINISHED


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _row_of(table: Any, job_id: str) -> dict[str, Any] | None:
    rows = table.search().where(f"job_id = {_sql(job_id)}").limit(1).to_list()
    return rows[0] if rows else None


class History:
    """The ``history`` table of a LanceDB folder."""

    def __init__(self, path: Path, dim: int = 384) -> None:
        self.path = path
        self.dim = dim
        self._lock = threading.RLock()
        self._groups: dict[tuple[Any, ...], dict[str, Outcome]] | None = None  # fallback groups, in memory
        self._summaries: dict[tuple[Any, ...], GroupSummary | None] = {}
        self._recent: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}  # (user, workdir) → job → row
        self._index: _VectorIndex | None = None
        self._writes = 0
        self._known_version = -1
        self._checked_at = 0.0  # finished jobs' vectors, searched in memory
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._db = connect(path, read_consistency_interval=timedelta(seconds=5))
            self._table = self._db.create_table(_TABLE, schema=_schema(dim), exist_ok=True)
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot open the job history at {path}: {exc}; set SCHEDMATE_DATA_DIR") from exc
        except RuntimeError as exc:  # lance: a damaged manifest or data file
            raise StoreError(f"the job history at {path} is damaged ({exc}); {_REPAIR}") from exc
        stored = self._table.schema.field("vector").type.list_size
        if stored != dim:
            raise StoreError(f"the job history at {path} holds {stored}-d vectors but the embedding model gives "
                             f"{dim}-d; use another SCHEDMATE_DATA_DIR")  # fmt: skip

    @_guarded
    def _refresh(self) -> None:
        """Drop the in-memory views when another process (another worker, an import) wrote the table."""
        now = time.monotonic()
        if now - self._checked_at < 10.0:
            return
        self._checked_at = now
        version = int(self._table.version)
        if version != self._known_version:
            self._index, self._groups, self._summaries, self._recent = None, None, {}, {}
            self._known_version = version

    @_guarded
    def warm_up(self) -> None:
        """Build the in-memory views now rather than on the first job."""
        with self._lock:
            self._refresh()
            self.group("all")
            self.similar(np.zeros(self.dim, dtype=np.float32), k=1, threshold=2.0)

    # --- writes ---------------------------------------------------------------------------------
    def _row(self, row: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "user": "", "cluster": "", "name": "", "workdir": "", "command": "", "num_gpus": 0, "git_commit": "",
            "git_branch": "", "metadata": "", "text": "", "vector": None, "submit_ts": None, "start_ts": None,
            "end_ts": None, "duration_s": None, "status": "pending", "gpu_util_pct": None, "gpu_mem_mb": None,
            "source": "live",
        }  # fmt: skip
        out.update({k: v for k, v in row.items() if v is not None})
        vec = out["vector"]
        out["has_vector"] = vec is not None
        out["vector"] = [0.0] * self.dim if vec is None else [float(x) for x in vec]
        if isinstance(out["metadata"], dict):
            out["metadata"] = json.dumps(out["metadata"], sort_keys=True)
        out["updated"] = time.time()
        return out

    @_guarded
    def upsert(self, rows: list[dict[str, Any]], only_pending: bool = False) -> None:
        """Insert or replace rows by job id (idempotent); ``only_pending`` leaves finished jobs' rows alone."""
        if not rows:
            return
        latest = {r["job_id"]: self._row(r) for r in rows}  # the last row per job in this batch wins
        data = pa.Table.from_pylist(list(latest.values()), schema=_schema(self.dim))
        with self._lock:
            merge = self._table.merge_insert("job_id")
            merge = merge.when_matched_update_all(where="target.status = 'pending'" if only_pending else None)
            before = int(self._table.version)
            merge.when_not_matched_insert_all().execute(data)
            if before == self._known_version:  # nobody else wrote in between: our views stay current
                self._known_version = int(self._table.version)
            for r in latest.values():
                if r["workdir"] and r["metadata"]:
                    recent = self._recent.setdefault((r["user"], r["workdir"]), {})
                    recent[r["job_id"]] = r
                    if len(recent) > 50:
                        recent.pop(min(recent, key=lambda j: recent[j].get("submit_ts") or 0.0))
            if len(self._recent) > 10_000:
                self._recent.pop(next(iter(self._recent)))
            self._writes += 1
            if self._writes % 200 == 0:
                self._table.optimize()  # every write adds a fragment: compact now and then
            finished = [r for r in latest.values() if r["status"] in FINISHED and r["duration_s"] is not None]
            if finished:
                if self._groups is not None:
                    for r in finished:
                        self._group_add(_outcome(r))
                if self._index is not None:
                    for r in finished:
                        if r["has_vector"]:
                            self._index.add(r)

    @_guarded
    def record_outcome(
        self,
        job_id: str,
        status: str,
        end_ts: float,
        start_ts: float | None = None,
        gpu_util_pct: float | None = None,
        gpu_mem_mb: float | None = None,
    ) -> bool:
        """Fill in a job's outcome (its duration from its start, else its submission). Idempotent.

        Returns False when the job is unknown (never submitted through SchedMate) — an outcome
        row is still written so the fallback estimator learns from it. One job's case of
        :meth:`record_events` (``start_ts``: a start not recorded before).
        """
        known = self.get(job_id) is not None
        start = [(job_id, "started", None, start_ts, None, None)] if start_ts is not None else []
        self.record_events([*start, (job_id, "finished", status, end_ts, gpu_util_pct, gpu_mem_mb)])
        return known

    @_guarded
    def record_events(self, events: list[tuple[str, str, str | None, float, float | None, float | None]]) -> int:
        """Starts and outcomes of many jobs in one read and one write (the history writer's batch).

        ``events``: (job id, "started" or "finished", status, time, mean GPU util, peak GPU memory), in
        order. A start is kept only where none was recorded; an outcome already recorded with the same end time
        is not written again; the duration counts from the start, else the submission. Returns the outcomes
        written.
        """
        ids = list(dict.fromkeys(e[0] for e in events))
        if not ids:
            return 0
        with self._lock:
            where = "job_id IN (" + ", ".join(_sql(j) for j in ids) + ")"
            current = {r["job_id"]: r for r in self._table.search().where(where).limit(len(ids)).to_list()}
            changed: dict[str, dict[str, Any]] = {}
            outcomes = 0
            for job_id, kind, status, ts, util, mem in events:
                row = changed.get(job_id) or current.get(job_id)
                if kind == "started":
                    if row is None or row.get("start_ts") is not None:
                        continue
                    new = dict(row)
                    new["start_ts"] = ts
                else:
                    if row is not None and row.get("status") in FINISHED and row.get("end_ts") == ts:
                        continue
                    new = dict(row) if row else {"job_id": job_id}
                    start = new.get("start_ts") or new.get("submit_ts")
                    new.update(status=status, end_ts=ts, start_ts=start, gpu_util_pct=util, gpu_mem_mb=mem,
                               duration_s=max(0.0, ts - start) if start is not None else None)  # fmt: skip
                    outcomes += 1
                if row is not None and not row.get("has_vector"):
                    new["vector"] = None
                changed[job_id] = new
            self.upsert(list(changed.values()))
            return outcomes

    @_guarded
    def record_start(self, job_id: str, start_ts: float) -> None:
        """Note when a submitted job started (its duration counts from then)."""
        self.record_events([(job_id, "started", None, start_ts, None, None)])

    # --- reads ----------------------------------------------------------------------------------
    @_guarded
    def get(self, job_id: str) -> dict[str, Any] | None:
        """The row of a job, or None."""
        with self._lock:
            return _row_of(self._table, job_id)

    @_guarded
    def count(self, status: str | None = None) -> int:
        """Rows, optionally of one status."""
        with self._lock:
            return int(self._table.count_rows(f"status = {_sql(status)}" if status else None))

    @_guarded
    def recent_for(self, user: str, workdir: str, limit: int = 50) -> list[dict[str, Any]]:
        """The user's most recent submissions from ``workdir`` (for resubmission matching)."""
        where = f"user = {_sql(user)} AND workdir = {_sql(workdir)} AND metadata != ''"
        with self._lock:
            self._refresh()
            cached = self._recent.get((user, workdir))
            if cached is not None:
                rows = list(cached.values())
            else:  # written by another process, or before a restart
                rows = self._table.search().where(where).limit(10_000).to_list()
                self._recent[(user, workdir)] = {r["job_id"]: r for r in rows}
        rows.sort(key=lambda r: r.get("submit_ts") or 0.0, reverse=True)
        return rows[:limit]

    @_guarded
    def similar(
        self,
        vector: np.ndarray[Any, Any],
        k: int = 3,
        threshold: float = 0.90,
        user: str | None = None,
        cluster: str | None = None,
        exclude: str | None = None,
    ) -> list[HistoryMatch]:
        """Finished jobs whose metadata vector has cosine similarity ≥ ``threshold``, best first."""
        with self._lock:
            self._refresh()
            if self._index is None:
                self._index = _VectorIndex(self.dim)
                rows = (
                    self._table.search()
                    .where("has_vector = true AND status != 'pending' AND duration_s IS NOT NULL")
                    .limit(None)
                    .to_list()
                )
                for r in rows:
                    self._index.add(r)
            found = self._index.search(np.asarray(vector, dtype=np.float32), k, user, cluster, exclude)
        out = []
        for r, score in found:
            if score >= threshold:
                meta = json.loads(r["metadata"]) if r.get("metadata") else {}
                out.append(HistoryMatch(_outcome(r), round(score, 4), meta))
        return out

    @_guarded
    def group(self, kind: str, key: tuple[Any, ...] = ()) -> list[Outcome]:
        """Finished jobs of one fallback group: ``user+gpus``, ``user+name``, ``cluster+gpus``, ``gpus``, ``all``."""
        with self._lock:
            if self._groups is None:
                self._groups = {}
                cols = ["job_id", "user", "cluster", "name", "num_gpus", "duration_s", "status", "gpu_util_pct",
                        "gpu_mem_mb"]  # fmt: skip
                data = (
                    self._table.search()
                    .where("status != 'pending' AND duration_s IS NOT NULL")
                    .select(cols)
                    .limit(None)
                    .to_arrow()
                    .to_pylist()
                )
                for r in data:
                    self._group_add(_outcome(r))
            return list(self._groups.get((kind, *key), {}).values())

    def summary(self, kind: str, key: tuple[Any, ...] = ()) -> GroupSummary | None:
        """Duration quantiles, GPU use and early-exit share of a fallback group (cached until it changes)."""
        with self._lock:
            self._refresh()
            gk = (kind, *key)
            if gk not in self._summaries:
                members = self.group(kind, key)
                self._summaries[gk] = GroupSummary.of(members) if members else None
            return self._summaries[gk]

    def _group_add(self, o: Outcome) -> None:
        assert self._groups is not None
        for gk in (("user+gpus", o.user, o.num_gpus), ("user+name", o.user, o.name),
                   ("cluster+gpus", o.cluster, o.num_gpus), ("gpus", o.num_gpus), ("all",)):  # fmt: skip
            self._groups.setdefault(gk, {})[o.job_id] = o
            self._summaries.pop(gk, None)


def _outcome(r: dict[str, Any]) -> Outcome:
    return Outcome(
        job_id=r["job_id"],
        user=r.get("user") or "",
        cluster=r.get("cluster") or "",
        name=r.get("name") or "",
        num_gpus=int(r.get("num_gpus") or 0),
        duration_s=float(r["duration_s"]),
        status=r.get("status") or "completed",
        gpu_util_pct=r.get("gpu_util_pct"),
        gpu_mem_mb=r.get("gpu_mem_mb"),
    )


class _VectorIndex:
    """Finished jobs' unit vectors in a growable float16 matrix (cosine = dot product)."""

    def __init__(self, dim: int) -> None:
        self._matrix = np.zeros((64, dim), dtype=np.float16)
        self._rows: list[dict[str, Any]] = []
        self._pos: dict[str, int] = {}

    def add(self, row: dict[str, Any]) -> None:
        slim = {k: v for k, v in row.items() if k != "vector"}
        vec = np.asarray(row["vector"], dtype=np.float32)
        norm = float(np.linalg.norm(vec)) or 1.0
        i = self._pos.get(row["job_id"])
        if i is None:
            i = len(self._rows)
            if i == len(self._matrix):
                self._matrix = np.concatenate([self._matrix, np.zeros_like(self._matrix)])
            self._rows.append(slim)
            self._pos[row["job_id"]] = i
        else:
            self._rows[i] = slim
        self._matrix[i] = vec / norm

    def search(
        self, q: np.ndarray[Any, Any], k: int, user: str | None, cluster: str | None, exclude: str | None
    ) -> list[tuple[dict[str, Any], float]]:
        n = len(self._rows)
        if n == 0:
            return []
        q = q / (float(np.linalg.norm(q)) or 1.0)
        scores = self._matrix[:n].astype(np.float32) @ q
        order = np.argsort(-scores)
        out = []
        for i in order:
            r = self._rows[int(i)]
            if (user and r.get("user") != user) or (cluster and r.get("cluster") != cluster) or r["job_id"] == exclude:
                continue
            out.append((r, float(scores[int(i)])))
            if len(out) >= k:
                break
        return out
