"""Broker ACLs that keep jobs' inputs and SchedMate's results apart, derived from the topic contract.

Three principals: connectors may only write the jobs' input topics (``producer="connector"`` in
:mod:`schedmate.schemas`), the worker reads those and alone writes the result topics
(``scheduler.actions`` among them), scheduler adapters only read results. With these ACLs on a broker
that enforces them (Kafka with ``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``),
a job's credentials cannot forge an action; where no authorizer runs, sign the results instead
(``SCHEDMATE_SIGNING_KEY``, :mod:`schedmate.infra.signing`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

from schedmate.schemas import ALL_TOPICS, INTERNAL_TOPICS

__all__ = ["AclRule", "acl_plan", "render_commands"]


@dataclass(frozen=True)
class AclRule:
    """One ``kafka-acls --add`` invocation: allow ``principal`` ``operations`` on ``names`` of one resource type."""

    principal: str
    resource: Literal["topic", "group", "cluster"]
    names: tuple[str, ...]
    operations: tuple[str, ...]
    prefixed: bool = False

    def args(self) -> list[str]:
        """The arguments after ``kafka-acls --bootstrap-server ... [--command-config ...]``."""
        out = ["--add", "--allow-principal", self.principal]
        for op in self.operations:
            out += ["--operation", op]
        if self.resource == "cluster":
            out.append("--cluster")
        else:
            for name in self.names:
                out += [f"--{self.resource}", name]
        if self.prefixed:
            out += ["--resource-pattern-type", "prefixed"]
        return out


def _principal(name: str) -> str:
    return name if ":" in name else f"User:{name}"


def acl_plan(worker: str, connector: str, scheduler: str, app_id: str = "schedmate",
             scheduler_group: str = "scheduler") -> list[AclRule]:  # fmt: skip
    """The ACLs for the three principals (``User:`` is added to bare names)."""
    w, c, s = _principal(worker), _principal(connector), _principal(scheduler)
    inputs = tuple(t.name for t in ALL_TOPICS if t.producer == "connector")
    results = tuple(t.name for t in ALL_TOPICS if t.producer == "worker")
    internal = tuple(t.name for t in INTERNAL_TOPICS)
    return [
        AclRule(c, "topic", inputs, ("Write", "Describe")),
        AclRule(c, "cluster", (), ("IdempotentWrite",)),  # producer ids for idempotent producers, nothing more
        AclRule(w, "topic", inputs, ("Read", "Describe", "Create")),
        AclRule(w, "topic", results + internal, ("Read", "Write", "Describe", "Create")),
        AclRule(w, "group", (app_id,), ("Read", "Describe"), prefixed=True),
        AclRule(w, "cluster", (), ("Describe", "Create", "IdempotentWrite")),
        AclRule(s, "topic", results, ("Read", "Describe")),
        AclRule(s, "group", (scheduler_group,), ("Read", "Describe"), prefixed=True),
    ]


def render_commands(rules: list[AclRule], bootstrap: str, command_config: str | None = None,
                    tool: str = "kafka-acls.sh") -> str:  # fmt: skip
    """The rules as shell commands an operator can review and run."""
    head = [tool, "--bootstrap-server", bootstrap] + (["--command-config", command_config] if command_config else [])
    return "\n".join(shlex.join(head + r.args()) for r in rules)
