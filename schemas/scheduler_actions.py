"""scheduler.actions: a recovery action from a fixed allowlist, for scheduler adapters to apply."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, new_id, now

__all__ = ["TOPIC", "ActionKind", "SchedulerAction"]

ActionKind = Literal["requeue_excluding_node", "drain_node_and_requeue", "requeue", "notify_user", "none"]


class SchedulerAction(Event):
    """What a scheduler should do about a job, and the diagnosis that justifies it."""

    action_id: str = Field(default_factory=new_id)
    job_id: str = Field(min_length=1, max_length=256)
    action: ActionKind
    node: str | None = None
    diagnosis_id: str | None = None
    reason: str = ""
    ts: float = Field(default_factory=now)


TOPIC = TopicSpec("scheduler.actions", SchedulerAction, "job_id", description=SchedulerAction.__doc__ or "")
