"""The Failure Handler without Kafka: locate a failed job's root-cause line, classify it, pick an action.

Locating (batch): a failed job's log ends in its fatal cascade, after the last line of
training progress. The last progress chunk (20 lines) is found by an exponential search
from the end followed by a binary search, so a log of N lines costs O(log N) chunk
classifications; the failure tail after it is then read in full. Errors printed earlier
while training went on (an optional import failing, a retried connection) are benign by
construction. In the tail, error lines are grouped into blocks (a whole traceback, a run
of NCCL lines, ...); the root cause is the block with the strongest evidence — hardware
signatures outrank a killed rank, which outranks ordinary errors, which outrank symptoms
(peer gone, timeouts, launcher summaries) — the earliest among equals.

Classifying: a known signature decides; otherwise the traceback decides (an exception raised
in the job's own code, or a library rejecting the job's input/configuration/environment, is
``user_script``; an internal error inside a library is ``framework``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from schedmate.agents.failure_kb import ERROR, HARDWARE, KILL, SYMPTOM, Signature, match_signature
from schedmate.agents.failure_knn import FailureKnn
from schedmate.agents.slots import learn_spec, template_key
from schedmate.agents.templates import rule_class
from schedmate.agents.text import split_physical_lines, visible_segments
from schedmate.agents.tracebacks import Traceback, find_tracebacks, strip_prefix

__all__ = ["CHUNK_LINES", "Diagnosis", "Locator", "diagnose_file", "diagnose_lines"]

CHUNK_LINES: Final = 20
_TRAINING_METRICS: Final = frozenset({"step", "loss", "samples_per_s", "tokens_per_s"})
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
    category: str = "other"
    infra_component: str | None = None
    faulty_node: str | None = None
    confidence: float = 0.0
    action: str = "none"
    explanation: str = ""
    evidence: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    classifier_calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON contract."""
        return {
            "first_error_line": self.first_error_line,
            "category": self.category,
            "infra_component": self.infra_component,
            "faulty_node": self.faulty_node,
            "confidence": round(self.confidence, 3),
            "action": self.action,
            "explanation": self.explanation,
            "evidence": self.evidence,
            "path": self.path,
        }


@dataclass
class _Block:
    start: int  # 0-based
    end: int
    priority: float
    signature: Signature | None = None
    traceback: Traceback | None = None
    family: str = ""


