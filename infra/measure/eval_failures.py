"""Scoring ``schedmate diagnose`` on labelled failed logs: a folder (labels.jsonl beside the logs) or an
excerpts file (one labelled ``text`` per line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedmate.agents.failures.knn import FailureKnn
from schedmate.agents.failures.llm_vote import diagnose_lines_llm
from schedmate.agents.logtext.lines import split_physical_lines
from schedmate.agents.ml.llm import LLMClient
from schedmate.infra.measure.eval_metrics import labelled_rows

__all__ = ["evaluate_failures"]


def _f1(tp: int, fp: int, fn: int) -> tuple[float | None, float | None, float | None]:
    """Precision, recall and F1 of the infrastructure class; None where undefined (a set with no infrastructure
    failure, labelled or said, has no infrastructure F1 — not an F1 of 0)."""
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    if p is None and r is None:
        return None, None, None
    pp, rr = p or 0.0, r or 0.0
    return p, r, (2 * pp * rr / (pp + rr) if pp + rr else 0.0)


async def evaluate_failures(
    folder: Path, tolerance: int = 3, llm: LLMClient | None = None, knn: FailureKnn | None = None
) -> dict[str, Any]:
    """Root-cause line within ±tolerance, infrastructure-vs-rest precision/recall/F1, category accuracy."""
    results = []
    tp = fp = fn = 0
    for row in labelled_rows(folder):
        raw = row["text"].encode() if "text" in row else (folder / row["file"]).read_bytes()
        lines = split_physical_lines(raw)
        d = (await diagnose_lines_llm(lines, llm, knn=knn)).as_dict()
        want_line = row["first_error_line"]
        line_ok = (
            d["first_error_line"] is None
            if want_line is None
            else d["first_error_line"] is not None and abs(d["first_error_line"] - want_line) <= tolerance
        )
        want_infra = row["category"] == "infrastructure"
        got_infra = d["category"] == "infrastructure"
        tp += want_infra and got_infra
        fp += got_infra and not want_infra
        fn += want_infra and not got_infra
        results.append({
            "id": row["id"], "line_ok": line_ok, "category_ok": d["category"] == row["category"],
            "component_ok": d["infra_component"] == row.get("infra_component"),
            "got": {k: d[k] for k in ("first_error_line", "category", "infra_component", "faulty_node", "action",
                                      "path")},
            "want": {"first_error_line": want_line, "category": row["category"],
                     "infra_component": row.get("infra_component")},
        })  # fmt: skip
    n = max(1, len(results))
    p, r, f1 = _f1(tp, fp, fn)
    return {
        "llm": None if llm is None else llm.stats.as_dict(),
        "logs": len(results),
        "line_within_tolerance": sum(x["line_ok"] for x in results) / n,
        "category_accuracy": sum(x["category_ok"] for x in results) / n,
        "infra_precision": p,
        "infra_recall": r,
        "infra_f1": f1,
        "results": results,
    }
