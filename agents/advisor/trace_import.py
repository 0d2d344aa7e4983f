"""Seed the job history from a CSV trace (Philly, Helios, Alibaba PAI, or a cluster's own accounting export).

Columns are recognised by common names: duration (``duration``, ``duration_s``, ``runtime``,
``run_time``, ``elapsed``), GPUs (``num_gpus``, ``gpus``, ``gpu_num``), and optionally
``job_id``, ``user``, ``cluster``/``vc``, ``name``/``job_name``, ``status``/``state``,
submission time (``timestamp``, ``submit_time``, ``submitted_at``; epoch seconds or ISO).
Rows without a usable duration are skipped and counted. Job ids are the CSV's own, or derived
from the file name and row number, so importing the same file twice changes nothing.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from schedmate.agents.advisor.history import History
from schedmate.agents.exceptions import TraceFormatError

__all__ = ["ImportResult", "TraceFormatError", "find_column", "import_csv", "parse_time"]

_DURATION: Final = ("duration", "duration_s", "runtime", "run_time", "elapsed", "duration_sec")
_GPUS: Final = ("num_gpus", "gpus", "gpu_num", "num_gpu", "gpu_count")
_STATUS: Final = {"completed": "completed", "pass": "completed", "success": "completed", "succeeded": "completed",
                  "failed": "failed", "fail": "failed", "error": "failed", "killed": "cancelled",
                  "cancelled": "cancelled", "canceled": "cancelled", "timeout": "failed"}  # fmt: skip


@dataclass(frozen=True)
class ImportResult:
    """How an import went."""

    rows: int
    imported: int
    skipped: int


def find_column(header: list[str], names: tuple[str, ...]) -> str | None:
    """The header entry matching the first of ``names`` (case and surrounding spaces ignored)."""
    low = {h.lower().strip(): h for h in header}
    return next((low[n] for n in names if n in low), None)


def parse_time(raw: str) -> float | None:
    """Epoch seconds from epoch seconds, relative seconds or ISO 8601 (naive = UTC); None if unreadable."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str], list[str]]]:
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        for i, row in enumerate(reader, start=1):
            yield i, row, header


def import_csv(
    history: History, path: Path, batch: int = 5000, progress: Callable[[int], None] | None = None
) -> ImportResult:
    """Upsert every usable row of ``path`` into ``history`` as a finished job."""
    try:
        with path.open(newline="", encoding="utf-8", errors="replace") as fh:
            header = next(csv.reader(fh), [])
    except OSError as exc:
        raise TraceFormatError(f"cannot read {path}: {exc}") from exc
    dur_col, gpu_col = find_column(header, _DURATION), find_column(header, _GPUS)
    if dur_col is None:
        raise TraceFormatError(f"{path}: no duration column (one of {', '.join(_DURATION)}); header is {header}")
    cols = {k: find_column(header, names) for k, names in {
        "job_id": ("job_id", "jobid", "id"), "user": ("user", "user_id", "username"),
        "cluster": ("cluster", "vc", "virtual_cluster", "partition"), "name": ("name", "job_name", "jobname"),
        "status": ("status", "state", "final_status"), "ts": ("timestamp", "submit_time", "submitted_at", "submit"),
    }.items()}  # fmt: skip
    rows = imported = skipped = 0
    pending: list[dict[str, Any]] = []
    stem = path.stem
    for i, row, _ in _rows(path):
        rows += 1
        try:
            duration = float(row[dur_col])
        except (TypeError, ValueError):
            skipped += 1
            continue
        if duration < 0:
            skipped += 1
            continue
        gpus_raw = row.get(gpu_col, "") if gpu_col else ""
        try:
            gpus = int(float(gpus_raw)) if gpus_raw else 0
        except ValueError:
            gpus = 0
        submit = parse_time(row.get(cols["ts"], "") or "") if cols["ts"] else None
        status_raw = (row.get(cols["status"], "") or "").strip().lower() if cols["status"] else ""
        pending.append({
            "job_id": (row.get(cols["job_id"]) or "").strip() if cols["job_id"] else "",
            "user": (row.get(cols["user"]) or "").strip() if cols["user"] else "",
            "cluster": (row.get(cols["cluster"]) or "").strip() if cols["cluster"] else "",
            "name": (row.get(cols["name"]) or "").strip() if cols["name"] else "",
            "num_gpus": gpus, "duration_s": duration, "status": _STATUS.get(status_raw, "completed"),
            "submit_ts": submit, "end_ts": None if submit is None else submit + duration, "source": "import",
        })  # fmt: skip
        if not pending[-1]["job_id"]:
            pending[-1]["job_id"] = f"{stem}:{i}"
        if len(pending) >= batch:
            history.upsert(pending)
            imported += len(pending)
            if progress:
                progress(len(pending))
            pending = []
    if pending:
        history.upsert(pending)
        imported += len(pending)
        if progress:
            progress(len(pending))
    return ImportResult(rows=rows, imported=imported, skipped=skipped)
