"""When a log line was printed, from the timestamp its logger put near its start.

Loggers stamp lines in a handful of shapes: ISO dates (``2024-06-16 22:31:04,970``), US dates
(``08/07/2021 02:16:27``), month/day without a year (``11/21 15:42:33``, MMEngine and detectron2),
glog (``I0912 11:40:27.956218``) and a bare clock at the start (``[07:17:02.964445]``). Only the first
64 characters are searched, so an ETA or a bar's elapsed time later in the line is never taken
for the time the line was printed. Times without a date are seconds of the day; the caller
handles midnight.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final

__all__ = ["line_time"]

_HEAD: Final = 64
_DATED: Final = re.compile(
    r"(?P<y>\d{4})[-/](?P<mo>\d{2})[-/](?P<d>\d{2})[ T](?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,](?P<f>\d{1,6}))?"
    r"|(?P<mo2>\d{2})/(?P<d2>\d{2})/(?P<y2>\d{4})[ ,]{1,2}(?P<h2>\d{2}):(?P<mi2>\d{2}):(?P<s2>\d{2})"
    r"(?:[.,](?P<f2>\d{1,6}))?"
)
_SHORT: Final = re.compile(
    r"(?<![\d/])(?P<mo>\d{2})/(?P<d>\d{2}) (?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,](?P<f>\d{1,6}))?"
    r"|\b[IWEF](?P<mo2>\d{2})(?P<d2>\d{2}) (?P<h2>\d{2}):(?P<mi2>\d{2}):(?P<s2>\d{2})(?:\.(?P<f2>\d{1,6}))?"
)
_CLOCK: Final = re.compile(r"^\W{0,3}(?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,](?P<f>\d{1,6}))?\b")


def _frac(f: str | None) -> float:
    return int(f) / 10 ** len(f) if f else 0.0


def _first(m: re.Match[str], *names: str) -> str | None:
    return next((v for n in names if (v := m.group(n)) is not None), None)


def line_time(text: str) -> float | None:
    """Seconds the line's own timestamp says (since 1970 when it has a date, else since midnight)."""
    head = text[:_HEAD]
    try:
        if (m := _DATED.search(head)) is not None:
            year = int(_first(m, "y", "y2") or 0)
            parts = [int(_first(m, a, b) or 0) for a, b in (("mo", "mo2"), ("d", "d2"), ("h", "h2"), ("mi", "mi2"),
                                                             ("s", "s2"))]  # fmt: skip
            mo, d, h, mi, sec = parts
            return datetime(year, mo, d, h, mi, sec).timestamp() + _frac(_first(m, "f", "f2"))
        if (m := _SHORT.search(head)) is not None:
            parts = [int(_first(m, a, b) or 0) for a, b in (("mo", "mo2"), ("d", "d2"), ("h", "h2"), ("mi", "mi2"),
                                                             ("s", "s2"))]  # fmt: skip
            mo, d, h, mi, sec = parts
            return datetime(2000, mo, d, h, mi, sec).timestamp() + _frac(_first(m, "f", "f2"))
    except ValueError:  # "13/45 99:00:00" is no date
        return None
    if (m := _CLOCK.match(head)) is not None:
        h, mi, s = int(m.group("h")), int(m.group("mi")), int(m.group("s"))
        if h < 24 and mi < 60 and s < 61:
            return h * 3600 + mi * 60 + s + _frac(m.group("f"))
    return None
