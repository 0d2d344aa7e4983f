"""The Failure Handler without Kafka: locate a failed job's root-cause line, classify it, pick an action.

Locating is :class:`~schedmate.agents.failures.locator.Locator`'s job (O(log N) chunk
classifications to find where training stopped, then error blocks after it). The root cause
is the block with the strongest evidence — hardware signatures outrank a killed rank, which
outranks ordinary errors, which outrank symptoms (peer gone, timeouts, launcher summaries) —
the earliest among equals.

Classifying: a known hardware signature decides; otherwise the error itself decides through
:mod:`~schedmate.agents.failures.taxonomy` (what the system reported, where the exception was
raised — the job's files or a library — and what kind of error it is), with a known signature
winning where the taxonomy says no more than ``other``; where neither can, an embedding vote over
labelled failure exemplars may.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from schedmate.agents.failures.actions import recovery_action
from schedmate.agents.failures.knn import FailureKnn
from schedmate.agents.failures.locator import ErrorBlock, Locator
from schedmate.agents.failures.signatures import HARDWARE, KILL, SYMPTOM
from schedmate.agents.failures.taxonomy import Verdict, classify_error, parse_exception_line
from schedmate.agents.failures.tracebacks import strip_prefix
from schedmate.agents.logtext.lines import split_physical_lines
from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent
from schedmate.schemas.scheduler_actions import ActionKind

__all__ = ["Diagnosis", "diagnose_file", "diagnose_lines", "resolve_node"]

_MARGIN: Final = 60  # lines before the last progress line where hardware evidence still counts
_NODE_RX: Final = re.compile(r"^\s*(?:\[\w+\]\s*)?([A-Za-z][\w.-]*?):\d+:\d+ \[\d+\]")  # NCCL "host:pid:tid [dev]"
_RANK_RX: Final = re.compile(r"\[rank(\d+)\]|\bRank (\d+)\b|local_rank: (\d+)|\brank (\d+)\b", re.IGNORECASE)
_PCI_RX: Final = re.compile(r"PCI:([0-9a-fA-F:.]+)")
_HOST_RX: Final = re.compile(
    r"(?:on host|hostname|\bhost\s*:|\bnode[= :]+|JOB \d+ ON)\s*([A-Za-z][\w.-]+)", re.IGNORECASE
)


@dataclass
class Diagnosis:
    """What `schedmate diagnose` prints (and jobs.failures carries)."""

    first_error_line: int | None
    category: FailureCategory = "other"
    infra_component: InfraComponent | None = None
    faulty_node: str | None = None  # a node of the job's allocation, never one only its log names
    confidence: float = 0.0
    action: ActionKind = "none"
    explanation: str = ""
    evidence: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    classifier_calls: int = 0
    log_node: str | None = None  # the node (or GPU, rank) the log text names near the root cause: unverified

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON contract."""
        return {
            "first_error_line": self.first_error_line,
            "category": self.category,
            "infra_component": self.infra_component,
            "faulty_node": self.faulty_node,
            "log_node": self.log_node,
            "confidence": round(self.confidence, 3),
            "action": self.action,
            "explanation": self.explanation,
            "evidence": self.evidence,
            "path": self.path,
        }


def _log_node(lines: list[str], block: ErrorBlock) -> str | None:
    """The node (or GPU, or rank) the root block names, else the lines right after or just before it.

    What a job prints is untrusted: this is a hint, used only where it names a node of the job's
    allocation (:func:`resolve_node`).
    """
    after = range(block.start, min(len(lines), max(block.end + 1, block.start + 40)))
    before = range(block.start - 1, max(-1, block.start - 9), -1)
    for window in (after, before):
        for k in window:
            m = _NODE_RX.match(strip_prefix(lines[k]))
            if m:
                return m.group(1)
            m2 = _HOST_RX.search(lines[k])
            if m2:
                return m2.group(1)
    for k in after:
        m3 = _PCI_RX.search(lines[k])
        if m3:
            return f"gpu PCI {m3.group(1)}"
        m4 = _RANK_RX.search(lines[k])
        if m4:
            return f"rank {next(g for g in m4.groups() if g is not None)}"
    return None


def resolve_node(log_node: str | None, allocation: Sequence[str]) -> str | None:
    """The faulty node: the log's node if it is one of the job's allocation, else the allocation's only node.

    A node the log names outside the allocation is evidence of nothing (a job can print any host
    name); with several nodes and no matching name the node stays unknown.
    """
    nodes = [n for n in dict.fromkeys(allocation) if n]
    if log_node is not None and log_node in nodes:
        return log_node
    return nodes[0] if len(nodes) == 1 else None


_CONTINUATION_STOP: Final = re.compile(r"^\s*(?:File |Traceback |During handling|The above exception|\[?[EWI]\d{4}|$)")


