"""Finding a failed job's root-cause line: where training stopped, then the strongest error block after it.

A failed job's log ends in its fatal cascade, after the last line of training progress. The
last progress chunk (20 lines) is found by an exponential search from the end followed by a
binary search, so a log of N lines costs O(log N) chunk classifications; the failure tail
after it is then read in full. Errors printed earlier while training went on (an optional
import failing, a retried connection) are benign by construction. In the tail, error lines
are grouped into blocks (a whole traceback, a run of NCCL lines, ...), each with the priority
of its strongest evidence (see :mod:`schedmate.agents.failures.signatures`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from schedmate.agents.failures.signatures import ERROR, HARDWARE, MAX_LINE_CHARS, Signature, match_signature
from schedmate.agents.failures.tracebacks import Traceback, chain_origin, find_tracebacks, strip_prefix
from schedmate.agents.logtext.lines import visible_segments
from schedmate.agents.logtext.slots import learn_spec, numbers_of, template_key
from schedmate.agents.logtext.templates import rule_class

__all__ = ["CHUNK_LINES", "ErrorBlock", "Locator"]

CHUNK_LINES: Final = 20
_TRAINING_METRICS: Final = frozenset({"step", "loss", "samples_per_s", "tokens_per_s"})


@dataclass
class ErrorBlock:
    """Consecutive lines of one error (a traceback, a run of NCCL lines, ...) and its evidence."""

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
        self._zero_counter: dict[str, int | None] = {}  # the template's step counter when it is all it reports
        self.calls = 0

    def _visible(self, raw: str) -> str:
        raw = raw[:MAX_LINE_CHARS]  # a line is judged by its first 4 KiB: bounded cost per line
        segs = visible_segments(raw) if ("\r" in raw or "\x08" in raw or "\x1b" in raw) else [raw.rstrip()]
        return segs[-1] if segs else ""

    def is_progress(self, raw: str) -> bool:
        """Whether the line reports training progress (a step, a loss or a throughput) and no error."""
        raw = raw[:MAX_LINE_CHARS]
        for seg in visible_segments(raw) if ("\r" in raw or "\x1b" in raw) else [raw.rstrip()]:
            key = template_key(seg)
            hit = self._progress.get(key)
            if hit is None:
                spec = learn_spec(seg)
                core = {s.metric for s in spec.slots} & _TRAINING_METRICS
                hit = spec.is_progress and bool(core) and match_signature(seg) is None and rule_class(seg) != "error"
                self._progress[key] = hit
                counters = [s.index for s in spec.slots if s.kind == "counter" and s.metric == "step"]
                only = (
                    core == {"step"}
                    and len(counters) == 1
                    and not any(s.metric == "step" and s.kind != "counter" for s in spec.slots)
                )
                self._zero_counter[key] = counters[0] if only else None
            if hit and not self._not_started(key, seg):
                return True
        return False

    def _not_started(self, key: str, seg: str) -> bool:
        """Whether a line that counts steps and reports nothing else shows its loop at 0 (``0%| | 0/168``): a bar
        drawn before any step ran is no progress (another rank's bar printed after this rank's traceback)."""
        at = self._zero_counter.get(key)
        if at is None:
            return False
        numbers = numbers_of(seg)
        return at < len(numbers) and numbers[at] == 0

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

    def error_blocks(self, lines: list[str], start: int, hard_from: int) -> list[ErrorBlock]:
        """Error blocks in ``lines[start:]``; between ``hard_from`` and ``start`` only hardware evidence."""
        blocks: list[ErrorBlock] = []
        tbs = {tb.start: tb for tb in find_tracebacks(lines, hard_from)}
        i = hard_from
        while i < len(lines):
            tb = tbs.get(i)
            last = blocks[-1] if blocks else None
            if (
                tb is not None
                and last is not None
                and last.traceback is None
                and last.signature is None
                and (i - last.end <= 3)
            ):  # "Exception has occurred: ValueError" then its traceback: one error, explained by the traceback
                text = " ".join(strip_prefix(lines[k][:MAX_LINE_CHARS]) for k in (tb.start, tb.end))
                sig = match_signature(f"{tb.exc_type}: {tb.message}") or match_signature(text)
                last.end, last.traceback, last.signature = tb.end, tb, sig
                last.priority = max(last.priority, sig.priority if sig is not None else ERROR)
                i = tb.end + 1
                continue
            if tb is not None:
                text = " ".join(strip_prefix(lines[k][:MAX_LINE_CHARS]) for k in (tb.start, tb.end))
                sig = match_signature(f"{tb.exc_type}: {tb.message}") or match_signature(text)
                for inner in tb.chained:
                    sig = sig or match_signature(f"{inner.exc_type}: {inner.message}")
                prio = sig.priority if sig is not None else ERROR
                if tb.end >= start or prio >= HARDWARE:
                    origin = chain_origin(lines, i, max(hard_from, blocks[-1].end + 1 if blocks else 0))
                    blocks.append(ErrorBlock(i if origin is None else origin, tb.end, prio, sig, tb, "traceback"))
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
                elif last is not None and last.traceback is None and last.signature is None and i - last.end <= 2:
                    # a bare error line ("[ERROR] handler: {", "raise ValueError(") explained by the next ones
                    last.end, last.priority, last.signature = i, max(prio, last.priority), sig
                else:
                    blocks.append(ErrorBlock(i, i, prio, sig, None, fam))
            i += 1
        return blocks
