"""The Slurm source: submissions, starts and ends of a real Slurm cluster's jobs, and their output files, to Kafka.

Every ``poll_s`` it reads ``squeue --json`` (all jobs the controller knows, finished ones within
MinJobAge) and publishes, once each: ``jobs.submitted`` (user, name, batch script as the command, working
directory, GPUs), ``jobs.events`` *started* with the node list Slurm allocated (``node`` = the batch host)
and *finished* with status and exit code — per attempt, so a requeued job starts again. While a job runs,
its StdOut/StdErr files are tailed into ``logs.chunks`` with the log tailer (stamped with the batch host);
before a *finished* event the files are read to their end, so a diagnosis sees the whole log.

What it published is kept in ``<data>/slurm/source.json`` (written after each event is stored) and the
tailer's checkpoints beside it: restarted, it neither repeats nor skips an event or a line. Jobs that
ended while it was down and that the controller already forgot are read from the job-completion log
(``jobcomp/filetxt``). A controller outage is logged once and polled through; logs keep flowing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Self

from pydantic import ValidationError

from schedmate.connectors.exceptions import SlurmCommandError
from schedmate.connectors.publisher import Publisher
from schedmate.connectors.repository import find_repository
from schedmate.connectors.slurm.commands import RUNNING, TERMINAL, Slurm, expand_output_path, parse_kv
from schedmate.connectors.tailer import FileFollower
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.settings import Settings
from schedmate.schemas import jobs_events, jobs_submitted
from schedmate.schemas.jobs_events import JobEvent, JobStatus
from schedmate.schemas.jobs_submitted import JobSubmitted

__all__ = ["SlurmSource", "job_key"]

log = get_logger(__name__)
_GPUS = re.compile(r"gres[/:]gpu(?::[\w.-]+)?:(\d+)")
_KEEP_FINISHED = 10_000


def job_key(prefix: str, slurm_id: int | str) -> str:
    """SchedMate's job id of a Slurm job."""
    return f"{prefix}{slurm_id}"


def _number(v: Any) -> int:
    if isinstance(v, dict):  # 23.x: {"set": true, "number": N}
        v = v.get("number", 0)
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def _gpus(job: dict[str, Any]) -> int:
    per_job = _GPUS.search(str(job.get("tres_per_job") or ""))
    if per_job:
        return int(per_job.group(1))
    per_node = _GPUS.search(str(job.get("tres_per_node") or ""))
    return int(per_node.group(1)) * max(1, _number(job.get("node_count"))) if per_node else 0


def _exit_code(raw: Any) -> int:
    """squeue's exit_code is the raw wait status; jobcomp's is ``code:signal``."""
    if isinstance(raw, str) and ":" in raw:
        code, sig = (int(x) if x.isdigit() else 0 for x in raw.split(":", 1))
        return 128 + sig if sig else code
    status = _number(raw)
    return 128 + (status & 0x7F) if status & 0x7F else status >> 8


def _status(state: str) -> JobStatus:
    return "completed" if state == "COMPLETED" else "cancelled" if state == "CANCELLED" else "failed"


