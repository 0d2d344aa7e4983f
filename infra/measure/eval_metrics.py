"""Scoring ``schedmate metrics`` on a labelled progress-log folder (labels.jsonl beside the logs).

    schedmate eval metrics ../shared/eval/dev/progress [--json]

A log is fully right when step and loss are exact, step time is within 5% where labelled,
and every other labelled value (lr, epoch, samples/s) is within 1% (or an accepted
alternative). Prints one line per log and the share of logs fully right.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from schedmate.agents.tracker.metric_tracker import metrics_of_file

__all__ = ["evaluate_metrics"]

TOL = {"step": 0.0, "loss": 0.0, "step_time_s": 0.05, "samples_per_s": 0.01, "lr": 0.01, "epoch": 0.0}


def _ok(field: str, got: Any, want: Any, alternatives: list[Any]) -> bool:
    for w in [want, *alternatives]:
        if w is None and got is None:
            return True
        if w is None or got is None:
            continue
        g, e = float(got), float(w)
        tol = TOL.get(field, 0.01)
        if tol == 0.0:
            if math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-12):
                return True
        elif math.isclose(g, e, rel_tol=tol, abs_tol=1e-12):
            return True
    return False


def evaluate_metrics(folder: Path) -> dict[str, Any]:
    """Per-log verdicts and the share of logs fully right."""
    rows = [json.loads(x) for x in (folder / "labels.jsonl").read_text().splitlines() if x.strip()]
    results = []
    for row in rows:
        snap = metrics_of_file(folder / row["file"]).as_dict()
        wrong = {
            f: {"got": snap.get(f), "want": w}
            for f, w in row["expected"].items()
            if not _ok(f, snap.get(f), w, row.get("alternatives", {}).get(f, []))
        }
        results.append({"id": row["id"], "ok": not wrong, "wrong": wrong})
    n_ok = sum(r["ok"] for r in results)
    return {"logs": len(results), "fully_right": n_ok, "share": n_ok / max(1, len(results)), "results": results}
