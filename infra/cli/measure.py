"""Measuring SchedMate: accuracy on labelled data (``eval``) and benchmarks against a baseline (``bench``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from schedmate.infra.cli._common import JSON_OPTION, bench_app, eval_app, fail, print_fields, run_async, settings
from schedmate.infra.exceptions import ConfigError
from schedmate.schemas.exceptions import SchedMateError

__all__ = ["bench_advise", "bench_diagnose", "bench_track", "eval_advise", "eval_diagnose", "eval_metrics"]


def _verdicts(lines: list[tuple[bool, str, str]]) -> None:
    for ok, ident, why in lines:
        typer.echo(("OK   " if ok else "FAIL ") + ident + ("" if ok else why))


@eval_app.command("metrics")
def eval_metrics(
    folder: Annotated[
        Path, typer.Argument(help="Folder with logs and labels.jsonl, or a labelled excerpts .jsonl.", exists=True)
    ],
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Score `schedmate metrics` against labels: step and loss exact, step time within 5%."""
    from schedmate.infra.measure.eval_metrics import evaluate_metrics  # noqa: PLC0415

    out = evaluate_metrics(folder)
    if as_json:
        typer.echo(json.dumps(out))
        return
    _verdicts([(r["ok"], r["id"], " " + json.dumps(r["wrong"])) for r in out["results"]])
    typer.echo(f"fully right: {out['fully_right']}/{out['logs']} = {out['share']:.1%}")
    typer.echo(f"remaining time known (a total and a speed): {out['with_remaining_time']}/{out['logs']}")