class SlurmSource(AsyncLifecycle):
    """``async with SlurmSource(settings, env={"SLURM_CONF": ...}) as src: await src.run()``."""

    def __init__(
        self,
        settings: Settings,
        env: dict[str, str] | None = None,
        *,
        poll_s: float = 2.0,
        prefix: str = "slurm-",
        cluster: str = "slurm",
        state_dir: Path | None = None,
        jobcomp: Path | None = None,
    ) -> None:
        self.settings = settings
        self.slurm = Slurm(env)
        self.poll_s = poll_s
        self.prefix = prefix
        self.cluster = cluster
        self.dir = state_dir or settings.data_dir / "slurm"
        self.jobcomp = jobcomp
        self._state: dict[str, Any] = {"jobs": {}, "jobcomp_offset": 0}
        self._followers: dict[str, list[FileFollower]] = {}
        self._pub: Publisher | None = None
        self._stop = asyncio.Event()
        self._down_since: float | None = None
        self.published = 0

    # --- lifecycle ------------------------------------------------------------------------------------
    async def start(self) -> Self:
        """Load what was published before, connect, find the job-completion log."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self._state = json.loads((self.dir / "source.json").read_text())
        self._pub = await Publisher(self.settings).start()
        if self.jobcomp is None:
            with contextlib.suppress(SlurmCommandError):
                conf = await self.slurm.run("scontrol", "show", "config")
                m = re.search(r"^JobCompLoc\s*=\s*(\S+)", conf, re.M)
                if m and "filetxt" in conf:
                    self.jobcomp = Path(m.group(1))
        return self

    async def stop(self) -> None:
        """Flush the logs read so far and close."""
        self._stop.set()
        for followers in self._followers.values():
            for f in followers:
                f.close()
        if self._pub is not None:
            await self._pub.stop()
            self._pub = None

    def request_stop(self) -> None:
        """Make :meth:`run` return after the current poll."""
        self._stop.set()

    async def run(self, once: bool = False) -> None:
        """Poll until stopped (``once``: one poll)."""
        while not self._stop.is_set():
            await self.poll()
            if once:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.poll_s)

    # --- one poll ----------------------------------------------------------------------------------------
    def _save(self) -> None:
        jobs = self._state["jobs"]
        if len(jobs) > _KEEP_FINISHED:
            done = [k for k, v in jobs.items() if v.get("finished") and k not in self._seen]
            for k in done[: len(jobs) - _KEEP_FINISHED]:
                del jobs[k]
        tmp = self.dir / "source.json.tmp"
        tmp.write_text(json.dumps(self._state))
        with open(tmp) as fh:  # noqa: PTH123
            os.fsync(fh.fileno())
        tmp.replace(self.dir / "source.json")

    async def _publish(self, spec: Any, event: Any) -> None:
        assert self._pub is not None
        await self._pub.publish(spec, event)
        self.published += 1
        self._save()

    async def poll(self) -> None:
        """Read the controller once, publish what changed, move the logs on."""
        self._seen: set[str] = set()
        try:
            jobs = await self.slurm.jobs()
        except SlurmCommandError as exc:
            if self._down_since is None:
                self._down_since = time.monotonic()
                log.warning("slurm controller unreachable; logs keep flowing, retrying", error=str(exc))
            await self._tail_all()
            return
        if self._down_since is not None:
            log.info("slurm controller back", after_s=round(time.monotonic() - self._down_since, 1))
            self._down_since = None
        for job in sorted(jobs, key=lambda j: _number(j.get("job_id"))):
            try:
                await self._job(job)
            except (ValidationError, ValueError, TypeError, KeyError) as exc:  # one odd job never stops the others
                log.warning("skipping a Slurm job this poll", slurm_job=str(job.get("job_id")), error=str(exc)[:300])
        await self._ended_unwatched()
        await self._tail_all()

    def _entry(self, sid: str) -> dict[str, Any]:
        entry: dict[str, Any] = self._state["jobs"].setdefault(
            sid, {"submitted": False, "attempt": 0, "started": False, "finished": False}
        )
        return entry

    async def _job(self, job: dict[str, Any]) -> None:
        sid = str(job.get("job_id"))
        self._seen.add(sid)
        key = job_key(self.prefix, sid)
        st = self._entry(sid)
        state = str(job.get("job_state", ""))
        attempt = _number(job.get("restart_cnt"))
        if not st["submitted"]:
            await self._submitted(key, job)
            st["submitted"] = True
            self._save()
        if attempt > st["attempt"]:  # requeued: the previous run ended (a failure or a requeue action)
            if st["started"] and not st["finished"]:
                await self._finish(key, st, "failed", None)
            st.update(attempt=attempt, started=False, finished=False)
            self._save()
        if (state in RUNNING or state in TERMINAL) and not st["started"] and job.get("nodes"):
            nodes = await self.slurm.hostnames(str(job.get("nodes")))
            host = str(job.get("batch_host") or (nodes[0] if nodes else ""))
            st.update(started=True, node=host, nodes=nodes, stdout=expand_output_path(
                str(job.get("standard_output") or ""), job), stderr=expand_output_path(
                str(job.get("standard_error") or ""), job))  # fmt: skip
            await self._publish(jobs_events.TOPIC, JobEvent(
                event_id=f"{key}:{attempt}:started", job_id=key, kind="started", node=host or None, nodes=nodes,
                ts=float(_number(job.get("start_time")) or time.time()),
            ))  # fmt: skip
        if st["started"] and not st["finished"]:
            self._follow(key, st)
        if state in TERMINAL and st["started"] and not st["finished"]:
            await self._finish(key, st, _status(state), _exit_code(job.get("exit_code")),
                               ts=float(_number(job.get("end_time")) or time.time()))  # fmt: skip

    async def _submitted(self, key: str, job: dict[str, Any]) -> None:
        workdir = str(job.get("current_working_directory") or "")
        script = str(job.get("command") or "")
        if workdir and script.startswith(workdir.rstrip("/") + "/"):
            script = script[len(workdir.rstrip("/")) + 1 :]
        # the git repository around the job's folder (a job run from `repo/examples/x/` imports `repo`'s package):
        # the Advisor may read up to its root; looked up in a thread, the file system may be a slow network mount
        repo = await asyncio.to_thread(find_repository, workdir) if workdir and "\x00" not in workdir else None
        await self._publish(jobs_submitted.TOPIC, JobSubmitted(
            event_id=f"{key}:submitted", job_id=key, user=str(job.get("user_name") or ""),
            name=str(job.get("name") or ""), command=[script] if script else [], workdir=workdir,
            repo_root=str(repo.root) if repo else "", git_commit=repo.commit if repo else None,
            git_branch=repo.branch if repo else None, num_gpus=_gpus(job), cluster=self.cluster,
            submitted_at=float(_number(job.get("submit_time")) or time.time()),
        ))  # fmt: skip

    def _follow(self, key: str, st: dict[str, Any]) -> None:
        if key in self._followers:
            return
        assert self._pub is not None
        paths = [p for p in dict.fromkeys([st.get("stdout") or "", st.get("stderr") or ""]) if p]
        self._followers[key] = [FileFollower(p, key, self._pub, self.dir / "tail", node=st.get("node") or None)
                                for p in paths]  # fmt: skip

    async def _tail_all(self) -> None:
        for followers in list(self._followers.values()):
            for f in followers:
                with contextlib.suppress(OSError):
                    await f.poll()

    async def _finish(
        self, key: str, st: dict[str, Any], status: JobStatus, code: int | None, ts: float | None = None
    ) -> None:
        for f in self._followers.pop(key, []):  # the whole log first, then the end
            with contextlib.suppress(OSError):
                await f.poll(final=True)
            f.close()
        await self._publish(jobs_events.TOPIC, JobEvent(
            event_id=f"{key}:{st['attempt']}:finished", job_id=key, kind="finished", status=status, exit_code=code,
            node=st.get("node") or None, nodes=st.get("nodes") or [], ts=ts or time.time(),
        ))  # fmt: skip
        st["finished"] = True
        self._save()

    async def _ended_unwatched(self) -> None:
        """Jobs the controller forgot before we saw them end: the job-completion log says how they ended."""
        records = self._read_jobcomp()
        for sid, rec in records.items():
            if sid in self._seen:
                continue
            key = job_key(self.prefix, sid)
            st = self._entry(sid)
            if st["finished"]:
                continue
            if not st["submitted"]:
                job = {"job_id": sid, "user_name": rec.get("UserId", "").split("(")[0], "name": rec.get("Name", ""),
                       "current_working_directory": rec.get("WorkDir", ""), "command": ""}  # fmt: skip
                await self._submitted(key, job)
                st["submitted"] = True
            if not st["started"]:
                nodes = await self.slurm.hostnames(rec.get("NodeList", ""))
                workdir = rec.get("WorkDir", "")
                st.update(started=True, node=nodes[0] if nodes else "", nodes=nodes,
                          stdout=str(Path(workdir) / f"slurm-{sid}.out") if workdir else "")  # fmt: skip
                started = JobEvent(event_id=f"{key}:{st['attempt']}:started", job_id=key, kind="started",
                                   node=st["node"] or None, nodes=nodes)  # fmt: skip
                await self._publish(jobs_events.TOPIC, started)
                self._follow(key, st)
            await self._finish(key, st, _status(rec.get("JobState", "")), _exit_code(rec.get("ExitCode", "0:0")))

    def _read_jobcomp(self) -> dict[str, dict[str, str]]:
        if self.jobcomp is None:
            return {}
        try:
            with open(self.jobcomp, "rb") as fh:  # noqa: PTH123
                fh.seek(self._state.get("jobcomp_offset", 0))
                data = fh.read(16 << 20)
        except OSError:
            return {}
        end = data.rfind(b"\n") + 1
        self._state["jobcomp_offset"] = self._state.get("jobcomp_offset", 0) + end
        out: dict[str, dict[str, str]] = {}
        for line in data[:end].decode(errors="replace").splitlines():
            rec = parse_kv(line)
            if rec.get("JobId") and rec.get("JobState") in TERMINAL:
                out[rec["JobId"]] = rec
        return out