def _continued(lines: list[str], k: int, message: str) -> str:
    """An exception's message with the lines that continue it (``DistBackendError: NCCL error ...`` then
    ``ncclInternalError: ...`` / ``Last error:`` / ``Net : Connection closed by remote peer``), three at most."""
    parts = [message]
    for j in range(k + 1, min(len(lines), k + 4)):
        text = strip_prefix(lines[j]).split("\r")[-1]
        if _CONTINUATION_STOP.match(text):
            break
        parts.append(text.strip()[:300])
    return " ".join(p for p in parts if p)


def _block_verdict(lines: list[str], block: ErrorBlock) -> Verdict | None:
    """What the block's error says about who failed: its traceback, else an exception line in it. A traceback the
    log cut before its exception line says where the code was, not what went wrong: no verdict."""
    if block.traceback is not None:
        origin = block.traceback.origin()
        exc_type = origin.exc_type or block.traceback.exc_type
        if not exc_type and not origin.message:
            return None
        message = origin.message
        if origin.end < len(lines) and origin.message and origin.message in lines[origin.end]:
            message = _continued(lines, origin.end, origin.message)
        return classify_error(exc_type, message, origin.frames)
    for k in range(block.start, min(block.end, block.start + 8) + 1):
        parsed = parse_exception_line(strip_prefix(lines[k]))
        if parsed is not None:
            return classify_error(parsed[0], _continued(lines, k, parsed[1]))
    return None


def diagnose_lines(
    lines: list[str],
    locator: Locator | None = None,
    knn: FailureKnn | None = None,
    allocation: Sequence[str] = (),
) -> Diagnosis:
    """Diagnose a failed job's whole log (``knn``: an embedding vote where rules cannot decide).

    ``allocation``: the nodes the scheduler gave the job; the faulty node is one of them or
    unknown. The action never drains a node here: that needs corroboration beyond the job's own
    log (see :func:`~schedmate.agents.failures.gpu_evidence.corroborate`).
    """
    loc = locator or Locator()
    last = loc.last_progress_line(lines)
    start = max(0, last)
    blocks = loc.error_blocks(lines, start, max(0, start - _MARGIN))
    if not blocks:
        return Diagnosis(first_error_line=None, explanation="no failure found in the log", path=["rules"],
                         classifier_calls=loc.calls)  # fmt: skip
    best = max(blocks, key=lambda b: (b.priority, -b.start))
    if best.priority <= SYMPTOM:
        kills = [b for b in blocks if b.priority == KILL]
        best = kills[0] if kills else min(blocks, key=lambda b: b.start)
    path = ["rules"]
    sig = best.signature
    verdict = None if sig is not None and sig.priority >= HARDWARE else _block_verdict(lines, best)
    if sig is not None and (verdict is None or sig.priority >= HARDWARE or sig.category != "other"
                            or verdict.category == "other"):  # fmt: skip
        # a known signature is stronger evidence than where it surfaced, unless it only says "other"
        category, component = sig.category, sig.component
        why = sig.explanation if verdict is None else f"{sig.explanation} ({verdict.why})"
        confidence = 0.85 if sig.priority >= HARDWARE else 0.7
    elif verdict is not None:
        category, component, confidence, why = verdict.category, verdict.component, verdict.confidence, verdict.why
    else:
        category, component, confidence, why = "other", None, 0.3, "an error with no known signature"
    if best.traceback is not None:
        path.append("traceback")
    if knn is not None and best.signature is None and confidence < 0.5:
        text = " ".join(strip_prefix(lines[k]).strip() for k in (best.start, best.end))
        vote = knn.vote(text)
        if vote.score >= 0.3:
            category, component = vote.category, vote.component
            confidence = 0.45
            why = f"closest known failure kind: {vote.category} (similarity {vote.score:.2f}); {why}"
            path.append("embedding")
    if category == "infrastructure" and component is None:
        component = "other"
    hint = _log_node(lines, best)
    node = resolve_node(hint, allocation)
    evidence = [lines[k].split("\r")[-1].strip()[:300] for k in range(best.start, min(best.end, best.start + 4) + 1)]
    if best.traceback is not None and best.traceback.end > best.start + 4:
        evidence.append(lines[best.traceback.end].strip()[:300])
    return Diagnosis(
        first_error_line=best.start + 1,
        category=category,
        infra_component=component,
        faulty_node=node if category == "infrastructure" else None,
        confidence=confidence,
        action=recovery_action(category, component, node, confidence),
        explanation=why,
        evidence=evidence,
        path=path,
        classifier_calls=loc.calls,
        log_node=hint,
    )


def diagnose_file(path: Path) -> Diagnosis:
    """Diagnose a log file (physical lines, as in the labels)."""
    return diagnose_lines(split_physical_lines(path.read_bytes()))
