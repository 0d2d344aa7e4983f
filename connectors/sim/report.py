"""The simulation report: a Markdown table, JCT CDF plots (PNG) and the per-policy figures as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from schedmate.connectors.sim.simulate import Report

__all__ = ["write_report"]


def _hours(s: float) -> str:
    return f"{s / 3600:.2f}"


def table_rows(report: Report) -> list[list[str]]:
    """Rows of the policy table (hours), with the ratio of each policy's average JCT to the best baseline's."""
    out = []
    for name, result in report.policies.items():
        s = result.summary()
        quality = result.extra.get("within_100pct")
        out.append([
            name, _hours(float(s["avg_jct_s"])), _hours(float(s["p50_jct_s"])), _hours(float(s["p99_jct_s"])),
            _hours(float(s["avg_queue_s"])), _hours(float(s["makespan_s"])),
            f"{float(result.extra.get('longest_1pct_slowdown', float('nan'))):.2f}",
            "—" if quality is None else f"{100 * float(quality):.1f} %", f"{result.wall_s:.1f}",
        ])  # fmt: skip
    return out


HEADER = ["policy", "avg JCT (h)", "p50 JCT (h)", "p99 JCT (h)", "avg queue (h)", "makespan (h)",
          "slowdown of the longest 1 %", "estimates within 100 %", "sim wall (s)"]  # fmt: skip


def _cdf_plot(report: Report, path: Path, log: bool) -> None:
    import matplotlib as mpl  # noqa: PLC0415

    mpl.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, result in report.policies.items():
        jct = np.sort(np.asarray([max(r.jct_s, 1.0) for r in result.results], dtype=np.float64)) / 3600
        ax.plot(jct, np.arange(1, len(jct) + 1) / len(jct), label=name, linewidth=1.5)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (hours)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"JCT CDF — {report.trace}, {report.jobs:,} jobs, {report.gpus} GPUs, seed {report.seed}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(report: Report, folder: Path) -> Path:
    """``report.md``, ``jct_cdf.png`` (log scale), ``jct_cdf_linear.png`` and ``result.json`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    _cdf_plot(report, folder / "jct_cdf.png", log=True)
    _cdf_plot(report, folder / "jct_cdf_linear.png", log=False)
    data = report.as_dict()
    data["estimates"] = {name: r.extra for name, r in report.policies.items() if r.extra}
    data["estimator_methods"] = report.estimator_methods
    data["left_out"] = report.left_out
    (folder / "result.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    rows = table_rows(report)
    avg = {name: float(r.summary()["avg_jct_s"]) for name, r in report.policies.items()}
    lines = [
        f"# Simulation: {report.trace}",
        "",
        f"{report.jobs:,} jobs on {report.nodes} nodes × {report.gpus // report.nodes} GPUs = {report.gpus} GPUs, "
        f"seed {report.seed}. Left out: {report.left_out}. QSSF groups on: {report.groups_on}. Setup (workloads, "
        f"Advisor extraction and embedding): {report.setup_s:.1f} s.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]
    pairs = [("sjf-schedmate", "qssf"), ("sjf-schedmate", "tiresias"), ("sjf-schedmate", "fifo"),
             ("lucid-schedmate", "lucid"), ("lucid-schedmate-profiler", "lucid"),
             ("lucid-schedmate", "lucid-schedmate-profiler"), ("sjf-schedmate", "sjf-oracle"),
             ("sjf-schedmate", "sjf-schedmate-manual"), ("srtf-schedmate", "srtf-qssf"), ("srtf-schedmate", "qssf"),
             ("srtf-schedmate", "srtf-oracle"), ("lucid-oracle", "lucid"), ("lucid-schedmate", "lucid-oracle"),
             ("srtf-schedmate", "tiresias"), ("srtf-qssf", "qssf")]  # fmt: skip
    found = [(a, b) for a, b in pairs if a in avg and b in avg]
    if found:
        lines += ["Average JCT compared:", ""]
        for a, b in found:
            ratio = avg[b] / avg[a] if avg[a] > 0 else float("inf")
            if avg[a] <= avg[b]:
                lines.append(f"- {a} vs {b}: {100 * (1 - avg[a] / avg[b]):.1f} % lower average JCT ({ratio:.2f}x)")
            else:
                lines.append(f"- {a} vs {b}: {100 * (avg[a] / avg[b] - 1):.1f} % higher average JCT ({ratio:.2f}x)")
        lines.append("")
    lines += ["![JCT CDF](jct_cdf.png)", "", "![JCT CDF, linear](jct_cdf_linear.png)", ""]
    faults = {name: {k: r.extra[k] for k in ("node_faults", "drains", "job_failures")}
              for name, r in report.policies.items() if "node_faults" in r.extra}  # fmt: skip
    if faults:
        lines += ["Node faults injected, nodes drained by the Failure Handler, and job failures:", ""]
        lines += [f"- {name}: {json.dumps(f)}" for name, f in faults.items()]
        lines.append("")
    if report.estimator_methods:
        lines += ["How the Advisor estimated (method → jobs, re-estimates included):", ""]
        lines += [f"- {name}: {json.dumps(m, sort_keys=True)}" for name, m in report.estimator_methods.items()]
        lines.append("")
    path = folder / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
