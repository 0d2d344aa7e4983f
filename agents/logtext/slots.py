"""Learning, once per template, which number on a progress line is which metric.

A line is reduced to a *template key* (numbers and bar glyphs masked). The first time
a key is seen, :func:`learn_spec` names the line's numeric slots from the text around
them (``loss=…``, ``'learning_rate': '…'``, ``92.5 ms/step``, a tqdm ``n/N`` counter, …).
Every later line with the same key reuses that :class:`TemplateSpec`: extraction is then
a single regex pass that picks numbers by position. Values are never invented: each
one is a number token of the line itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

__all__ = [
    "METRICS",
    "METRICS_BLOCK_HEADER",
    "METRICS_BLOCK_ROW",
    "NUMBER_RE",
    "Slot",
    "TemplateSpec",
    "learn_spec",
    "numbers_of",
    "template_key",
]

Metric = Literal[
    "step",
    "total_steps",
    "epoch",
    "total_epochs",
    "loss",
    "lr",
    "step_time_s",
    "samples_per_s",
    "tokens_per_s",
]
METRICS: Final = get_args(Metric)
# How a slot was recognised: a named key, a bar/loop counter ``n/N``, or a bar's rate.
SlotKind = Literal["keyed", "counter", "bar_rate"]

# A number token. A leading '-' counts as a sign only after a separator (so dates stay positive).
NUMBER_RE: Final = re.compile(
    r"(?:(?<=[\s=:(\[,{'\"|])-|(?<![\w.]))(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
)
_BAR_GLYPHS: Final = re.compile(r"[█▏▎▍▌▋▊▉▐▕━╸╺╾╼─▒░■□]+")
_SPACES: Final = re.compile(r"\s+")
_NUM_MASK: Final = "\x00"

# The words before a number that name it: up to four words, an optional "(ms)" unit, then
# optional quotes, ':' or '=' and an opening bracket.
_KEY_BEFORE: Final = re.compile(
    r"([A-Za-z][A-Za-z0-9_./-]*(?:\([A-Za-z]+\))?(?: [A-Za-z][A-Za-z_]*){0,3}?)( ?\((?:ms|s|sec)\))?"
    r"\s*['\"]?\s*[:=]?\s*['\"]?\s*[\[(]?\s*$"
)
_UNIT_AFTER: Final = re.compile(
    r"\s?(it/s|s/it|ms/step|s/step|ms/it|ms/iter|s/iter|samples/s|samples/sec|sample/s|img/s|imgs/s|"
    r"images/s|examples/s|ex/s|tok/s|tokens/s|tokens/sec|tok/sec|ms|sec|s|%|[KMGT]i?B)(?![\w/])"
)
_COUNTER_AFTER: Final = re.compile(r"\s*/\s*(?=\d)")
_EVAL_WORDS: Final = re.compile(
    r"(?<![\w/.-])(?:val|valid|validation|validating|eval|evaluation|evaluating|evaluate|test|testing|"
    r"predict|predicting|prediction|sanity checking)(?![\w/.-])",
    re.IGNORECASE,
)
_TQDM_PCT: Final = re.compile(r"\d+%\|")
_NON_TRAINING_BAR: Final = re.compile(
    r"(?i)\b(?:map|loading|load|downloading|download|writing|saving|generating|tokeniz\w*|preprocess\w*|"
    r"filter\w*|extract\w*|fetching|processing|resolving|running tokenizer|shards|checkpoint|upload\w*)\b"
)
# A bar counting bytes, examples, files or dataset batches is a data loop, not training.
_DATA_LOOP_RATE: Final = re.compile(r"(?:\d|\?)\s?(?:[kMGT]i?B|B|examples?|files?|docs?|ba|rows?)/s\b")
# Lines that summarise a whole run (HF Trainer's final dict and metric blocks): not live progress.
_SUMMARY: Final = re.compile(r"train_runtime")
# HF Trainer's `log_metrics` block: a "***** train metrics *****" header, then indented "key = value" rows.
METRICS_BLOCK_HEADER: Final = re.compile(r"^\*{3,}\s*\w+ metrics\s*\*{3,}$")
METRICS_BLOCK_ROW: Final = re.compile(r"^\s+[\w/.-]+\s*=\s*\S")
# DeepSpeed's ThroughputTimer prints the engine's epoch counter, which only moves when a user
# calls it; it is not the training epoch.
_DS_TIMER_EPOCH: Final = re.compile(r"epoch=\d+/micro_step=")

_LOSS_KEYS: Final = frozenset(
    {
        "loss", "train_loss", "train_loss_step", "training_loss", "loss_step", "lm_loss", "train/loss", "total_loss",
        "avg_loss", "mean_loss", "running_loss", "batch_loss", "tr_loss", "train_lm_loss", "loss_total",
        "train/loss_step", "trainer/loss", "step_loss",
    }
)  # fmt: skip
_LR_KEYS: Final = frozenset(
    {"lr", "learning_rate", "current_lr", "train/learning_rate", "train/lr", "lr_0", "lr0", "base_lr", "lr_adam"}
)
_STEP_KEYS: Final = frozenset(
    {"step", "iter", "iteration", "iters", "global_step", "train/global_step", "train/step", "num_updates",
     "update", "updates", "trainer/global_step", "iter(train)", "optimizer_step"}
)  # fmt: skip
_EPOCH_KEYS: Final = frozenset({"epoch", "ep", "train/epoch", "epoch(train)", "trainer/epoch"})
_STEP_TIME_KEYS: Final = frozenset(
    {"time", "step_time", "iter_time", "iteration_time", "batch_time", "time_per_step", "time_per_iter",
     "elapsed_time_per_iteration", "train/step_time", "sec_per_iter", "s_per_iter", "step_time_s",
     "time_per_iteration", "secs_per_step", "sec_per_step", "train_step_time"}
)  # fmt: skip
_SAMPLES_KEYS: Final = frozenset(
    {"samples_per_s", "samples_per_sec", "samples_per_second", "throughput", "currsamplespersec",
     "examples_per_sec", "examples_per_second", "images_per_sec", "imgs_per_sec", "train/samples_per_second",
     "samples/s", "samples/sec", "img/s", "images/s"}
)  # fmt: skip
_TOKENS_KEYS: Final = frozenset(
    {
        "tokens_per_s",
        "tokens_per_sec",
        "tokens_per_second",
        "tps",
        "tgs",
        "tok_per_sec",
        "tokens_per_sec_per_gpu",
        "wps",
        "tokens/sec",
        "tokens/s",
        "tok/s",
        "tok/sec",
    }
)
_RATE_UNITS: Final = {
    "samples/s": "samples_per_s", "samples/sec": "samples_per_s", "sample/s": "samples_per_s",
    "img/s": "samples_per_s", "imgs/s": "samples_per_s", "images/s": "samples_per_s",
    "examples/s": "samples_per_s", "ex/s": "samples_per_s",
    "tok/s": "tokens_per_s", "tokens/s": "tokens_per_s", "tokens/sec": "tokens_per_s", "tok/sec": "tokens_per_s",
}  # fmt: skip
_STEP_TIME_UNITS: Final = {"ms/step": 0.001, "ms/it": 0.001, "ms/iter": 0.001, "s/step": 1.0, "s/iter": 1.0}


@dataclass(frozen=True, slots=True)
class Slot:
    """One number of a template: its position among the line's numbers and what it means."""

    index: int
    metric: Metric
    kind: SlotKind = "keyed"
    scale: float = 1.0
    invert: bool = False

    def value(self, raw: float) -> float | None:
        """The metric's value from the token's number (unit scale, rate inversion)."""
        if self.invert:
            return None if raw == 0 else 1.0 / raw
        return raw * self.scale


