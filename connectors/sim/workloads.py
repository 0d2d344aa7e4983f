"""Workloads for trace jobs: traces carry no code, so each job gets a training project and a command.

The catalogue (``catalogue/catalogue.json``) lists small but realistic training projects shipped
with SchedMate (``catalogue/<project>/``: argparse, fire, yacs, nanoGPT-style configurators, the HF
Trainer, Lightning and Keras) with their command variants (model, task, GPUs, training length) and
what one length unit (epoch or step) costs on one GPU.

Attaching, as the papers do: a job that ran ``D`` seconds on ``G`` GPUs is given a project that runs
on ``G`` GPUs and a variant whose planned length at that speed comes within a factor of two of
``D`` (drawn at random among those, seeded by the job id), so the code says roughly how long the job
runs — which is the information the Advisor reads and a trace-only estimator lacks. A job that ended
early (the trace says failed/cancelled, or, when it does not say, drawn with probability
``early_exit``, default 0.3) planned 1.5-10x longer than it ran (failures caused by bad nodes are
injected by the simulator, not drawn here). Resubmissions: with probability ``recur`` (default 0.5)
a job reruns one of the last 64 workloads of its GPU count that fit its duration, and 30 % of those change
a hyper-parameter (the project's ``tweak`` flag) — the papers' recurring jobs. Its true duration is always the trace's;
the mapping is reproducible for a seed and the jobs' order.
"""

from __future__ import annotations

import bisect
import json
import math
import random
from collections import deque
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from schedmate.connectors.exceptions import TraceError
from schedmate.connectors.sim.trace import TraceJob

__all__ = ["Assignment", "Catalogue", "Workload", "attach"]

_LOG2 = math.log(2.0)
_SCALING = 0.9  # data-parallel speed-up: G GPUs run a unit G**0.9 times faster


@dataclass(frozen=True, slots=True)
class Workload:
    """One command of one project: what the Advisor is given."""

    key: str
    project: str
    workdir: Path
    command: str
    gpus: int
    length: float
    unit: str
    unit_s: float  # seconds per unit on one GPU
    util: float
    mem_mb: float

    @property
    def planned_s(self) -> float:
        """How long the command runs to its end on its GPUs."""
        return float(self.length * self.unit_s / self.gpus**_SCALING)


@dataclass(frozen=True, slots=True)
class Assignment:
    """What a trace job runs."""

    workload: Workload
    early_exit: bool
    status: str  # completed | failed
    util_true: float
    planned_s: float  # how long the job would have run to its end (its trace duration unless it ended early)


def _launch(gpus: int, per_node: int) -> str:
    if gpus == 1:
        return "python"
    if gpus <= per_node:
        return f"torchrun --nproc_per_node={gpus}"
    per = next(p for p in range(per_node, 0, -1) if gpus % p == 0)
    return f"torchrun --nnodes={gpus // per} --nproc_per_node={per}"


