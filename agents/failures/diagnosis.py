"""The Failure Handler without Kafka: locate a failed job's root-cause line, classify it, pick an action.

Locating is :class:`~schedmate.agents.failures.locator.Locator`'s job (O(log N) chunk
classifications to find where training stopped, then error blocks after it). The root cause
is the block with the strongest evidence — hardware signatures outrank a killed rank, which
outranks ordinary errors, which outrank symptoms (peer gone, timeouts, launcher summaries) —
the earliest among equals.

Classifying: a known signature decides; otherwise the traceback decides (an exception raised
in the job's own code, or a library rejecting the job's input/configuration/environment, is
``user_script``; an internal error inside a library is ``framework``); where neither can, an
embedding vote over labelled failure exemplars may.
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
from schedmate.agents.failures.tracebacks import Traceback, strip_prefix
from schedmate.agents.logtext.lines import split_physical_lines
from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent
from schedmate.schemas.scheduler_actions import ActionKind

__all__ = ["Diagnosis", "diagnose_file", "diagnose_lines", "resolve_node"]

_MARGIN: Final = 60  # lines before the last progress line where hardware evidence still counts
_USER_INPUT_ERRORS: Final = frozenset(
    {"ValueError", "TypeError", "KeyError", "FileNotFoundError", "ImportError", "ModuleNotFoundError",
     "AssertionError", "MemoryError", "FloatingPointError", "ZeroDivisionError", "PermissionError",
     "IsADirectoryError", "NotADirectoryError", "JSONDecodeError", "_ArrayMemoryError", "OutOfMemoryError"}
)  # fmt: skip
_FRAMEWORK_ERRORS: Final = frozenset(
    {"AttributeError", "ModuleAttributeError", "UnpicklingError", "NotImplementedError", "RecursionError",
     "IndexError", "UnboundLocalError", "NameError", "SystemError"}
)  # fmt: skip
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


def _classify_traceback(tb: Traceback) -> tuple[FailureCategory, float, str]:
    origin = tb.origin()
    exc = origin.short_type or tb.short_type
    inner = origin.innermost
    where = f"{inner.path}:{inner.line}" if inner else "?"
    if inner is not None and not inner.in_library:
        return "user_script", 0.75, f"{exc} raised in the job's own code ({where}): {origin.message[:200]}"
    if exc in _USER_INPUT_ERRORS:
        return (
            "user_script",
            0.6,
            f"a library rejected the job's input or configuration with {exc} ({where}): " + (origin.message[:200]),
        )
    if exc in _FRAMEWORK_ERRORS:
        return "framework", 0.6, f"internal {exc} inside a library ({where}): {origin.message[:200]}"
    return "other", 0.35, f"{exc or 'error'} at {where}: {origin.message[:200]}"


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
    if best.signature is not None and (best.traceback is None or best.signature.priority >= HARDWARE):
        sig = best.signature
        category, component, why = sig.category, sig.component, sig.explanation
        confidence = 0.85 if sig.priority >= HARDWARE else 0.7
    elif best.traceback is not None:
        category, confidence, why = _classify_traceback(best.traceback)
        component = None
        if best.signature is not None:  # a known signature is stronger evidence than where it surfaced
            sig = best.signature
            category, component, why = sig.category, sig.component, f"{sig.explanation} ({why})"
            confidence = max(confidence, 0.7)
        path.append("traceback")
    else:
        category, component, confidence, why = "other", None, 0.3, "an error with no known signature"
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