@dataclass(frozen=True, slots=True)
class TemplateSpec:
    """What a template's numbers mean, learned once from its first line."""

    n_numbers: int
    slots: tuple[Slot, ...] = ()
    is_eval: bool = False
    is_summary: bool = False
    is_bar: bool = False
    counter_total_index: int | None = None  # index of N in the bar/loop counter n/N
    named_by: str = "rules"
    _metrics: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def is_progress(self) -> bool:
        """Whether lines of this template report training progress."""
        if self.is_eval or self.is_summary:
            return False
        core = {s.metric for s in self.slots} - {"epoch", "total_epochs", "lr"}
        return bool(core)

    def to_json(self) -> str:
        """Serialise for the template cache."""
        return json.dumps(
            {
                "n": self.n_numbers,
                "slots": [[s.index, s.metric, s.kind, s.scale, s.invert] for s in self.slots],
                "eval": self.is_eval,
                "summary": self.is_summary,
                "bar": self.is_bar,
                "cti": self.counter_total_index,
                "by": self.named_by,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> TemplateSpec:
        """Inverse of :meth:`to_json`."""
        d = json.loads(text)
        return cls(
            n_numbers=d["n"],
            slots=tuple(Slot(i, m, k, sc, inv) for i, m, k, sc, inv in d["slots"]),
            is_eval=d["eval"],
            is_summary=d["summary"],
            is_bar=d["bar"],
            counter_total_index=d["cti"],
            named_by=d.get("by", "rules"),
        )


def template_key(line: str) -> str:
    """The line with numbers and bar glyphs masked and whitespace collapsed."""
    key = _BAR_GLYPHS.sub("#", line)
    key = NUMBER_RE.sub(_NUM_MASK, key)
    return _SPACES.sub(" ", key).strip()


def numbers_of(line: str) -> list[float]:
    """The line's number tokens, in order (thousands separators removed)."""
    return [float(m.replace(",", "")) for m in NUMBER_RE.findall(line)]


def _normalise_key(words: str) -> str:
    key = words.strip().lower()
    key = re.sub(r"\s+", "_", key)
    return key.replace("-", "_").replace(".", "_")


def _metric_for_key(key: str) -> Metric | None:
    table: tuple[tuple[frozenset[str], Metric], ...] = (
        (_LOSS_KEYS, "loss"),
        (_LR_KEYS, "lr"),
        (_STEP_KEYS, "step"),
        (_EPOCH_KEYS, "epoch"),
        (_STEP_TIME_KEYS, "step_time_s"),
        (_SAMPLES_KEYS, "samples_per_s"),
        (_TOKENS_KEYS, "tokens_per_s"),
    )
    for keys, metric in table:
        if key in keys:
            return metric
    # "learning rate" → learning_rate; "global step" → global_step (already normalised)
    return None


def _metric_for_words(words: str) -> Metric | None:
    """Metric named by the words before a number: the longest phrase that names one."""
    parts = words.split()
    for i in range(len(parts)):
        metric = _metric_for_key(_normalise_key(" ".join(parts[i:])))
        if metric is not None:
            return metric
    return None


def _unkeyed_counter(line: str, start: int, end: int, bar: bool) -> bool:
    """Whether an un-named ``n/N`` at [start, end) is a loop counter by its position."""
    before = line[:start].rstrip(" ")
    after = line[end:]  # the text after N
    if bar and (before.endswith("|") or (before and _BAR_GLYPHS.fullmatch(before[-1]) is not None)):
        return True  # tqdm "| n/N [", rich/keras "━━━ n/N"
    if not before.strip() and re.match(r"\s+(?:-|\S*[━#=])", after):
        return True  # keras "n/N - 11s - …" / "n/N ━━━…"
    return before.endswith("][") or (before.endswith("[") and after.startswith("]"))


def learn_spec(line: str) -> TemplateSpec:
    """Name the numeric slots of ``line`` (the slow path, once per template)."""
    matches = list(NUMBER_RE.finditer(line))
    is_eval = _EVAL_WORDS.search(line) is not None
    is_summary = _SUMMARY.search(line) is not None
    pct = _TQDM_PCT.search(line)
    glyphs = _BAR_GLYPHS.search(line)
    is_bar = pct is not None or glyphs is not None or "it/s" in line or "s/it" in line
    if pct is not None and (_NON_TRAINING_BAR.search(line[: pct.start()]) or _DATA_LOOP_RATE.search(line)):
        is_eval = True  # a bar of some other loop (loading, writing shards, mapping a dataset, …)
    slots: list[Slot] = []
    counter_total: int | None = None
    taken: set[int] = set()
    ds_epoch = _DS_TIMER_EPOCH.search(line)
    for i, m in enumerate(matches):
        if i in taken:
            continue
        start, end = m.span()
        after = line[end:]
        unit_m = _UNIT_AFTER.match(after)
        unit = unit_m.group(1) if unit_m else ""
        is_counter = _COUNTER_AFTER.match(after) is not None and i + 1 < len(matches)
        key_m = _KEY_BEFORE.search(line[max(0, start - 64) : start])
        metric = _metric_for_words(key_m.group(1)) if key_m else None
        key_unit = (key_m.group(2) or "").strip(" ()") if key_m else ""
        if metric == "epoch" and ds_epoch is not None and ds_epoch.start() <= start < ds_epoch.end():
            continue
        if unit in ("it/s", "s/it") and metric is None:
            if is_bar:
                slots.append(Slot(i, "step_time_s", "bar_rate", invert=unit == "it/s"))
            continue
        if unit in _STEP_TIME_UNITS and metric in (None, "step_time_s"):
            slots.append(Slot(i, "step_time_s", "keyed", scale=_STEP_TIME_UNITS[unit]))
            continue
        if unit in _RATE_UNITS and metric in (None, "samples_per_s", "tokens_per_s"):
            slots.append(Slot(i, _RATE_UNITS[unit], "keyed"))  # type: ignore[arg-type]
            continue
        if metric is not None:
            if metric == "step_time_s":
                scale = 0.001 if (unit == "ms" or key_unit == "ms") else 1.0
                if unit not in ("", "ms", "s", "sec"):
                    continue
                slots.append(Slot(i, metric, "keyed", scale=scale))
                continue
            if unit and unit not in ("s", "sec"):
                continue  # a count with a unit (%, GB, …) is not a training metric
            if is_counter and metric == "step" and counter_total is None:
                # "step 190/200": a loop counter; it may restart every epoch like a bar's.
                slots += [Slot(i, "step", "counter"), Slot(i + 1, "total_steps", "counter")]
                taken.add(i + 1)
                counter_total = i + 1
                continue
            slots.append(Slot(i, metric, "keyed"))
            if is_counter and metric in ("step", "epoch"):
                total: Metric = "total_steps" if metric == "step" else "total_epochs"
                slots.append(Slot(i + 1, total, "keyed"))
                taken.add(i + 1)
            continue
        if is_counter and counter_total is None and _unkeyed_counter(line, start, matches[i + 1].end(), is_bar):
            slots.append(Slot(i, "step", "counter"))
            slots.append(Slot(i + 1, "total_steps", "counter"))
            taken.add(i + 1)
            counter_total = i + 1
    return TemplateSpec(
        n_numbers=len(matches),
        slots=tuple(slots),
        is_eval=is_eval,
        is_summary=is_summary,
        is_bar=is_bar,
        counter_total_index=counter_total,
    )