@eval_app.command("diagnose")
def eval_diagnose(
    folder: Annotated[
        Path, typer.Argument(help="Folder with failed logs and labels.jsonl, or an excerpts .jsonl.", exists=True)
    ],
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Score `schedmate diagnose`: root-cause line within ±3, infrastructure F1, category accuracy."""
    from schedmate.agents.failures.knn import FailureKnn  # noqa: PLC0415
    from schedmate.agents.ml.embeddings import Embedder  # noqa: PLC0415
    from schedmate.agents.ml.llm import client_from_settings  # noqa: PLC0415
    from schedmate.infra.measure.eval_failures import evaluate_failures  # noqa: PLC0415

    s = settings(quiet=True)
    knn = FailureKnn(Embedder(s.embedding_model, s.embedding_backend))
    out = asyncio.run(evaluate_failures(folder, llm=client_from_settings(s), knn=knn))
    if as_json:
        typer.echo(json.dumps(out))
        return
    _verdicts([
        (r["line_ok"] and r["category_ok"], r["id"], f" got {r['got']} want {r['want']}") for r in out["results"]
    ])  # fmt: skip
    keys = ("infra_precision", "infra_recall", "infra_f1")
    prf = "/".join("n/a" if out[k] is None else f"{out[k]:.3f}" for k in keys)
    typer.echo(
        f"root-cause line ±3: {out['line_within_tolerance']:.1%}  category accuracy: {out['category_accuracy']:.1%}  "
        f"infrastructure P/R/F1: {prf}" + (f"  llm: {out['llm']}" if out["llm"] else "  (no LLM)")
    )


@eval_app.command("advise")
def eval_advise(
    repos: Annotated[Path, typer.Argument(help="repos.jsonl with expected metadata.", exists=True, dir_okay=False)],
    root: Annotated[Path, typer.Option(help="Folder the records' `workdir` paths are relative to.")] = Path(),
    pairs: Annotated[Path | None, typer.Option(help="similar_pairs.jsonl for the retrieval check.")] = None,
    react: Annotated[bool, typer.Option(help="Let the ReAct agent (SCHEDMATE_LLM_ENDPOINT) fill open fields.")] = False,
    as_json: Annotated[bool, JSON_OPTION] = False,
) -> None:
    """Per-field metadata accuracy against labels (static pass; with --react the LLM agent too), and retrieval."""
    from schedmate.agents.ml.llm import client_from_settings  # noqa: PLC0415
    from schedmate.infra.measure.eval_advise import evaluate_advise  # noqa: PLC0415

    s = settings(quiet=True)
    llm = client_from_settings(s) if react else None
    if react and llm is None:
        fail(ConfigError("--react needs an LLM: set SCHEDMATE_LLM_ENDPOINT (e.g. `schedmate llm serve` prints one)"))
    out = evaluate_advise(s, repos, root, pairs, llm=llm)
    if as_json:
        typer.echo(json.dumps(out))
        return
    _verdicts([(not r["wrong"], r["id"], "".join(f"\n       {w}" for w in r["wrong"])) for r in out["results"]])
    typer.echo("per field: " + ", ".join(f"{k} {v}" for k, v in out["per_field"].items()))
    typer.echo(f"non-null fields right: {out['right']}/{out['total']} = {out['share']:.1%}")
    typer.echo("right answers by path: " + ", ".join(f"{k} {v}" for k, v in out["paths"].items()))
    if out.get("react"):
        r = out["react"]
        n = max(1, len(r["jobs"]))
        typer.echo(f"react: {r['calls'] / n:.1f} calls, {r['tokens'] / n:.0f} tokens, {r['seconds'] / n:.1f} s per job")
    if out.get("retrieval"):
        ret = out["retrieval"]
        for p in ret["pairs"]:
            typer.echo(f"  {p['relation']:<32} {p['id_a']:>18} ~ {p['id_b']:<18} cosine {p['cosine']:.3f}")
        ranked = f"{ret['ordered_right']}/{ret['comparisons']}"
        typer.echo(f"retrieval: {ranked} (similar, different) comparisons ranked right; "
                   f"at threshold {ret['threshold']}: {ret['threshold_right']}/{len(ret['pairs'])} pairs")  # fmt: skip


@bench_app.command("track")
def bench_track(
    as_json: Annotated[bool, JSON_OPTION] = False,
    log: Annotated[Path | None, typer.Option(help="Log to replay (default: a generated mixed log).")] = None,
    lines: Annotated[int, typer.Option(help="Lines for the template path and end to end.")] = 200_000,
    baseline_lines: Annotated[int, typer.Option(help="Lines for the per-line embedding baseline.")] = 1_000,
    broker: Annotated[
        list[str] | None,
        typer.Option(help="Broker(s) for the end-to-end run: embedded, kafka (a 3-node Apache Kafka; repeatable)."),
    ] = None,
) -> None:
    """Template-cached tracking vs embedding every line, and end to end through the broker(s)."""
    from schedmate.infra.measure.bench_track import bench_track as _bench  # noqa: PLC0415

    kinds = tuple(broker or ["embedded"])
    if bad := set(kinds) - {"embedded", "kafka"}:
        fail(ConfigError(f"unknown broker {sorted(bad)}: use embedded or kafka"))
    s = settings()
    result: dict[str, Any] | None = run_async(
        _bench(s, log, lines, baseline_lines, progress=not as_json, brokers=kinds)
    )
    print_fields(result or {}, as_json, width=34, blank="None")


@bench_app.command("load")
def bench_load(
    as_json: Annotated[bool, JSON_OPTION] = False,
    jobs: Annotated[int, typer.Option(help="Jobs streaming at once (finished ones are replaced).")] = 1000,
    minutes: Annotated[float, typer.Option(help="How long to produce.")] = 10.0,
    lines_per_s: Annotated[float, typer.Option(help="Lines each job prints a second.")] = 1.0,
    job_minutes: Annotated[tuple[float, float], typer.Option(help="A job's lifetime: uniform in [min, max].")] = (
        2.0,
        4.0,
    ),
    fail_share: Annotated[float, typer.Option(help="Share of jobs that end with a traceback.")] = 0.05,
    sample_s: Annotated[float, typer.Option(help="Seconds between memory/lag samples.")] = 10.0,
    evict_after_s: Annotated[float, typer.Option(help="The worker's SCHEDMATE_EVICT_AFTER_S.")] = 60.0,
    plot: Annotated[Path | None, typer.Option(help="Write memory and lag over time to this PNG.")] = None,
) -> None:
    """Many concurrent jobs' logs through one worker for minutes: its memory and consumer lag over time."""
    from schedmate.infra.measure.bench_load import bench_load as _bench  # noqa: PLC0415

    s = settings()
    result: dict[str, Any] | None = run_async(
        _bench(
            s, jobs, minutes, lines_per_s, job_minutes, fail_share, sample_s, evict_after_s, plot, progress=not as_json
        )
    )
    out = dict(result or {})
    if not as_json:
        out.pop("samples", None)
    print_fields(out, as_json, width=26, blank="None")


@bench_app.command("diagnose")
def bench_diagnose(
    as_json: Annotated[bool, JSON_OPTION] = False,
    lines: Annotated[int, typer.Option(help="Length of the generated failed log.")] = 300_000,
) -> None:
    """Diagnosis time and classifier calls on a long failed log, vs a linear scan, in one run."""
    from schedmate.infra.measure.bench_diagnose import bench_diagnose as _bench  # noqa: PLC0415

    print_fields(_bench(lines), as_json, width=18, blank="None")


@bench_app.command("advise")
def bench_advise(
    as_json: Annotated[bool, JSON_OPTION] = False,
    jobs: Annotated[int, typer.Option(help="Generated repositories (new jobs).")] = 40,
    repos: Annotated[Path | None, typer.Option(help="A repos.jsonl of real repositories instead.")] = None,
    rounds: Annotated[
        int, typer.Option(help="Submissions of each job through the broker (1 new + resubmissions).")
    ] = 3,
) -> None:
    """Advisor latency for new jobs and resubmissions (vs re-extracting), and jobs/min through the broker."""
    from schedmate.infra.measure.bench_advise import bench_advise as _bench  # noqa: PLC0415

    s = settings(quiet=True)
    try:
        result = _bench(s, jobs, repos, rounds)
    except SchedMateError as exc:
        fail(exc)
    print_fields(result, as_json, width=26, blank="None")
