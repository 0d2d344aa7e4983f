"""The Scheduling Advisor: a submission → workload metadata and a duration/GPU estimate, in milliseconds.

Order of work for one submission:

1. **Admission**: the user's recent submissions from the same working directory with the same
   command (and git commit, when both know it) → a resubmission; its metadata is reused at once.
2. **Version manager**: otherwise, metadata cached for this (workdir, command) is reused when
   none of the files it was read from changed; changed files → re-extraction, merged per field.
3. **Static extraction** (``extract_metadata``): read-only, confined to the working directory.
4. **Retrieval**: the metadata embedded as weighted facets (:mod:`.facets`), cosine top-k over finished jobs.
5. **Estimate** from the matches, else the QSSF-like fallback, else the prior.
6. The submission is written to history as ``pending`` so its outcome can be learnt later.

Blocking: call :meth:`Advisor.advise` from a worker thread in async code.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schedmate.agents.advisor.estimator import Estimate, estimate
from schedmate.agents.advisor.extract.budget import Budget
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.sandbox import Extracted, ExtractionSandbox
from schedmate.agents.advisor.facets import embed_metadata, metadata_text, vector_dim
from schedmate.agents.advisor.history import History
from schedmate.agents.advisor.version_cache import VersionCache, merge
from schedmate.agents.exceptions import WorkspaceError
from schedmate.agents.ml.embeddings import Embedder
from schedmate.infra.redact import redact, redact_args
from schedmate.infra.settings import Settings
from schedmate.schemas.jobs_metadata import WorkloadMetadata
from schedmate.schemas.jobs_submitted import JobSubmitted

__all__ = ["Advice", "Advisor", "command_text"]


def command_text(command: list[str] | str) -> str:
    """A submission's command as one command line: a string as typed, or argv words (one word: a typed line)."""
    if isinstance(command, str):
        return " ".join(command.split())
    if len(command) == 1:
        return " ".join(command[0].split())
    return " ".join(a if a in ("&&", "||", ";", "|") else shlex.quote(a) for a in command)


@dataclass
class Advice:
    """What the advisor found for one submission."""

    job_id: str
    metadata: WorkloadMetadata
    estimate: Estimate
    resubmission_of: str | None
    path: str  # resubmission | cache | cache+refresh | static | unavailable
    elapsed_s: float
    refreshed: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The CLI's JSON shape."""
        meta = self.metadata.model_dump(mode="json", exclude={"provenance", "extra"})
        est = asdict(self.estimate)
        return {
            "metadata": meta,
            "provenance": {k: v.model_dump(mode="json") for k, v in self.metadata.provenance.items()},
            "estimate": est,
            "resubmission_of": self.resubmission_of,
            "path": self.path,
            "elapsed_s": round(self.elapsed_s, 4),
            **({"refreshed": self.refreshed} if self.refreshed else {}),
            **({"error": self.error} if self.error else {}),
        }


