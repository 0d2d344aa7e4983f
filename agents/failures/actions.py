"""Recovery actions: a fixed allowlist, chosen from a diagnosis only with enough evidence."""

from __future__ import annotations

from typing import Final

from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent
from schedmate.schemas.scheduler_actions import ActionKind

__all__ = ["NODE_ACTIONS", "recovery_action"]

# Actions that name a node (exclude it, or drain it).
NODE_ACTIONS: Final[frozenset[ActionKind]] = frozenset({"requeue_excluding_node", "drain_node_and_requeue"})

_ACTIONS: Final[dict[InfraComponent, ActionKind]] = {
    "gpu": "drain_node_and_requeue",
    "nvlink": "drain_node_and_requeue",
    "node": "drain_node_and_requeue",
    "network": "requeue_excluding_node",
    "storage": "requeue",
    "other": "requeue",
}


def recovery_action(
    category: FailureCategory,
    component: InfraComponent | None,
    node: str | None,
    confidence: float,
    corroborated: bool = False,
) -> ActionKind:
    """An action from the fixed allowlist, only with enough evidence.

    ``node`` must be a node of the job's allocation. Draining it takes ``corroborated``
    evidence beyond the job's own output (the node's GPU samples, or other jobs failing the
    same way there); without it the job is only requeued.
    """
    if category == "infrastructure" and confidence >= 0.6:
        action = _ACTIONS.get(component or "other", "requeue")
        if action in NODE_ACTIONS and node is None:
            return "requeue"  # cannot exclude or drain an unnamed node
        if action == "drain_node_and_requeue" and not corroborated:
            return "requeue"
        return action
    if category in ("user_script", "framework") and confidence >= 0.5:
        return "notify_user"
    return "none"
