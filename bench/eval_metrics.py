"""Score ``schedmate metrics`` on a labelled progress-log folder (labels.jsonl beside the logs).

    python bench/eval_metrics.py ../shared/eval/dev/progress [--json]

A log is fully right when step and loss are exact, step time is within 5% where labelled,
and every other labelled value (lr, epoch, samples/s) is within 1% (or an accepted
alternative). Prints one line per log and the share of logs fully right.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from schedmate.agents.tracker import metrics_of_file

TOL = {"step": 0.0, "loss": 0.0, "step_time_s": 0.05, "samples_per_s": 0.01, "lr": 0.01, "epoch": 0.0}


def _ok(field: str, got: object, want: object, alternatives: list[object]) -> bool:
    for w in [want, *alternatives]:
        if w is None and got is None:
            return True
        if w is None or got is None:
            continue
        g, e = float(got), float(w)  # type: ignore[arg-type]
        tol = TOL.get(field, 0.01)
        if tol == 0.0:
            if math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-12):
                return True
        elif math.isclose(g, e, rel_tol=tol, abs_tol=1e-12):
            return True
    return False


def evaluate(folder: Path) -> dict[str, object]:
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


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/eval/dev/progress")
    out = evaluate(folder)
    if "--json" in sys.argv:
        print(json.dumps(out))
        return
    for r in out["results"]:  # type: ignore[attr-defined]
        print(("OK   " if r["ok"] else "FAIL ") + r["id"], "" if r["ok"] else json.dumps(r["wrong"]))
    print(f"fully right: {out['fully_right']}/{out['logs']} = {out['share']:.1%}")


if __name__ == "__main__":
    main()
