"""Cluster traces as lists of :class:`TraceJob`: Philly, ElasticFlow, Helios, Acme and a generic CSV.

Every loader returns jobs sorted by submission time with submission times relative to the first
(seconds). What a trace lacks is left empty and said in :attr:`Trace.groups_on`: the QSSF-style
baseline groups past jobs on the user and job name when a trace has them, and on what it has
otherwise (Philly: the virtual cluster and the GPU count; ElasticFlow: the cluster and the GPU count).

Column layouts:

* Philly (Sia artifact, ``../shared/data/philly_jobs.csv``): ``timestamp, duration, num_gpus, gpu_time, cluster``.
* ElasticFlow raw traces (microsoft/elasticflow-traces, MIT; shipped in ``data/elasticflow``): one CSV per
  cluster, ``job_id, submission_time, duration, num_gpu``.
* Helios (S-Lab, ``cluster_log.csv`` per cluster): ``job_id, user, vc, jobname, gpu_num, cpu_num, node_num,
  state, submit_time, start_time, end_time, duration, queue``.
* Acme (S-Lab, ``trace_seren.csv`` / ``trace_kalos.csv``): ``job_id, user, node_num, gpu_num, cpu_num, type,
  state, submit_time, start_time, end_time, duration, queue, gpu_time`` (no job name).
* Generic CSV: a submission time (``submit_time``/``submission_time``/``timestamp``/``submit``; epoch seconds,
  relative seconds or ISO 8601), a duration (``duration``/``duration_s``/``runtime``/``elapsed``) and GPUs
  (``num_gpus``/``gpus``/``gpu_num``/``num_gpu``); optional ``job_id``, ``user``, ``name``/``jobname``,
  ``vc``/``cluster``, ``status``/``state``.
"""

from __future__ import annotations

import csv
import io
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

from schedmate.agents.advisor.trace_import import find_column, parse_time
from schedmate.connectors.exceptions import TraceError

__all__ = ["Trace", "TraceJob", "load_trace"]

_SUBMIT: Final = ("submit_time", "submission_time", "timestamp", "submit", "submitted_at")
_DURATION: Final = ("duration", "duration_s", "runtime", "run_time", "elapsed", "duration_sec")
_GPUS: Final = ("num_gpus", "gpus", "gpu_num", "num_gpu", "gpu_count")
_STATUS: Final = {"completed": "completed", "pass": "completed", "success": "completed", "succeeded": "completed",
                  "failed": "failed", "fail": "failed", "error": "failed", "timeout": "failed", "node_fail": "failed",
                  "killed": "cancelled", "cancelled": "cancelled", "canceled": "cancelled"}  # fmt: skip