class Locator:
    """Line-level judgements, cached per template (the 'classifier' the binary search calls)."""

    def __init__(self) -> None:
        self._progress: dict[str, bool] = {}
        self.calls = 0

    def _visible(self, raw: str) -> str:
        segs = visible_segments(raw) if ("\r" in raw or "\x08" in raw or "\x1b" in raw) else [raw.rstrip()]
        return segs[-1] if segs else ""

    def is_progress(self, raw: str) -> bool:
        """Whether the line reports training progress (a step, a loss or a throughput) and no error."""
        for seg in visible_segments(raw) if ("\r" in raw or "\x1b" in raw) else [raw.rstrip()]:
            key = template_key(seg)
            hit = self._progress.get(key)
            if hit is None:
                spec = learn_spec(seg)
                core = {s.metric for s in spec.slots} & _TRAINING_METRICS
                hit = spec.is_progress and bool(core) and match_signature(seg) is None and rule_class(seg) != "error"
                self._progress[key] = hit
            if hit:
                return True
        return False

    def chunk_has_progress(self, lines: list[str], chunk: int) -> bool:
        """One classifier call: does chunk ``chunk`` contain a progress line?"""
        self.calls += 1
        lo = chunk * CHUNK_LINES
        return any(self.is_progress(x) for x in lines[lo : lo + CHUNK_LINES])

    def last_progress_line(self, lines: list[str]) -> int:
        """0-based index of the last progress line (-1 if none): exponential + binary search over chunks."""
        n_chunks = (len(lines) + CHUNK_LINES - 1) // CHUNK_LINES
        if n_chunks == 0:
            return -1
        hi = n_chunks - 1  # latest chunk known (or assumed) to be after progress stopped
        if self.chunk_has_progress(lines, hi):
            lo = hi
        else:
            step, lo = 1, -1
            while True:
                probe = hi - step
                if probe < 0:
                    break
                if self.chunk_has_progress(lines, probe):
                    lo = probe
                    break
                hi, step = probe, step * 2
            while lo >= 0 and hi - lo > 1:  # invariant: lo has progress, hi has none
                mid = (lo + hi) // 2
                if self.chunk_has_progress(lines, mid):
                    lo = mid
                else:
                    hi = mid
        if lo < 0:
            return -1
        base = lo * CHUNK_LINES
        for i in range(min(len(lines), base + CHUNK_LINES) - 1, base - 1, -1):
            if self.is_progress(lines[i]):
                return i
        return -1

    def error_blocks(self, lines: list[str], start: int, hard_from: int) -> list[_Block]:
        """Error blocks in ``lines[start:]``; between ``hard_from`` and ``start`` only hardware evidence."""
        blocks: list[_Block] = []
        tbs = {tb.start: tb for tb in find_tracebacks(lines, hard_from)}
        i = hard_from
        while i < len(lines):
            tb = tbs.get(i)
            if tb is not None:
                text = " ".join(strip_prefix(lines[k]) for k in (tb.start, tb.end))
                sig = match_signature(f"{tb.exc_type}: {tb.message}") or match_signature(text)
                for inner in tb.chained:
                    sig = sig or match_signature(f"{inner.exc_type}: {inner.message}")
                prio = sig.priority if sig is not None else ERROR
                if tb.end >= start or prio >= HARDWARE:
                    blocks.append(_Block(i, tb.end, prio, sig, tb, "traceback"))
                i = tb.end + 1
                continue
            text = self._visible(lines[i])
            sig = match_signature(text)
            is_err = sig is not None or rule_class(text) == "error"
            if is_err and (i >= start or (sig is not None and sig.priority >= HARDWARE)):
                fam = "nccl" if "NCCL" in text else ("xid" if "Xid" in text else "")
                prio = sig.priority if sig is not None else ERROR
                last = blocks[-1] if blocks else None
                if last is not None and fam and last.family == fam and i - last.end <= 3:
                    last.end = i
                    if prio > last.priority:
                        last.priority, last.signature = prio, sig
                else:
                    blocks.append(_Block(i, i, prio, sig, None, fam))
            i += 1
        return blocks


def _faulty_node(lines: list[str], block: _Block) -> str | None:
    """The node (or GPU, or rank) the root block names, else the lines right after or just before it."""
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


def _classify_traceback(tb: Traceback) -> tuple[str, float, str]:
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


_ACTIONS: Final = {
    ("infrastructure", "gpu"): "drain_node_and_requeue",
    ("infrastructure", "nvlink"): "drain_node_and_requeue",
    ("infrastructure", "node"): "drain_node_and_requeue",
    ("infrastructure", "network"): "requeue_excluding_node",
    ("infrastructure", "storage"): "requeue",
    ("infrastructure", "other"): "requeue",
}


def recovery_action(category: str, component: str | None, node: str | None, confidence: float) -> str:
    """An action from the fixed allowlist, only with enough evidence."""
    if category == "infrastructure" and confidence >= 0.6:
        action = _ACTIONS.get((category, component or "other"), "requeue")
        if action != "requeue" and node is None:
            return "requeue"  # cannot exclude or drain an unnamed node
        return action
    if category in ("user_script", "framework") and confidence >= 0.5:
        return "notify_user"
    return "none"


def diagnose_lines(lines: list[str], locator: Locator | None = None, knn: FailureKnn | None = None) -> Diagnosis:
    """Diagnose a failed job's whole log (``knn``: an embedding vote where rules cannot decide)."""
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
    node = _faulty_node(lines, best)
    evidence = [lines[k].split("\r")[-1].strip()[:300] for k in range(best.start, min(best.end, best.start + 4) + 1)]
    if best.traceback is not None and best.traceback.end > best.start + 4:
        evidence.append(lines[best.traceback.end].strip()[:300])
    return Diagnosis(
        first_error_line=best.start + 1,
        category=category,
        infra_component=component,
        faulty_node=node,
        confidence=confidence,
        action=recovery_action(category, component, node, confidence),
        explanation=why,
        evidence=evidence,
        path=path,
        classifier_calls=loc.calls,
    )


def diagnose_file(path: Path) -> Diagnosis:
    """Diagnose a log file (physical lines, as in the labels)."""
    return diagnose_lines(split_physical_lines(path.read_bytes()))
