"""Progress printed as a column table: a header row of names, then rows of values under them.

Detectors' and other trainers' logs (YOLO-style ``Epoch  GPU_mem  box_loss …`` with a progress bar after the
last column) name their numbers once, in a header. A row is labelled by the header above it
(``Epoch 261/300 GPU_mem 2.95G box_loss 0.3137 …``) so that the ordinary slot rules read it like any
``key value`` line. A header must name an epoch or step column; a row's first value must look like a
counter, so the validation table printed between epochs (``Class Images … / all 3932 …``) is not taken for it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["foreign_table_bar", "header_of", "label_row"]

_NAME: Final = re.compile(r"[A-Za-z][\w()./-]{0,31}")
_COUNTER_COLUMNS: Final = frozenset({"epoch", "epochs", "step", "steps", "iter", "iteration", "batch"})
_COUNTER: Final = re.compile(r"\d{1,9}(?:/\d{1,9})?")
_VALUE: Final = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[A-Za-z%]{0,3}|nan|inf", re.I)
_MAX_COLUMNS: Final = 24
_PART_LOSS: Final = re.compile(r"\w+_loss|loss_\w+", re.I)
_NUMBER: Final = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def header_of(text: str) -> tuple[str, ...] | None:
    """The column names if ``text`` is a table header: 3+ names, the first a counter (epoch, step, …), and at
    least one loss-like or rate column; None otherwise."""
    head = text.split(":", 1)[0] if text.count(":") == 1 and "|" in text else text
    names = head.split()
    if not 3 <= len(names) <= _MAX_COLUMNS or not all(_NAME.fullmatch(n) for n in names):
        return None
    if names[0].lower() not in _COUNTER_COLUMNS:
        return None
    if not any(re.search(r"loss|lr|acc|time|mem", n, re.I) for n in names[1:]):
        return None
    return tuple(names)


def label_row(header: tuple[str, ...], text: str) -> str | None:
    """``text`` with each of its leading values preceded by its column's name, the rest (a progress bar) kept;
    None when the row does not fit the header."""
    tokens = text.split()
    if len(tokens) < len(header):
        return None
    values = tokens[: len(header)]
    last = values[-1]
    bar = last.endswith(":")
    values[-1] = last.rstrip(":")
    if not _COUNTER.fullmatch(values[0]) or not all(_VALUE.fullmatch(v) for v in values[1:]):
        return None
    rest = tokens[len(header) :]
    if rest and not bar:
        return None  # more values than columns: another table
    labelled = " ".join(f"{name} {value}" for name, value in zip(header, values, strict=True))
    parts = [float(v) for n, v in zip(header, values, strict=True) if _PART_LOSS.fullmatch(n) and _NUMBER.fullmatch(v)]
    if len(parts) >= 2 and "loss" not in (n.lower() for n in header):
        labelled += f" loss {sum(parts):.6g}"  # the objective is the sum of the parts the table shows
    elif "loss" not in (n.lower() for n in header) and (total := _summed_total(header, values)) is not None:
        labelled += f" loss {total}"  # early YOLOv5's "box obj cls total": the total column is the objective
    return f"{labelled}: {' '.join(rest)}" if rest else labelled


def _summed_total(header: tuple[str, ...], values: list[str]) -> str | None:
    """The value of a ``total`` column when it is the sum of the two or more number columns right before it (the
    parts of a loss the table prints unnamed, ``box obj cls total``); None otherwise."""
    names = [n.lower() for n in header]
    if "total" not in names:
        return None
    at = names.index("total")
    if not _NUMBER.fullmatch(values[at]):
        return None
    parts: list[float] = []
    for value in reversed(values[1:at]):  # (the first column is the counter)
        if not _NUMBER.fullmatch(value):
            break  # a unit-bearing column ("5.2G" of memory) ends the parts
        parts.append(float(value))
    total = float(values[at])
    decimals = len(values[at].partition(".")[2]) if "e" not in values[at].lower() else 6
    if len(parts) >= 2 and abs(sum(parts) - total) <= 10.0**-decimals:
        return values[at]
    return None


def foreign_table_bar(header: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` is another table's progress bar (``Class Images … mAP50-95): 100%|…| 983/983``): column
    names of their own before the bar. While a training table is active, such a bar is evaluation, not training."""
    if "|" not in text or ":" not in text:
        return False
    names = text.split(":", 1)[0].split()
    return len(names) >= 3 and all(_NAME.fullmatch(n) for n in names) and tuple(names) != header
