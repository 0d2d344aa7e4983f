"""``schedmate eval advise``: metadata accuracy per field against labels, and retrieval on labelled pairs.

Scoring follows ../shared/eval/README.md: numbers exact (``params_millions`` within ±15%),
vocabulary fields exact, ``framework`` as the whole list, and any answer listed under
``acceptable`` also counts. ``model_name`` and ``dataset`` are free text: an answer is right when
its first word and at least half of its words (lower-cased, ``-``/``_`` inside words dropped)
occur in the label. Retrieval: every pair's cosine between the two jobs' metadata vectors; a
"similar" pair (resubmission or same workload) must score above every "different" pair.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.facets import embed_metadata
from schedmate.agents.advisor.react import react_fill
from schedmate.agents.ml.embeddings import Embedder
from schedmate.agents.ml.llm import LLMClient
from schedmate.infra.settings import Settings
from schedmate.schemas.jobs_metadata import WorkloadMetadata

__all__ = ["FIELDS", "evaluate_advise", "field_right", "repository"]

FIELDS = ("model_name", "model_type", "task", "params_millions", "dataset", "batch_size_per_device",
          "global_batch_size", "epochs", "max_steps", "learning_rate", "precision", "framework", "distributed",
          "num_gpus")  # fmt: skip


def _words(text: Any) -> list[str]:
    s = re.sub(r"(?<=[a-z0-9])[-_](?=[a-z0-9])", "", str(text).lower())
    return [t for t in re.split(r"[^a-z0-9.]+", s) if t.strip(".")]


def field_right(field: str, got: Any, want: Any) -> bool:
    """Whether ``got`` counts as ``want`` for ``field``."""
    if isinstance(want, bool) or isinstance(got, bool):
        return bool(got == want)
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        tol = 0.15 * abs(want) if field == "params_millions" else 1e-9 * max(1.0, abs(want))
        return abs(got - want) <= tol
    if field in ("model_name", "dataset") and got:
        g, w = _words(got), set(_words(want))
        return bool(g) and g[0] in w and sum(t in w for t in g) >= len(g) / 2
    return bool(got == want)


def repository(root: Path, record: dict[str, Any]) -> Path | None:
    """The root of a record's repository: its ``repo_root`` (relative to ``root``) if it names one, else the
    exported repository its ``workdir`` lies in (``repos/<short>/<sub-folder>``, ../shared/eval/README.md)."""
    if record.get("repo_root"):
        return root / str(record["repo_root"])
    parts = PurePosixPath(str(record.get("workdir", ""))).parts
    return root / parts[0] / parts[1] if len(parts) >= 2 and parts[0] == "repos" else None


async def _react_all(
    llm: LLMClient, jobs: list[tuple[Path, str, WorkloadMetadata, Path | None]]
) -> list[tuple[WorkloadMetadata, Any]]:
    try:
        return [await react_fill(workdir, command, meta, llm, repo=repo) for workdir, command, meta, repo in jobs]
    finally:
        await llm.close()  # its connections belong to this loop


def evaluate_advise(
    settings: Settings, repos: Path, root: Path, pairs: Path | None, llm: LLMClient | None = None
) -> dict[str, Any]:
    """Score the metadata pass on ``repos`` (workdirs under ``root``) and retrieval on ``pairs``.

    With ``llm``, the ReAct agent fills what the static pass left open (its calls, tokens and seconds per job are
    reported). Per field, the paths that found the right answers (``static``, ``use``, ``command``, ``react``)."""
    records = [json.loads(line) for line in repos.read_text().splitlines() if line.strip()]
    per: dict[str, list[int]] = {f: [0, 0] for f in FIELDS}
    paths: dict[str, dict[str, int]] = {f: {} for f in FIELDS}
    results, metas, react = [], {}, []
    static = [extract_metadata(root / r["workdir"], r["command"], repo=repository(root, r)) for r in records]
    if llm is not None:  # one event loop for every job: the client's connection pool and limits belong to it
        filled = asyncio.run(
            _react_all(
                llm,
                [
                    (root / r["workdir"], r["command"], m, repository(root, r))
                    for r, m in zip(records, static, strict=True)
                ],
            )
        )
        static = [m for m, _ in filled]
        react = [{"id": r["id"], **report.as_dict()} for r, (_, report) in zip(records, filled, strict=True)]
    for r, meta in zip(records, static, strict=True):
        metas[r["id"]] = meta
        got = meta.model_dump()
        wrong = []
        for f in FIELDS:
            want = r["expected"].get(f)
            if want is None:
                continue
            ok = any(field_right(f, got.get(f), w) for w in [want, *r.get("acceptable", {}).get(f, [])])
            per[f][0] += ok
            per[f][1] += 1
            if ok:
                src = meta.provenance.get(f)
                how = src.path if src is not None else "rules"
                paths[f][how] = paths[f].get(how, 0) + 1
            if not ok:
                wrong.append(f"{f}: got {got.get(f)!r}, want {want!r}")
        results.append(
            {"id": r["id"], "wrong": wrong, "metadata": meta.model_dump(mode="json", exclude={"provenance"})}
        )
    right, total = sum(a for a, _ in per.values()), sum(b for _, b in per.values())
    out: dict[str, Any] = {
        "results": results,
        "per_field": {f: f"{a}/{b}" for f, (a, b) in per.items() if b},
        "right": right,
        "total": total,
        "share": right / total if total else 0.0,
        "paths": {f: v for f, v in paths.items() if v},
    }
    if llm is not None:
        out["react"] = {"jobs": react, "calls": sum(x["calls"] for x in react),
                        "tokens": sum(x["prompt_tokens"] + x["completion_tokens"] for x in react),
                        "seconds": round(sum(x["seconds"] for x in react), 3)}  # fmt: skip
    if pairs is not None:
        labelled = [json.loads(line) for line in pairs.read_text().splitlines() if line.strip()]
        ids = sorted({p[k] for p in labelled for k in ("id_a", "id_b") if p[k] in metas})
        vecs = embed_metadata(Embedder(settings.embedding_model, settings.embedding_backend), [metas[i] for i in ids])
        index = {i: n for n, i in enumerate(ids)}
        scored = []
        for p in labelled:
            if p["id_a"] in index and p["id_b"] in index:
                cos = float(np.dot(vecs[index[p["id_a"]]], vecs[index[p["id_b"]]]))
                scored.append({**{k: p[k] for k in ("id_a", "id_b", "relation")}, "cosine": round(cos, 4)})
        similar = [p["cosine"] for p in scored if p["relation"] != "different_workload"]
        different = [p["cosine"] for p in scored if p["relation"] == "different_workload"]
        thr = settings.advise_threshold
        out["retrieval"] = {
            "pairs": scored,
            "comparisons": len(similar) * len(different),
            "ordered_right": sum(s > d for s in similar for d in different),
            "threshold": thr,
            "threshold_right": sum((p["cosine"] >= thr) == (p["relation"] != "different_workload") for p in scored),
        }
    return out
