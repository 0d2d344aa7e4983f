"""Turning raw terminal output into the text a person would see on a line."""

from __future__ import annotations

import re

__all__ = ["clean_line", "split_physical_lines", "visible_segments"]

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BACKSPACES = re.compile("\x08+")
MAX_LINE_CHARS = 8192


def clean_line(raw: str) -> str:
    """The visible text of one physical line.

    ANSI escapes are removed; for carriage-return redraws (progress bars) the last
    non-blank segment is kept, as a terminal would show it; other control characters
    are dropped and the result is capped at ``MAX_LINE_CHARS``.
    """
    line = raw
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\x08" in line:  # Keras-style redraws: backspaces over the previous bar
        line = _BACKSPACES.sub("\r", line)
    if "\r" in line:
        segments = line.split("\r")
        line = ""
        for seg in reversed(segments):
            if seg.strip():
                line = seg
                break
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS]
    if _CTRL.search(line) is not None:
        line = _CTRL.sub("", line)
    return line.rstrip()


def _tidy(seg: str) -> str:
    if len(seg) > MAX_LINE_CHARS:
        seg = seg[:MAX_LINE_CHARS]
    if _CTRL.search(seg) is not None:
        seg = _CTRL.sub("", seg)
    return seg.rstrip()


def visible_segments(raw: str, max_segments: int = 64) -> list[str]:
    """Every redraw of a ``\r``/backspace line that is not blank, oldest first (at most the last ``max_segments``).

    A plain line gives ``[clean_line(raw)]``; the last item is always what a terminal shows.
    """
    line = raw
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\x08" in line:
        line = _BACKSPACES.sub("\r", line)
    if "\r" not in line:
        tidy = _tidy(line)
        return [tidy] if tidy else []
    return [t for t in (_tidy(s) for s in line.split("\r")[-max_segments:]) if t.strip()]


def split_physical_lines(data: bytes) -> list[str]:
    """Split bytes into physical lines ending in ``\\n`` (``\\r`` stays inside a line).

    Invalid UTF-8 is replaced rather than rejected. A trailing partial line is kept.
    """
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
