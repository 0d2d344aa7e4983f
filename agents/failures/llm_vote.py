"""The LLM's vote on a located failure: reads a bounded window around the root-cause line.

The rules locate the error and classify it first; the LLM (when configured) then votes on
the category from the lines around it. Its answer is schema-constrained and validated: the
evidence it cites must be a whole line of the window (or a 40+ character span of one), else it is discarded.
It confirms the rules (confidence up) or, only where the rules are unsure, decides. It never
chooses the recovery action beyond what :func:`recovery_action` allows for its category, never
names a node (the faulty node comes from the job's allocation), and its free text is not
published: a log can carry instructions aimed at it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from schedmate.agents.failures.actions import recovery_action
from schedmate.agents.failures.diagnosis import Diagnosis, diagnose_lines
from schedmate.agents.failures.knn import FailureKnn
from schedmate.agents.logtext.lines import clean_line
from schedmate.agents.ml.llm import LLMClient
from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent

__all__ = ["FailureVote", "cited_line", "diagnose_lines_llm"]

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


_MIN_SPAN = 40  # a cited part of a line must be at least this long (or the whole line)


def _norm(s: str) -> str:
    return " ".join(s.split())


def cited_line(cited: str, window: list[str]) -> int | None:
    """Index of the window line ``cited`` quotes: the whole line, or a span of at least 40 characters of it."""
    c = _norm(cited)
    if not c:
        return None
    for i, w in enumerate(window):
        line = _norm(w)
        if c == line or (len(c) >= _MIN_SPAN and c in line):
            return i
    return None


async def diagnose_lines_llm(
    lines: list[str],
    llm: LLMClient | None,
    radius: int = 5,
    knn: FailureKnn | None = None,
    allocation: Sequence[str] = (),
) -> Diagnosis:
    """Rules first (in a thread; ``knn`` votes where they cannot decide), then the LLM's validated vote."""
    d = await asyncio.to_thread(diagnose_lines, lines, None, knn, allocation)
    if llm is None or d.first_error_line is None:
        return d
    lo = max(0, d.first_error_line - 1 - radius)
    window = [clean_line(x)[:200] for x in lines[lo : d.first_error_line + radius]]
    user = "\n".join(window)
    vote = await llm.structured(_SYSTEM, user, FailureVote, max_tokens=120)
    if vote is None:
        d.path.append("llm:unavailable")
        return d
    at = cited_line(vote.evidence_line, window)
    if at is None:
        d.path.append("llm:rejected")  # cites no whole line (or long span) of the log around the located place
        return d
    cited = _norm(window[at])
    if vote.category == d.category:
        d.confidence = min(0.95, d.confidence + 0.1)
        d.path.append("llm")
    elif d.confidence < 0.5:
        d.category = vote.category
        d.infra_component = vote.infra_component if vote.category == "infrastructure" else None
        d.confidence = 0.5
        # The LLM's own words never reach the explanation (a log can steer them); the line it cites does.
        d.explanation = f"the LLM judged this {vote.category}, citing line {lo + at + 1}: {cited[:200]}"
        d.action = recovery_action(d.category, d.infra_component, d.faulty_node, d.confidence)
        d.path.append("llm")
    else:
        d.path.append("llm:outvoted")
    return d