class Advisor:
    """Admission, version cache, extraction, retrieval and estimation over one history."""

    def __init__(
        self,
        history: History,
        embedder: Embedder,
        versions: VersionCache | None = None,
        k: int = 3,
        threshold: float = 0.90,
        sandbox: ExtractionSandbox | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.history = history
        self.embedder = embedder
        self.versions = versions if versions is not None else VersionCache()
        self.k = k
        self.threshold = threshold
        self.sandbox = sandbox  # None: extract in the calling thread (cooperative budget only)
        self.budget = budget

    def close(self) -> None:
        """Stop the extraction processes."""
        if self.sandbox is not None:
            self.sandbox.close()

    def _extract(self, workdir: Path, command: str, repo: Path | None = None) -> Extracted:
        if self.sandbox is not None:
            return self.sandbox.extract(workdir, command, repo)
        reads: dict[str, str] = {}
        cuts: list[str] = []
        budget = Budget(**{**asdict(self.budget), "started": time.monotonic()}) if self.budget else None
        meta = extract_metadata(workdir, command, reads=reads, budget=budget, cuts=cuts, repo=repo)
        return Extracted(meta, reads, cuts)

    @classmethod
    def from_settings(cls, settings: Settings, embedder: Embedder | None = None) -> Advisor:
        """The advisor over the configured data folder (history in LanceDB, version cache on disk)."""
        embedder = embedder or Embedder(settings.embedding_model, settings.embedding_backend)
        history = History(settings.store_dir, dim=vector_dim(embedder))
        versions = VersionCache(settings.data_dir / "advisor" / "versions.jsonl")
        budget = Budget(time_s=settings.extract_time_s)
        sandbox = ExtractionSandbox(settings.extract_processes, settings.extract_memory_mb, budget)
        return cls(history, embedder, versions, k=settings.advise_top_k, threshold=settings.advise_threshold,
                   sandbox=sandbox, budget=budget)  # fmt: skip

    def warm_up(self) -> None:
        """Load the embedding model and the history's in-memory views."""
        self.embedder.encode(["warm up"])
        self.history.warm_up()
        if self.sandbox is not None:
            self.sandbox.warm_up()

    def _admission(self, sub: JobSubmitted, command: str) -> dict[str, Any] | None:
        if not sub.workdir:
            return None
        for row in self.history.recent_for(sub.user, str(Path(sub.workdir).resolve())):
            if row["job_id"] == sub.job_id or " ".join(row["command"].split()) != command:
                continue
            if sub.git_commit and row.get("git_commit") and sub.git_commit != row["git_commit"]:
                continue
            return row
        return None

    def _metadata(self, sub: JobSubmitted, command: str) -> tuple[WorkloadMetadata, str, list[str], str | None]:
        workdir = str(Path(sub.workdir).resolve()) if sub.workdir else ""
        repo = str(Path(sub.repo_root).resolve()) if sub.repo_root and workdir else ""
        entry, changed = self.versions.lookup(workdir, command, sub.git_commit or "", repo)
        if entry is not None and not changed:
            return entry.metadata, "cache", [], None
        if not workdir:
            return WorkloadMetadata(num_gpus=sub.num_gpus or None), "unavailable", [], "the submission names no workdir"
        try:
            got = self._extract(Path(workdir), command, Path(repo) if repo else None)
        except WorkspaceError as exc:
            return WorkloadMetadata(num_gpus=sub.num_gpus or None), "unavailable", [], str(exc)
        fresh, reads = got.metadata, got.reads
        cut = redact("; ".join(got.cuts)[:1000]) or None  # steps skipped or cut short: the metadata is partial
        refreshed: list[str] = []
        path = "static+cut" if cut else "static"
        if entry is not None:
            fresh, refreshed = merge(entry.metadata, fresh, changed, workdir)
            path = "cache+refresh"
        self.versions.store(workdir, command, sub.git_commit or "", reads, fresh, repo)
        return fresh, path, refreshed, cut

    def advise(
        self,
        sub: JobSubmitted,
        record: bool = True,
        refine: Callable[[WorkloadMetadata], WorkloadMetadata] | None = None,
    ) -> Advice:
        """Metadata and an estimate for ``sub``; with ``record``, the submission joins the history.

        ``refine`` (the ReAct agent, when an LLM is configured) may fill fields the static pass left open
        before the estimate is made."""
        t0 = time.perf_counter()
        command = command_text(redact_args(sub.command))  # history and cache keys never hold a secret
        prior = self._admission(sub, command)
        vector: Any = None
        refreshed: list[str] = []
        error = None
        if prior is not None:
            meta = WorkloadMetadata.model_validate_json(prior["metadata"])
            path, resub = "resubmission", prior["job_id"]
            if prior.get("has_vector"):
                vector = np.asarray(prior["vector"], dtype=np.float32)
        else:
            meta, path, refreshed, error = self._metadata(sub, command)
            resub = None
            if refine is not None and path != "unavailable":
                refined = refine(meta)
                if refined != meta:
                    meta, path = refined, f"{path}+react"
        text = metadata_text(meta)
        known = bool(meta.model_name or meta.model_type or meta.dataset)  # else similarity would be meaningless
        if vector is None and path != "unavailable" and known:
            vector = embed_metadata(self.embedder, [meta])[0]
        matches = (
            self.history.similar(vector, k=self.k, threshold=self.threshold, exclude=sub.job_id)
            if vector is not None
            else []
        )
        num_gpus = meta.num_gpus or sub.num_gpus
        est = estimate(
            meta.model_dump(),
            matches,
            self.history.summary,
            user=sub.user,
            cluster=sub.cluster,
            name=sub.name,
            num_gpus=num_gpus,
        )
        if record:  # a pending row; a redelivered submission does not overwrite a recorded outcome
            self.history.upsert([{
                "job_id": sub.job_id, "user": sub.user, "cluster": sub.cluster, "name": sub.name,
                "workdir": str(Path(sub.workdir).resolve()) if sub.workdir else "", "command": command,
                "num_gpus": num_gpus, "git_commit": sub.git_commit or "", "git_branch": sub.git_branch or "",
                "metadata": meta.model_dump(mode="json"), "text": text,
                "vector": None if vector is None else vector.tolist(), "submit_ts": sub.submitted_at,
                "status": "pending",
            }], only_pending=True)  # fmt: skip
        return Advice(sub.job_id, meta, est, resub, path, time.perf_counter() - t0, refreshed, error)
