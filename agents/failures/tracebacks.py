"""Reading Python tracebacks out of (possibly rank-prefixed) log lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Frame", "Traceback", "find_tracebacks", "strip_prefix"]

# "[rank1]: ", "[default0]:", "0: " (srun -l), "[1,0]<stderr>:" (mpirun)
_PREFIX: Final = re.compile(r"^(?:\[(?:rank|default)?\d+\]:\s?|\d{1,4}: |\[\d+,\d+\]<std(?:out|err)>:\s?)")
_START: Final = re.compile(r"Traceback \(most recent call last\):")
_FRAME: Final = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')
_EXC: Final = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning)?)(?::\s?(.*))?$")
_CHAIN: Final = re.compile(
    r"During handling of the above exception|The above exception was the direct cause|^Original Traceback"
)
_LIBRARY: Final = re.compile(r"site-packages|dist-packages|/lib/python\d|<frozen |/usr/lib/python|^<")


def strip_prefix(line: str) -> str:
    """The line without a launcher's rank prefix."""
    return _PREFIX.sub("", line, count=1)


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
    """Every traceback in ``lines[start:end]``; chained ones are attached to the first of their chain."""
    end = len(lines) if end is None else end
    out: list[Traceback] = []
    i = start
    while i < end:
        if not _START.search(lines[i]):
            i += 1
            continue
        tb = _read_one(lines, i, end)
        i = tb.end + 1
        if out and tb.start - out[-1].end <= 3 and _chained_between(lines, out[-1].end, tb.start):
            out[-1].chained.append(tb)
            out[-1].end = tb.end
        else:
            out.append(tb)
    return out


def _chained_between(lines: list[str], a: int, b: int) -> bool:
    return any(_CHAIN.search(strip_prefix(lines[k])) for k in range(a, b + 1))


def _read_one(lines: list[str], i: int, end: int) -> Traceback:
    tb = Traceback(start=i, end=i)
    j = i + 1
    last_frame = i
    while j < end and j - last_frame <= 4:
        text = strip_prefix(lines[j]).rstrip()
        fm = _FRAME.match(text)
        if fm:
            tb.frames.append(Frame(fm.group(1), int(fm.group(2)), fm.group(3)))
            last_frame = j
            j += 1
            continue
        if text.startswith((" ", "\t")) or not text or set(text.strip()) <= set("^~ "):
            j += 1
            continue
        em = _EXC.match(text)
        if em and tb.frames:
            tb.exc_type, tb.message = em.group(1), (em.group(2) or "").strip()
            tb.end = j
            return tb
        break
    tb.end = max(last_frame, i)
    return tb