ELASTICFLOW_CLUSTERS: Final = tuple(f"cluster{i:02d}" for i in range(1, 11))


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One job of a trace: when it came, how long it ran, on how many GPUs, and what the trace says of it."""

    job_id: str
    submit_s: float
    duration_s: float
    gpus: int
    user: str = ""
    name: str = ""
    vc: str = ""
    status: str = ""  # completed | failed | cancelled, or "" when the trace does not say


@dataclass(frozen=True)
class Trace:
    """A loaded trace."""

    name: str
    jobs: list[TraceJob]
    groups_on: str  # what the QSSF-style history groups on for this trace
    skipped: int = 0  # rows without a usable submission time, duration or GPU count

    def head(self, n: int | None) -> Trace:
        """The first ``n`` jobs in submission order (all with ``None``)."""
        if n is None or n >= len(self.jobs):
            return self
        return Trace(self.name, self.jobs[:n], self.groups_on, self.skipped)


def _rows(name: str, text: Iterable[str], prefix: str = "") -> tuple[list[TraceJob], int]:
    reader = csv.DictReader(text)
    header = list(reader.fieldnames or [])
    sub, dur, gpu = find_column(header, _SUBMIT), find_column(header, _DURATION), find_column(header, _GPUS)
    missing = [what for what, col in (("submission time", sub), ("duration", dur), ("GPU count", gpu)) if col is None]
    if missing:
        raise TraceError(f"{name}: no {' / '.join(missing)} column; the header is {header}. A trace needs a "
                         f"submission time ({', '.join(_SUBMIT)}), a duration ({', '.join(_DURATION)}) and GPUs "
                         f"({', '.join(_GPUS)})")  # fmt: skip
    assert sub is not None and dur is not None and gpu is not None
    opt = {k: find_column(header, names) for k, names in {
        "job_id": ("job_id", "jobid", "id"), "user": ("user", "user_id", "username"),
        "name": ("name", "jobname", "job_name"), "vc": ("vc", "cluster", "virtual_cluster", "partition"),
        "status": ("status", "state", "final_status"),
    }.items()}  # fmt: skip
    jobs: list[TraceJob] = []
    skipped = 0
    for i, row in enumerate(reader, start=1):
        submit = parse_time(row.get(sub) or "")
        try:
            duration = float(row.get(dur) or "")
            gpus = int(float(row.get(gpu) or ""))
        except ValueError:
            skipped += 1
            continue
        if submit is None or not duration >= 0 or gpus < 0 or duration == float("inf"):
            skipped += 1
            continue

        def get(key: str, row: dict[str, str] = row) -> str:
            col = opt[key]
            return (row.get(col) or "").strip() if col else ""

        jobs.append(TraceJob(
            job_id=get("job_id") or f"{prefix}{i}", submit_s=submit, duration_s=duration, gpus=gpus, user=get("user"),
            name=get("name"), vc=get("vc"), status=_STATUS.get(get("status").lower(), ""),
        ))  # fmt: skip
    return jobs, skipped


def _relative(jobs: list[TraceJob]) -> list[TraceJob]:
    jobs.sort(key=lambda j: (j.submit_s, j.job_id))
    if not jobs:
        return jobs
    t0 = jobs[0].submit_s
    return [TraceJob(j.job_id, j.submit_s - t0, j.duration_s, j.gpus, j.user, j.name, j.vc, j.status) for j in jobs]


def _groups_on(jobs: list[TraceJob]) -> str:
    has = [k for k in ("user", "name", "vc") if any(getattr(j, k) for j in jobs[:1000])]
    return "+".join([*has, "gpus"])


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TraceError(f"cannot read the trace {path}: {exc}") from exc


def _elasticflow(clusters: list[str]) -> tuple[list[TraceJob], int]:
    data = resources.files("schedmate.connectors.sim").joinpath("data/elasticflow/raw-traces.tar.gz")
    jobs: list[TraceJob] = []
    skipped = 0
    with data.open("rb") as raw, tarfile.open(fileobj=raw, mode="r:gz") as tar:
        for cluster in clusters:
            member = tar.extractfile(f"{cluster}.csv")
            if member is None:  # pragma: no cover - the shipped archive holds every cluster
                raise TraceError(f"the ElasticFlow archive has no {cluster}.csv")
            got, bad = _rows(f"elasticflow:{cluster}", io.TextIOWrapper(member, encoding="utf-8"), f"{cluster}-")
            jobs += [TraceJob(j.job_id, j.submit_s, j.duration_s, j.gpus, vc=cluster) for j in got]
            skipped += bad
    return jobs, skipped


def load_trace(spec: str) -> Trace:
    """``philly`` (the shared Philly CSV), ``elasticflow`` (all 10 clusters) or ``elasticflow:clusterNN``,
    ``helios:PATH``, ``acme:PATH``, or the path of a generic CSV."""
    kind, _, rest = spec.partition(":")
    if spec == "philly" or kind == "philly":
        path = Path(rest) if rest else _philly_path()
        jobs, skipped = _rows(str(path), io.StringIO(_read(path)), "philly-")
        jobs = _relative(jobs)
        return Trace("philly", jobs, "vc+gpus (Philly has no user or job name)", skipped)
    if kind == "elasticflow":
        clusters = [rest] if rest else list(ELASTICFLOW_CLUSTERS)
        unknown = [c for c in clusters if c not in ELASTICFLOW_CLUSTERS]
        if unknown:
            raise TraceError(f"no ElasticFlow cluster {unknown[0]!r}; use one of {', '.join(ELASTICFLOW_CLUSTERS)}")
        jobs, skipped = _elasticflow(clusters)
        return Trace(spec, _relative(jobs), "vc+gpus (ElasticFlow has no user or job name; vc = its cluster)", skipped)
    if kind in ("helios", "acme") and rest:
        path = Path(rest)
        jobs, skipped = _rows(str(path), io.StringIO(_read(path)), f"{kind}-")
        jobs = _relative(jobs)
        return Trace(f"{kind}:{path.name}", jobs, _groups_on(jobs), skipped)
    path = Path(spec)
    if not path.is_file():
        raise TraceError(f"no trace {spec!r}: give philly, elasticflow[:clusterNN], helios:PATH, acme:PATH or the "
                         "path of a CSV file")  # fmt: skip
    jobs, skipped = _rows(str(path), io.StringIO(_read(path)), f"{path.stem}-")
    jobs = _relative(jobs)
    return Trace(path.name, jobs, _groups_on(jobs), skipped)


def _philly_path() -> Path:
    from schedmate.infra.settings import Settings  # noqa: PLC0415

    for candidate in (Settings().philly_trace, Path.cwd() / ".." / "shared" / "data" / "philly_jobs.csv"):
        if candidate is not None and candidate.is_file():
            return candidate
    raise TraceError("the Philly trace is not here: set SCHEDMATE_PHILLY_TRACE to the path of philly_jobs.csv, or "
                     "give --trace philly:PATH")  # fmt: skip
