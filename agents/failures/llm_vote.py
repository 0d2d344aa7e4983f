"""The LLM's vote on a located failure: reads a bounded window around the root-cause line.

The rules locate the error and classify it first; the LLM (when configured) then votes on
the category from the lines around it. Its answer is schema-constrained and validated: the
evidence line it cites must be one of the window's lines, otherwise the vote is discarded.
It confirms the rules (confidence up) or, only where the rules are unsure, decides. It never
chooses the recovery action beyond what :func:`recovery_action` allows for its category.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from schedmate.agents.failures.actions import recovery_action
from schedmate.agents.failures.diagnosis import Diagnosis, diagnose_lines
from schedmate.agents.failures.knn import FailureKnn
from schedmate.agents.logtext.lines import clean_line
from schedmate.agents.ml.llm import LLMClient
from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent

__all__ = ["FailureVote", "diagnose_lines_llm"]

_SYSTEM = (
    "You are an SRE for a GPU training cluster. Given log lines around the first error of a failed job, "
    "answer in JSON: category is infrastructure (hardware, network, storage, node faults), framework (a bug "
    "inside a library), user_script (the job's own code, configuration, environment or out-of-memory) or other "
    "(unknown, timeouts, killed without evidence); infra_component only for infrastructure; evidence_line is "
    "the single log line (copied exactly) that shows the cause; explanation is one short sentence."
)


class FailureVote(BaseModel):
    """The LLM's structured answer."""

    model_config = ConfigDict(extra="forbid")
    category: FailureCategory
    infra_component: InfraComponent | None = None
    evidence_line: str = Field(max_length=300, pattern=r"^[^\n]*$")
    explanation: str = Field(default="", max_length=300, pattern=r"^[^\n]*$")


def _norm(s: str) -> str:
    return " ".join(s.split())


async def diagnose_lines_llm(
    lines: list[str], llm: LLMClient | None, radius: int = 5, knn: FailureKnn | None = None
) -> Diagnosis:
    """Rules first (in a thread; ``knn`` votes where they cannot decide), then the LLM's validated vote."""
    d = await asyncio.to_thread(diagnose_lines, lines, None, knn)
    if llm is None or d.first_error_line is None:
        return d
    lo = max(0, d.first_error_line - 1 - radius)
    window = [clean_line(x)[:200] for x in lines[lo : d.first_error_line + radius]]
    user = "\n".join(window)
    vote = await llm.structured(_SYSTEM, user, FailureVote, max_tokens=120)
    if vote is None:
        d.path.append("llm:unavailable")
        return d
    cited = _norm(vote.evidence_line)
    if not cited or not any(cited in _norm(w) for w in window):
        d.path.append("llm:rejected")  # cites a line that is not in the log
        return d
    if vote.category == d.category:
        d.confidence = min(0.95, d.confidence + 0.1)
        d.path.append("llm")
    elif d.confidence < 0.5:
        d.category = vote.category
        d.infra_component = vote.infra_component if vote.category == "infrastructure" else None
        d.confidence = 0.5
        d.explanation = f"{vote.explanation} (LLM; evidence: {cited[:200]})"
        d.action = recovery_action(d.category, d.infra_component, d.faulty_node, d.confidence)
        d.path.append("llm")
    else:
        d.path.append("llm:outvoted")
    return d
