"""Slurm client commands from asyncio, with timeouts (a controller that is down makes them hang ~9 s), parsed.

Only Slurm 22.05 features that exist everywhere are used: ``squeue --json`` (all jobs, finished ones
within MinJobAge), ``scontrol show job -o``, ``scontrol show hostnames``, ``scontrol update``,
``scontrol requeue|hold|release``; the job-completion log (``jobcomp/filetxt``) for jobs that ended
while nobody watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from schedmate.connectors.exceptions import SlurmCommandError

__all__ = ["Slurm", "expand_output_path", "parse_kv"]

_KV: Final = re.compile(r"(\w+)=(\S*)")
TERMINAL: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                             "PREEMPTED", "BOOT_FAIL", "DEADLINE"})  # fmt: skip
RUNNING: Final = frozenset({"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT"})


def parse_kv(line: str) -> dict[str, str]:
    """``Key=Value Key2=Value2`` (``scontrol show job -o``, the jobcomp log) as a dict."""
    return dict(_KV.findall(line))


def expand_output_path(pattern: str, job: Mapping[str, Any]) -> str:
    """A job's StdOut/StdErr pattern with Slurm's replacement symbols filled (%j %x %u %N %A %a %%)."""
    if not pattern:
        return ""
    subs = {
        "j": str(job.get("job_id", "")), "x": str(job.get("name", "")), "u": str(job.get("user_name", "")),
        "N": str(job.get("batch_host", "") or ""), "A": str(job.get("array_job_id") or job.get("job_id", "")),
        "a": str(job.get("array_task_id") or ""), "%": "%",
    }  # fmt: skip
    out = re.sub(r"%(\d*)([jxuNAa%])", lambda m: subs[m.group(2)].zfill(int(m.group(1) or 0)), pattern)
    workdir = str(job.get("current_working_directory", "") or "")
    return str(Path(workdir) / out) if workdir and not out.startswith("/") else out


class Slurm:
    """The client commands of one cluster (``env`` carries SLURM_CONF)."""

    def __init__(self, env: Mapping[str, str] | None = None, timeout_s: float = 12.0) -> None:
        self.env = dict(env) if env is not None else None
        self.timeout_s = timeout_s

    async def run(self, *args: str, check: bool = True) -> str:
        """Run one command; its stdout, or :class:`SlurmCommandError` (not installed, timed out, failed)."""
        try:
            proc = await asyncio.create_subprocess_exec(*args, env=self.env, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.PIPE)  # fmt: skip
        except FileNotFoundError as exc:
            raise SlurmCommandError(f"`{args[0]}` is not installed: this connector needs Slurm's client "
                                    "commands on the PATH") from exc  # fmt: skip
        try:
            out, err = await asyncio.wait_for(proc.communicate(), self.timeout_s)
        except TimeoutError as exc:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise SlurmCommandError(f"`{' '.join(args)}` did not answer within {self.timeout_s:.0f} s "
                                    "(is slurmctld up?)") from exc  # fmt: skip
        if check and proc.returncode != 0:
            raise SlurmCommandError(f"`{' '.join(args)}` failed: {err.decode(errors='replace').strip()[-300:]}")
        return out.decode(errors="replace")

    async def jobs(self) -> list[dict[str, Any]]:
        """Every job the controller knows (``squeue --json``)."""
        raw = await self.run("squeue", "--json")
        try:
            return list(json.loads(raw).get("jobs", []))
        except ValueError as exc:
            raise SlurmCommandError(f"squeue --json printed no JSON: {raw[:200]!r}") from exc

    async def hostnames(self, nodelist: str) -> list[str]:
        """``node[1-3]`` → ``["node1", "node2", "node3"]``."""
        if not nodelist or nodelist == "(null)":
            return []
        return (await self.run("scontrol", "show", "hostnames", nodelist)).split()

    async def show_job(self, job_id: int | str) -> dict[str, str]:
        """``scontrol show job -o`` of one job (empty when the controller forgot it)."""
        out = await self.run("scontrol", "show", "job", "-o", str(job_id), check=False)
        return parse_kv(out) if "JobId=" in out else {}
