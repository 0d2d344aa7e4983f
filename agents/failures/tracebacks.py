"""Reading Python tracebacks out of (possibly rank-prefixed) log lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Frame", "Traceback", "chain_origin", "find_tracebacks", "strip_prefix"]

# "[rank1]: ", "[default0]:", "0: " (srun -l), "[1,0]<stderr>:" (mpirun)
_PREFIX: Final = re.compile(r"^(?:\[(?:rank|default)?\d+\]:\s?|\d{1,4}: |\[\d+,\d+\]<std(?:out|err)>:\s?)")
_START: Final = re.compile(r"Traceback \(most recent call last\)")
# A frame as CPython prints it, as IPython/Jupyter prints it ("File /p.py:384, in f(...)" or "/p.py in f(...)"
# followed by "--> 384"), as rich prints it ("│ /p.py:753 in run │"), and as Colab links ("[/p.py](https://…) in f").
_FRAME: Final = re.compile(
    r'^\s*File "(?P<p1>[^"]+)", line (?P<l1>\d+), in(?: (?P<f1>\S+)|\s*$)'
    r"|^\s*File (?P<p2>[~/.\w\\:-][^\s:]*\.pyx?):(?P<l2>\d+), in (?P<f2>[\w.<>]+)"
    r"|^(?P<p3>[~/.\w\\:-][^\s:]*\.pyx?) in (?P<f3>[\w.<>]+)(?:\(|\s*$)"
    r"|^[│|]\s*(?P<p4>[~/.\w\\:-][^\s:]*\.pyx?):(?P<l4>\d+) in (?P<f4>[\w.<>]+)"
    r"|^(?P<p5><ipython-input-[\w-]+>) in (?P<f5>[\w.<>]+)"
    r"|^\[(?P<p6>[^\]\s]{1,500})\]\([^)\s]{0,200}\) in (?P<f6><[^>]{1,60}>|[\w.]+)"  # Colab links
    r"|^(?P<p7>\S{1,500}\.ipynb) (?P<f7>Cell \d{1,6}) line (?P<l7>\d{1,6})\s*$"  # IPython 8: a notebook's cell
    r"|^(?P<f8>Cell In\s?\[\d{1,6}\]), line (?P<l8>\d{1,6})"
)
_EXC: Final = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning)?)(?::\s?(.*))?$")
# The source line CPython prints under the raising frame; a log cut before the exception line still names the
# exception there ("raise ValueError(...)").
_RAISE: Final = re.compile(r"^\s*raise\s+([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure))\b\s*(?:\((.*))?$")
_CHAIN: Final = re.compile(
    r"During handling of the above exception|The above exception was the direct cause|^Original Traceback"
)
# A line under a frame that is its source code, not the exception: an exception line is a dotted name, then
# ":" or the end ("KeyError: 'x'", "StopIteration"); source has other characters before any ":".
_SOURCE_NOT_EXC: Final = re.compile(r"^(?![A-Za-z_][\w.]*(?::|$))\S")
_LIBRARY: Final = re.compile(r"site-packages|dist-packages|/lib/python\d|<frozen |/usr/lib/python|^<(?!ipython-input)")


# A logging library's header before the message: a bracketed clock (`[01:17:10.938]: `), then glog's
# `W1024 01:17:10.936000 140404233111360 torch/_dynamo/convert_frame.py:1009] ` (torch's own warnings and errors).
_LOG_PREFIX: Final = re.compile(r"^(?:\[\d{1,2}:\d\d:\d\d[.,]?\d*\]:?\s*)?[IWEF]\d{4} [\d:.]{8,16} +\d+ \S+:\d+\] ")


def strip_prefix(line: str) -> str:
    """The line without a launcher's rank prefix or a glog-style logger header."""
    return _LOG_PREFIX.sub("", _PREFIX.sub("", line, count=1), count=1)


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame."""

    path: str
    line: int
    func: str

    @property
    def in_library(self) -> bool:
        """Whether the frame is in an installed package (not the job's own code)."""
        return _LIBRARY.search(self.path) is not None


@dataclass(slots=True)
class Traceback:
    """A traceback: where it starts and ends in the log (0-based indexes), frames and exception."""

    start: int
    end: int
    frames: list[Frame] = field(default_factory=list)
    exc_type: str = ""
    message: str = ""
    chained: list[Traceback] = field(default_factory=list)  # later tracebacks of the same chain

    @property
    def innermost(self) -> Frame | None:
        """The frame that raised."""
        return self.frames[-1] if self.frames else None

    @property
    def short_type(self) -> str:
        """Exception class name without its module."""
        return self.exc_type.rsplit(".", 1)[-1]

    def origin(self) -> Traceback:
        """The innermost-raising traceback of a chain ("Original Traceback" of a worker, …)."""
        for tb in self.chained:
            if tb.frames and tb.innermost is not None and not tb.innermost.in_library:
                return tb
        return self


def find_tracebacks(lines: list[str], start: int = 0, end: int | None = None) -> list[Traceback]:
    """Every traceback in ``lines[start:end]``; chained ones are attached to the first of their chain.

    A traceback is found by its header, or by a run of frames without one (a log cut mid-traceback).
    When the header is printed after a per-line prefix (a log collector's timestamp, a pod name), that
    prefix is stripped from the lines that follow it.
    """
    end = len(lines) if end is None else end
    out: list[Traceback] = []
    i = start
    while i < end:
        stripped = strip_prefix(lines[i])
        head = _START.search(stripped)
        headless = head is None and _frame(stripped) is not None
        if head is None and not headless:
            i += 1
            continue
        prefix = _prefix_pattern(stripped[: head.start()]) if head is not None else None
        tb = _read_one(lines, i, end, prefix, headless=headless)
        if headless and not tb.exc_type:
            i = tb.end + 1
            continue
        i = tb.end + 1
        if out and tb.start - out[-1].end <= 3 and _chained_between(lines, out[-1].end, tb.start):
            out[-1].chained.append(tb)
            out[-1].end = tb.end
        else:
            out.append(tb)
    return out


_CAUSE_LINE: Final = re.compile(r"\b[A-Za-z_][\w.]*(?:Error|Exception|Traceback)\b:\s")


def chain_origin(lines: list[str], start: int, lowest: int = 0) -> int | None:
    """The line of the exception a traceback at ``start`` was raised from, when only its message was printed before
    the chain marker (JAX's ``jax.errors.SimplifiedTraceback: …`` glued to a bar, then "The above exception was the
    direct cause of the following exception:"); None when nothing like it is there."""
    k = start - 1
    while k >= lowest and not lines[k].strip():
        k -= 1
    if k < lowest or start - k > 3 or not _CHAIN.search(strip_prefix(lines[k])):
        return None
    k -= 1
    while k >= lowest and not lines[k].strip():
        k -= 1
    if k < lowest or _CAUSE_LINE.search(strip_prefix(lines[k])[:2000]) is None:
        return None
    return k


def _chained_between(lines: list[str], a: int, b: int) -> bool:
    return any(_CHAIN.search(strip_prefix(lines[k])) for k in range(a, b + 1))


def _prefix_pattern(prefix: str) -> re.Pattern[str] | None:
    """A pattern for a per-line prefix like ``prefix`` (digits may change from line to line)."""
    if not prefix.strip() or len(prefix) > 200:
        return None
    parts = re.split(r"\d+", prefix)
    return re.compile(r"\d+".join(re.escape(p) for p in parts))


def _frame(text: str) -> Frame | None:
    m = _FRAME.match(text)
    if m is None:
        return None
    g = m.groupdict()
    path = (
        g["p1"] or g["p2"] or g["p3"] or g["p4"] or g["p5"] or g["p6"] or g["p7"] or g["f8"] or ""
    )  # (a cell: the job's)
    line = g["l1"] or g["l2"] or g["l4"] or g["l7"] or g["l8"] or "0"
    func = g["f1"] or g["f2"] or g["f3"] or g["f4"] or g["f5"] or g["f6"] or g["f7"] or g["f8"] or "?"
    return Frame(path, int(line), func)


def _read_one(
    lines: list[str], i: int, end: int, prefix: re.Pattern[str] | None = None, *, headless: bool = False
) -> Traceback:
    tb = Traceback(start=i, end=i)
    j = i if headless else i + 1
    last_frame = i
    context = 0  # IPython prints numbered source lines around each frame: they do not count against the gap
    source = ""  # the source line under the latest frame
    while j < end and j - last_frame - context <= 6:
        text = strip_prefix(lines[j])
        if prefix is not None and (pm := prefix.match(text)) is not None:
            text = text[pm.end() :]
        text = text.rstrip()
        fm = _frame(text)
        if fm:
            tb.frames.append(fm)
            last_frame = j
            source = ""
            j += 1
            continue
        if (
            tb.frames
            and j == last_frame + 1
            and _SOURCE_NOT_EXC.match(text)
            and not _START.search(text)
            and not _CHAIN.search(text)
        ):
            source = text  # the frame's source line, its indentation lost in a copy ("pred = model(x)")
            j += 1
            continue
        if re.match(r"^-*>\s*\d+\s", text) or re.match(r"^\s*\d+\s", text) or re.fullmatch(r"\d{1,4} frames", text):
            j += 1  # IPython's source context ("--> 384 loss = ..."), numbered lines
            context += 1
            continue
        if text.startswith((" ", "\t")) or not text or set(text.strip()) <= set("^~ "):
            if tb.frames and j == last_frame + 1 and text.strip():
                source = text
            j += 1
            continue
        em = _EXC.match(text)
        if em and tb.frames:
            tb.exc_type, tb.message = em.group(1), (em.group(2) or "").strip()
            tb.end = j
            return tb
        break
    tb.end = max(last_frame, i)
    if tb.frames and (rm := _RAISE.match(source)) is not None:  # cut before its exception line
        tb.exc_type, tb.message = rm.group(1), (rm.group(2) or "").rstrip(")").strip()
        tb.end = last_frame + 1
    return tb