class Catalogue:
    """The shipped projects and their variants."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(str(resources.files("schedmate.connectors.sim").joinpath("catalogue")))
        data = json.loads((self.root / "catalogue.json").read_text(encoding="utf-8"))
        self.per_node = int(data["gpus_per_node"])
        self.projects: list[dict[str, Any]] = data["projects"]
        self._cache: dict[tuple[int, int, float, int, int], Workload] = {}
        self._by_gpus: dict[int, list[tuple[int, int, float, list[float], list[float]]]] = {}

    def runs_on(self, project: dict[str, Any], gpus: int) -> bool:
        """Whether ``project`` has a launch for ``gpus`` GPUs."""
        spec = project["gpus"]
        if isinstance(spec, str):
            return gpus >= int(spec.rstrip("+"))
        return gpus in spec

    def workload(self, p: int, v: int, length: float, gpus: int, tweak: int = 0) -> Workload:
        """The workload of project ``p``, variant ``v``, one length and GPU count; ``tweak`` k > 0 appends the
        project's tweak flag with its k-th value (a resubmission that changed a hyper-parameter)."""
        key = (p, v, length, gpus, tweak)
        got = self._cache.get(key)
        if got is None:
            project = self.projects[p]
            variant = project["variants"][v]
            subs = {k: val for k, val in variant.items() if k not in ("unit_s", "util", "mem_mb")}
            length_text = str(int(length)) if float(length).is_integer() else f"{length}"
            command = project["command"].format(launch=_launch(gpus, self.per_node), gpus=gpus, length=length_text,
                                                **subs)  # fmt: skip
            if tweak:
                command += " " + project["tweak"]["flag"].format(v=project["tweak"]["values"][tweak - 1])
            got = Workload(
                key=f"{project['name']}/{v}/{length_text}/{gpus}/{tweak}", project=project["name"],
                workdir=self.root / project["name"], command=command, gpus=gpus, length=length,
                unit=project["unit"], unit_s=float(variant["unit_s"]), util=float(variant["util"]),
                mem_mb=float(variant["mem_mb"]),
            )  # fmt: skip
            self._cache[key] = got
        return got

    def _options(self, gpus: int) -> list[tuple[int, int, float, list[float], list[float]]]:
        got = self._by_gpus.get(gpus)
        if got is None:
            got = []
            for p, project in enumerate(self.projects):
                if self.runs_on(project, gpus):
                    lengths = sorted(float(n) for n in project["lengths"])
                    logs = [math.log(n) for n in lengths]
                    got += [(p, v, float(var["unit_s"]), lengths, logs) for v, var in enumerate(project["variants"])]
            if not got:
                raise TraceError(f"no project of the workload catalogue runs on {gpus} GPUs")
            self._by_gpus[gpus] = got
        return got

    def assign(
        self,
        job: TraceJob,
        seed: int,
        early_exit: float,
        *,
        recent: dict[int, deque[tuple[int, int, float, int]]] | None = None,
        recur: float = 0.5,
    ) -> Assignment:
        """The workload of one trace job (see the module's docstring). With ``recent`` (the last workloads per GPU
        count, updated here), a job resubmits a recent workload that fits its duration with probability ``recur``."""
        rng = random.Random(f"{seed}:{job.job_id}")
        gpus = max(1, job.gpus)
        early = job.status in ("failed", "cancelled") if job.status else rng.random() < early_exit
        planned = max(job.duration_s, 1.0) * (math.exp(rng.uniform(math.log(1.5), math.log(10.0))) if early else 1.0)
        near: list[tuple[int, int, float]] = []
        best: tuple[float, int, int, float] | None = None
        for p, v, unit_s, lengths, logs in self._options(gpus):
            want = math.log(planned * gpus**_SCALING / unit_s)
            i = bisect.bisect_left(logs, want)
            j = min((k for k in (i - 1, i) if 0 <= k < len(logs)), key=lambda k: abs(logs[k] - want))
            miss, length = abs(logs[j] - want), lengths[j]
            if miss <= _LOG2:
                near.append((p, v, length))
            if best is None or miss < best[0]:
                best = (miss, p, v, length)
        pool = recent.setdefault(gpus, deque(maxlen=64)) if recent is not None else None
        again = [r for r in pool if r[:3] in set(near)] if pool and rng.random() < recur else []
        if again:  # a resubmission: the same workload, sometimes with one hyper-parameter changed
            p, v, length, tweak = again[rng.randrange(len(again))]
            if rng.random() < 0.3:
                tweak = rng.randrange(len(self.projects[p]["tweak"]["values"]) + 1)
        else:
            if near:
                p, v, length = near[rng.randrange(len(near))]
            else:
                assert best is not None, "the catalogue has a project for every GPU count"
                _, p, v, length = best
            tweak = 0
        if pool is not None:
            pool.append((p, v, length, tweak))
        workload = self.workload(p, v, length, gpus, tweak)
        util = min(100.0, max(5.0, rng.gauss(workload.util, 5.0)))
        return Assignment(workload, early, "failed" if early else "completed", util, planned)


@cache
def _default() -> Catalogue:
    return Catalogue()


def attach(
    jobs: list[TraceJob],
    seed: int = 0,
    early_exit: float = 0.3,
    *,
    recur: float = 0.5,
    catalogue: Catalogue | None = None,
) -> list[Assignment]:
    """One assignment per job (same order; give jobs in submission order), reproducible for ``seed``."""
    cat = catalogue or _default()
    recent: dict[int, deque[tuple[int, int, float, int]]] = {}
    return [cat.assign(j, seed, early_exit, recent=recent, recur=recur) for j in jobs]
