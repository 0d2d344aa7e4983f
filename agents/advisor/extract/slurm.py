"""What a Slurm batch job is given: the ``#SBATCH`` lines of its script and the options of ``sbatch`` itself.

A job submitted as ``sbatch job.sh`` runs ``job.sh`` on the nodes Slurm allocates; ``srun`` inside it starts one task
per allocated task slot, and every task sees the GPUs of its node (``CUDA_VISIBLE_DEVICES``). Only the options that
size the allocation are read; nothing is submitted or run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Final

__all__ = ["SBATCH_VALUE", "Allocation", "allocation"]

# sbatch options that take a value as the next word (`-N 2`, `--gres gpu:4`); `--opt=value` needs no list
SBATCH_VALUE: Final = re.compile(
    r"-[NnctpJoeAqwCGadDFmi]|--(?:nodes|ntasks|ntasks-per-node|cpus-per-task|time|partition|job-name|output|error|"
    r"account|qos|nodelist|constraint|gpus|gpus-per-node|gpus-per-task|gres|array|dependency|chdir|mem|"
    r"mem-per-cpu|mem-per-gpu|exclude|reservation|mail-type|mail-user|signal|begin|comment|export|licenses)"
)
_DIRECTIVE: Final = re.compile(r"^#SBATCH\s+(.*)$")
_COUNT: Final = re.compile(r"\d{1,6}")


@dataclass(frozen=True)
class Allocation:
    """The part of a Slurm allocation that sizes the job (None where the options do not say)."""

    nodes: int | None = None
    tasks: int | None = None  # tasks in all (`--ntasks`, or nodes x `--ntasks-per-node`)
    gpus_per_node: int | None = None

    def environment(self) -> dict[str, str]:
        """The variables Slurm sets in the job's environment that these counts determine."""
        env: dict[str, str] = {}
        nodes = self.nodes or 1
        env["SLURM_NNODES"] = env["SLURM_JOB_NUM_NODES"] = str(nodes)
        if self.tasks is not None:
            env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(self.tasks)
            if self.tasks % nodes == 0:
                env["SLURM_NTASKS_PER_NODE"] = str(self.tasks // nodes)
        if self.gpus_per_node is not None:
            env["SLURM_GPUS_ON_NODE"] = env["SLURM_GPUS_PER_NODE"] = str(self.gpus_per_node)
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(self.gpus_per_node))
        return env


def _options(words: list[str]) -> dict[str, str]:
    """``--name=value`` / ``--name value`` / ``-N value`` / ``-N2`` words as a dict (the last one wins)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            name, eq, value = w.partition("=")
            if not eq and i + 1 < len(words) and SBATCH_VALUE.fullmatch(name):
                value, i = words[i + 1], i + 1
            out[name] = value
        elif w.startswith("-") and len(w) >= 2:
            name, value = w[:2], w[2:]
            if not value and i + 1 < len(words) and SBATCH_VALUE.fullmatch(name):
                value, i = words[i + 1], i + 1
            out[name] = value.lstrip("=")
        i += 1
    return out


def _count(value: str | None) -> int | None:
    """A count of nodes, tasks or GPUs (``2``, ``2-4`` takes the least), None for anything else."""
    if value is None:
        return None
    m = _COUNT.match(value.strip())
    return int(m[0]) if m and int(m[0]) > 0 else None


def _gpus(value: str | None) -> int | None:
    """GPUs in a ``gpu[:type]:N`` request (``--gres=gpu:a100:4``, ``--gpus-per-node=4``); a ``gres`` list may name
    other resources too."""
    if value is None:
        return None
    for part in value.split(","):
        bits = part.strip().split(":")
        if bits[-1].isdigit() and (len(bits) == 1 or bits[0] in ("gpu", "gpus")):
            return _count(bits[-1])
        if bits[0] == "gpu" and len(bits) <= 2 and not bits[-1].isdigit():
            return 1  # `--gres=gpu` / `--gres=gpu:a100`: one per node
    return None


def allocation(script: str, options: list[str]) -> Allocation:
    """The allocation of ``sbatch OPTIONS script``: the script's ``#SBATCH`` lines (read up to its first command, as
    Slurm does), overridden by the command line's options."""
    words: list[str] = []
    for line in script.splitlines()[:400]:
        s = line.strip()
        if not s or (s.startswith("#") and not s.startswith("#SBATCH")):
            continue
        m = _DIRECTIVE.match(s)
        if not m:
            break  # the first command ends the directives
        try:
            words += shlex.split(m[1], comments=True)
        except ValueError:
            words += m[1].split("#", 1)[0].split()
    opts = {**_options(words), **_options(options)}
    nodes = _count(opts.get("--nodes", opts.get("-N")))
    tasks = _count(opts.get("--ntasks", opts.get("-n")))
    per_node_tasks = _count(opts.get("--ntasks-per-node"))
    if tasks is None and per_node_tasks is not None:
        tasks = per_node_tasks * (nodes or 1)
    gpus = _gpus(opts.get("--gpus-per-node")) or _gpus(opts.get("--gres"))
    total = _count(opts.get("--gpus", opts.get("-G")))
    spread = nodes or 1
    if gpus is None and total is not None and total % spread == 0:
        gpus = total // spread
    if gpus is None and (per_task := _count(opts.get("--gpus-per-task"))) is not None and tasks is not None:
        gpus = per_task * tasks // spread if tasks % spread == 0 else None
    return Allocation(nodes, tasks, gpus)
