"""Scoring ``schedmate metrics`` on labelled progress logs.

    schedmate eval metrics ../shared/eval/dev/progress [--json]      # a folder: labels.jsonl beside the logs
    schedmate eval metrics tests/data/corpus/open/progress.jsonl      # excerpts: one labelled ``text`` per line

A log is fully right when step and loss are exact, step time is within 5% where labelled,
and every other labelled value (lr, epoch, samples/s) is within 1% (or an accepted
alternative). Prints one line per log, the share of logs fully right, and how many logs let the
tracker say how long the job has left (a total to count towards and a speed: ``eta_s``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from schedmate.agents.logtext.lines import split_physical_lines
from schedmate.agents.tracker.metric_tracker import MetricTracker, metrics_of_file

__all__ = ["evaluate_metrics"]

_ALIASES = {"learning_rate": "lr"}  # label names of the public excerpts; keys outside the contract are notes
TOL = {"step": 0.0, "loss": 0.0, "step_time_s": 0.05, "samples_per_s": 0.01, "lr": 0.01, "epoch": 0.0}


def _ok(field: str, got: Any, want: Any, alternatives: list[Any]) -> bool:
    for w in [want, *alternatives]:
        if w is None and got is None:
            return True
        if w is None or got is None:
            continue
        g, e = float(got), float(w)  # a label "nan" / "inf" matches a NaN / infinite reading
        if math.isnan(e) or math.isinf(e):
            if (math.isnan(e) and math.isnan(g)) or g == e:
                return True
            continue
        tol = TOL.get(field, 0.01)
        if tol == 0.0:
            if math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-12):
                return True
        elif math.isclose(g, e, rel_tol=tol, abs_tol=1e-12):
            return True
    return False


def labelled_rows(path: Path) -> list[dict[str, Any]]:
    """The labelled records of a folder (``labels.jsonl``) or of an excerpts file (``*.jsonl`` with ``text``)."""
    labels = path / "labels.jsonl" if path.is_dir() else path
    return [json.loads(x) for x in labels.read_text(encoding="utf-8").splitlines() if x.strip()]


def _snapshot(path: Path, row: dict[str, Any]) -> dict[str, Any]:
    if "text" not in row:
        return metrics_of_file(path / str(row["file"])).as_dict()
    tracker = MetricTracker()
    tracker.feed(str(row["id"]), 1, split_physical_lines(str(row["text"]).encode()))
    return tracker.snapshot(str(row["id"])).as_dict()


def evaluate_metrics(path: Path) -> dict[str, Any]:
    """Per-log verdicts and the share of logs fully right (``path``: a labelled folder or an excerpts file)."""
    results = []
    for row in labelled_rows(path):
        snap = _snapshot(path, row)
        expected = {_ALIASES.get(f, f): w for f, w in row["expected"].items()}
        wrong = {
            f: {"got": snap.get(f), "want": w}
            for f, w in expected.items()
            if f in snap and f != "line" and not _ok(f, snap.get(f), w, row.get("alternatives", {}).get(f, []))
        }
        results.append({"id": row["id"], "ok": not wrong, "wrong": wrong, "remaining": snap.get("eta_s") is not None})
    n_ok = sum(r["ok"] for r in results)
    return {"logs": len(results), "fully_right": n_ok, "share": n_ok / max(1, len(results)),
            "with_remaining_time": sum(r["remaining"] for r in results), "results": results}  # fmt: skip
