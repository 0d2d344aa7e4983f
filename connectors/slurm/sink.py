"""The Slurm sink: estimates order pending jobs, actions drain faulty nodes and requeue jobs — a scheduler adapter
written on :class:`~schedmate.connectors.subscriber.Subscriber`, and the worked example for other schedulers.

* ``jobs.estimates`` → shortest expected job first: a *pending* job's ``Nice`` is set from its p50 duration
  (``nice = min(max_nice, round(nice_per_decade · log10(p50 s)))``: a 1-minute job gets ~1,780, a day-long one
  ~4,940), bounded to ``[0, max_nice]``; running or finished jobs are never touched.
* ``scheduler.actions`` → only the allowlisted kinds, only for this cluster's jobs (``slurm-<id>``):
  ``drain_node_and_requeue`` drains the node (``scontrol update NodeName=… State=DRAIN Reason=…``) and requeues
  the job excluding it; ``requeue_excluding_node`` requeues excluding the node; ``requeue`` requeues;
  ``notify_user`` appends a record to ``<data>/slurm/notifications.jsonl``; ``none`` does nothing. A job
  already requeued ``max_requeues`` times is held (``requeuehold``) with a notification instead of requeued again.
  The node must belong to the job's allocation **as Slurm records it** — a job's output can never make the
  sink drain another node — else the action is refused and logged. Requeues hold the job first, set the
  exclusion, then release it, so it cannot start on the bad node in between.
* Every action is applied once (its id and the job's attempt are remembered in ``<data>/slurm/sink.json``; a
  redelivered action does nothing) and logged with its diagnosis id; ``dry_run`` only reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Self

from schedmate.connectors.exceptions import SlurmCommandError
from schedmate.connectors.slurm.commands import TERMINAL, Slurm
from schedmate.connectors.subscriber import Subscriber
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.settings import Settings
from schedmate.schemas import jobs_estimates, scheduler_actions
from schedmate.schemas.jobs_estimates import JobEstimate
from schedmate.schemas.scheduler_actions import SchedulerAction

__all__ = ["Applied", "SlurmSink"]

log = get_logger(__name__)
_ALLOWED: Final = frozenset({"drain_node_and_requeue", "requeue_excluding_node", "requeue", "notify_user", "none"})


@dataclass
class Applied:
    """What the sink did (or, dry, would do) about one event."""

    kind: str  # priority | action
    job_id: str
    what: str
    commands: list[list[str]] = field(default_factory=list)
    refused: str | None = None
    diagnosis_id: str | None = None


class SlurmSink(AsyncLifecycle):
    """``async with SlurmSink(settings, env=...) as sink: await sink.run()``."""

    def __init__(
        self,
        settings: Settings,
        env: dict[str, str] | None = None,
        *,
        prefix: str = "slurm-",
        dry_run: bool = False,
        order: bool = True,
        actions: bool = True,
        max_nice: int = 10_000,
        nice_per_decade: float = 1000.0,
        max_requeues: int = 3,
        group_id: str = "schedmate-slurm-sink",
        state_dir: Path | None = None,
    ) -> None:
        self.settings = settings
        self.slurm = Slurm(env)
        self.prefix = prefix
        self.dry_run = dry_run
        self.order = order
        self.actions = actions
        self.max_nice = max_nice
        self.nice_per_decade = nice_per_decade
        self.max_requeues = max_requeues  # a job requeued this often is held instead (no crash loop)
        self.group_id = group_id
        self.dir = state_dir or settings.data_dir / "slurm"
        self.log: list[Applied] = []  # the last 1,000 things done
        self._done: dict[str, Any] = {"actions": {}}
        self._sub: Subscriber | None = None
        self._stop = asyncio.Event()

    async def start(self) -> Self:
        """Subscribe to the topics this sink acts on (from the committed offsets of its group)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self._done = json.loads((self.dir / "sink.json").read_text())
        topics = [t.name for t, on in ((jobs_estimates.TOPIC, self.order), (scheduler_actions.TOPIC, self.actions))
                  if on]  # fmt: skip
        self._sub = await Subscriber(self.settings, topics, group_id=self.group_id, from_beginning=True).start()
        return self

    async def stop(self) -> None:
        """Leave the group."""
        self._stop.set()
        if self._sub is not None:
            await self._sub.stop()
            self._sub = None

    async def run(self) -> None:
        """Apply events until stopped."""
        assert self._sub is not None, "start() the sink first"
        async for spec, event in self._sub:
            try:
                if spec is jobs_estimates.TOPIC and isinstance(event, JobEstimate):
                    await self.apply_estimate(event)
                elif isinstance(event, SchedulerAction):
                    await self.apply_action(event)
            except SlurmCommandError as exc:  # Slurm down or refusing: say so, go on with the next event
                log.warning("slurm command failed", job_id=getattr(event, "job_id", None), error=str(exc))
            if self._stop.is_set():
                return

    # --- helpers ---------------------------------------------------------------------------------------
    def _slurm_id(self, job_id: str) -> str | None:
        rest = job_id[len(self.prefix) :] if job_id.startswith(self.prefix) else ""
        return rest if rest.isdigit() else None

    def _record(self, applied: Applied) -> Applied:
        self.log.append(applied)
        del self.log[:-1000]
        log.info("slurm sink", dry_run=self.dry_run, **{k: v for k, v in asdict(applied).items() if v})
        return applied

    async def _do(self, applied: Applied, *cmd: str) -> None:
        applied.commands.append(list(cmd))
        if not self.dry_run:
            await self.slurm.run(*cmd)

    def _save(self) -> None:
        actions = self._done["actions"]
        for old in list(actions)[: max(0, len(actions) - 10_000)]:
            del actions[old]
        tmp = self.dir / "sink.json.tmp"
        tmp.write_text(json.dumps(self._done))
        tmp.replace(self.dir / "sink.json")

    def nice_for(self, p50_s: float) -> int:
        """The Nice value of a pending job expected to run ``p50_s`` seconds (shorter: lower: sooner)."""
        return max(0, min(self.max_nice, round(self.nice_per_decade * math.log10(max(p50_s, 1.0)))))

    async def _notify(self, applied: Applied, action: SchedulerAction, job: dict[str, str], reason: str) -> None:
        record = {"ts": time.time(), "job_id": action.job_id, "user": job.get("UserId", "").split("(")[0],
                  "diagnosis_id": action.diagnosis_id, "reason": reason}  # fmt: skip
        applied.commands.append(["notify", json.dumps(record)])
        if not self.dry_run:
            with (self.dir / "notifications.jsonl").open("a") as fh:
                fh.write(json.dumps(record) + "\n")

    # --- estimates -----------------------------------------------------------------------------------------
    async def apply_estimate(self, est: JobEstimate) -> Applied | None:
        """Order a pending job by its expected duration."""
        sid = self._slurm_id(est.job_id)
        if sid is None or est.duration_p50_s is None:
            return None
        job = await self.slurm.show_job(sid)
        if job.get("JobState") != "PENDING":
            return self._record(Applied("priority", est.job_id, f"left alone ({job.get('JobState', 'unknown')})"))
        nice = self.nice_for(est.duration_p50_s)
        applied = Applied("priority", est.job_id, f"Nice={nice} for p50 {est.duration_p50_s:.0f} s")
        await self._do(applied, "scontrol", "update", f"JobId={sid}", f"Nice={nice}")
        return self._record(applied)

    # --- actions -----------------------------------------------------------------------------------------
    async def apply_action(self, action: SchedulerAction) -> Applied | None:
        """Apply one allowlisted action (once)."""
        sid = self._slurm_id(action.job_id)
        if sid is None:
            return None  # another cluster's job
        applied = Applied("action", action.job_id, action.action, diagnosis_id=action.diagnosis_id)
        if action.action not in _ALLOWED:  # the schema allows no other; kept as a second lock
            applied.refused = "not an allowlisted action"
            return self._record(applied)
        if action.action_id in self._done["actions"]:
            applied.refused = "already applied"
            return self._record(applied)
        job = await self.slurm.show_job(sid)
        if not job:
            applied.refused = "Slurm no longer knows the job"
            return self._record(applied)
        allocation = await self.slurm.hostnames(job.get("NodeList", ""))
        node = action.node
        if action.action in ("drain_node_and_requeue", "requeue_excluding_node") and (
            not node or node not in allocation
        ):
            applied.refused = f"node {node!r} is not in the job's allocation {allocation} as Slurm records it"
            return self._record(applied)
        reason = f"schedmate diagnosis {action.diagnosis_id or '?'}: {action.reason}"[:120].replace('"', "'")
        if action.action == "drain_node_and_requeue" and node:
            await self._do(applied, "scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")
        if action.action in ("drain_node_and_requeue", "requeue_excluding_node", "requeue"):
            restarts = int(job.get("Restarts", "0")) if job.get("Restarts", "0").isdigit() else 0
            state = job.get("JobState", "")
            if restarts >= self.max_requeues and (state in TERMINAL or state in ("RUNNING", "PENDING")):
                applied.what = f"hold (requeued {restarts} times already; was {action.action})"  # no crash loop
                await self._do(applied, "scontrol", "hold" if state == "PENDING" else "requeuehold", sid)
                await self._notify(applied, action, job, f"held after {restarts} requeues: {action.reason}")
            elif state not in TERMINAL and state != "RUNNING":
                applied.refused = f"the job is {state}: nothing to requeue"
            else:
                await self._do(applied, "scontrol", "requeuehold", sid)
                if node and action.action != "requeue":
                    excluded = sorted({*(await self.slurm.hostnames(job.get("ExcNodeList", ""))), node})
                    await self._do(applied, "scontrol", "update", f"JobId={sid}", f"ExcNodeList={','.join(excluded)}")
                await self._do(applied, "scontrol", "release", sid)
        elif action.action == "notify_user":
            await self._notify(applied, action, job, action.reason)
        if not self.dry_run:
            self._done["actions"][action.action_id] = {"job": action.job_id, "ts": time.time()}
            self._save()
        return self._record(applied)
