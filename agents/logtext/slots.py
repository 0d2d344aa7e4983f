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
    "global_batch_size",
]
METRICS: Final = get_args(Metric)
# How a slot was recognised: a named key, a bar/loop counter ``n/N``, a bar's rate, or a declared total.
# "declared": a run's planned length, printed once ("max_steps: 3000", "Total optimization steps = 3,000").
SlotKind = Literal["keyed", "counter", "bar_rate", "declared"]

# A number token. A leading '-' counts as a sign only after a separator (so dates stay positive).
# "nan", "inf" and "Infinity" standing alone are numbers too (a diverged loss prints them).
NUMBER_RE: Final = re.compile(
    r"(?:(?<=[\s=:(\[,{'\"|])-|(?<![\w.]))(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"|(?:(?<=[\s=:(\[,{'\"|])-)?(?<![\w.-])(?:nan|NaN|NAN|inf|Inf|INF|Infinity)(?![\w.])"
)
_BAR_GLYPHS: Final = re.compile(r"[█▏▎▍▌▋▊▉▐▕━╸╺╾╼─▒░■□]+")
_SPACES: Final = re.compile(r"\s+")
_NUM_MASK: Final = "\x00"

# The words before a number that name it: up to four words, an optional "(ms)" unit, then
# optional quotes, ':' or '=' and an opening bracket.
_KEY_BEFORE: Final = re.compile(
    r"([A-Za-z][A-Za-z0-9_./-]*(?:\([A-Za-z]+\))?(?: [A-Za-z][A-Za-z_]*){0,3}?)( ?\((?:ms|s|sec)\))?"
    r"\]?\s*['\"]?\s*[:=]?\s*['\"]?\s*[\[(]?\s*$"  # (a key in brackets names the value after it: "[Loss] 0.5")
)
_UNIT_AFTER: Final = re.compile(
    r"\s?(it/s|s/it|steps/s|step/s|steps/sec|iters/s|iter/s|updates/s|ms/step|us/step|\u00b5s/step|s/step|ms/it|ms/iter|"
    r"s/iter|"
    r"samples/s|samples/sec|sample/s|img/s|imgs/s|img/sec|imgs/sec|/s|"
    r"images/s|images/sec|examples/s|examples/sec|ex/s|tok/s|tokens/s|tokens/sec|tok/sec|ms|sec|s|%|[KMGT]i?B)(?![\w/])"
)
_COUNTER_AFTER: Final = re.compile(r"\s*/\s*(?=\d)")
_EVAL_WORDS: Final = re.compile(
    r"(?<![\w/.-])(?:val|valid|validation|validating|eval|evaluation|evaluating|evaluate|test|testing|"
    r"predict|predicting|prediction|sanity checking)(?![\w/.-])",
    re.IGNORECASE,
)
_TQDM_PCT: Final = re.compile(r"\d+%\||\d+%\s+(?=\d+/\d+\s*\[)")  # "45%|█▌ | 9/20 [" or, glyphs stripped, "45% 9/20 ["
_NON_TRAINING_BAR: Final = re.compile(
    r"(?i)\b(?:map|loading|load|downloading|download|writing|saving|generating|tokeniz\w*|preprocess\w*|"
    r"filter\w*|extract\w*|fetching|processing|resolving|running tokenizer|shards|checkpoint|upload\w*)\b"
)
# A bar counting bytes, examples, files or dataset batches is a data loop, not training.
_DATA_LOOP_RATE: Final = re.compile(r"(?:\d|\?)\s?(?:[kMGT]i?B|B|examples?|files?|docs?|ba|rows?)/s\b")
# Lines that summarise a whole run (HF Trainer's final dict and metric blocks): not live progress.
_AGGREGATE: Final = re.compile(r"\b(?:avg|ave|average|mean|moving|running|smoothed|ema)\b", re.I)
_SUMMARY: Final = re.compile(r"train_runtime|\bAveraged stats\b")  # HF's final dict; MetricLogger's epoch means
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
     "update", "updates", "trainer/global_step", "iter(train)", "optimizer_step", "acc_iter", "cur_iter",
     "global_iter", "global_iteration", "cur_step", "curr_step", "current_step", "iter_num", "step_num"}
)  # fmt: skip
# Settings that declare how many optimizer steps a run takes, as trainers print them in their argument dumps and
# headers: HF Trainer / accelerate (max_steps, "Total optimization steps", max_train_steps), nanoGPT (max_iters),
# detectron2 / yacs (MAX_ITER), fairseq (max_update), T5X / TF (train_steps, num_train_steps) and schedulers
# (num_training_steps, total_steps). A value of 0 or below means "unlimited" in several of them and is ignored.
_DECLARED_TOTAL_KEYS: Final = frozenset(
    {"max_steps", "total_optimization_steps", "max_train_steps", "max_iters", "max_iter", "max_update",
     "train_steps", "num_train_steps", "num_training_steps", "total_steps", "total_training_steps",
     "max_iterations", "total_iters"}
)  # fmt: skip
_MAX_EPOCH_KEYS: Final = frozenset({"max_epochs"})  # Lightning's setting, as its Trainer prints it
# Words that name a loop position only when a counter ``n/N`` or a bracketed index follows them ("Batch 20/500", DLRM's
# "it 960/306969", MXNet's "Batch [200]"): alone they are no step ("batch 32" is a size).
_COUNTER_STEP_KEYS: Final = frozenset({"batch", "batches", "it", "its"})
# Rates of training steps (a bar's "it/s" is handled with the bar): the step time is their inverse.
_STEP_RATE_KEYS: Final = frozenset({"ups", "steps_per_s", "steps_per_sec", "steps_per_second", "it_s", "iters_per_s"})
_STEP_RATE_KEY: Final = re.compile(r"(?:\w+_)?(?:steps?|iters?|updates?)/s(?:ec)?")  # TF's "global_step/sec: 2.2"
_STEP_RATE_UNITS: Final = frozenset({"steps/s", "step/s", "steps/sec", "iters/s", "iter/s", "updates/s"})
_EPOCH_KEYS: Final = frozenset({"epoch", "ep", "train/epoch", "epoch(train)", "trainer/epoch"})
_STEP_TIME_KEYS: Final = frozenset(
    {"time", "step_time", "iter_time", "iteration_time", "batch_time", "time_per_step", "time_per_iter",
     "elapsed_time_per_iteration", "train/step_time", "sec_per_iter", "s_per_iter", "step_time_s",
     "time_per_iteration", "secs_per_step", "sec_per_step", "train_step_time", "batch_cost"}
)  # fmt: skip
_SAMPLES_KEYS: Final = frozenset(
    {"samples_per_s", "samples_per_sec", "samples_per_second", "throughput", "currsamplespersec",
     "curr_samples_per_sec",
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
    "/s": "samples_per_s",  # timm: "139.14/s" images per second
    "samples/s": "samples_per_s", "samples/sec": "samples_per_s", "sample/s": "samples_per_s",
    "img/s": "samples_per_s", "imgs/s": "samples_per_s", "images/s": "samples_per_s", "img/sec": "samples_per_s",
    "imgs/sec": "samples_per_s", "images/sec": "samples_per_s", "examples/s": "samples_per_s",
    "examples/sec": "samples_per_s", "ex/s": "samples_per_s",
    "tok/s": "tokens_per_s", "tokens/s": "tokens_per_s", "tokens/sec": "tokens_per_s", "tok/sec": "tokens_per_s",
}  # fmt: skip
_STEP_TIME_UNITS: Final = {"ms/step": 0.001, "us/step": 1e-6, "\u00b5s/step": 1e-6, "ms/it": 0.001, "ms/iter": 0.001,
                           "s/step": 1.0, "s/iter": 1.0}  # fmt: skip


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
    counter_after_epoch: bool = False  # the counter follows the line's epoch index: it counts that epoch's batches
    named_by: str = "rules"
    _metrics: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def is_progress(self) -> bool:
        """Whether lines of this template report training progress."""
        if self.is_eval or self.is_summary:
            return False
        named = {s.metric for s in self.slots if s.kind != "declared"}
        return bool(named - {"epoch", "total_epochs", "lr", "global_batch_size"})

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
                "cae": self.counter_after_epoch,
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
            counter_after_epoch=d.get("cae", False),
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
    key = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", words.strip()).lower()  # SamplesPerSec → samples_per_sec
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
        (frozenset({"global_batch_size", "total_batch_size", "global_batch"}), "global_batch_size"),
    )
    for keys, metric in table:
        if key in keys:
            return metric
    for prefix in ("train_", "train/", "training_"):  # "train_lr" (DeiT), "train/epoch": the training split's own
        if key.startswith(prefix) and len(key) > len(prefix):
            return _metric_for_key(key[len(prefix) :])
    if re.fullmatch(r"(?!(?:val|valid|eval|test|dev)_?)[a-z0-9]{0,12}_?loss", key):
        return "loss"  # "closs", "lm_loss", "ce_loss": a training loss by its name (not "val_loss")
    # "learning rate" → learning_rate; "global step" → global_step (already normalised)
    return None


def _declared_total(words: str, keys: frozenset[str] = _DECLARED_TOTAL_KEYS) -> bool:
    """Whether the words before a number name a run's planned number of steps (the last one to four words)."""
    parts = words.split()
    return any(_normalise_key(" ".join(parts[i:])) in keys for i in range(max(0, len(parts) - 4), len(parts)))


_LINKING: Final = frozenset({"to", "is", "now", "was", "becomes", "at"})


def _metric_for_words(words: str) -> Metric | None:
    """Metric named by the words before a number: the longest phrase that names one (a linking word after the name
    is not part of it: Keras's "setting learning rate to 0.001", "loss is 0.52", "step at 59000")."""
    parts = words.split()
    while len(parts) > 1 and parts[-1].lower() in _LINKING:
        parts.pop()
    for i in range(len(parts)):
        metric = _metric_for_key(_normalise_key(" ".join(parts[i:])))
        if metric is not None:
            return metric
    return None


def _unkeyed_counter(line: str, start: int, end: int, bar: bool) -> bool:
    """Whether an un-named ``n/N`` at [start, end) is a loop counter by its position."""
    before = line[:start].rstrip(" ")
    after = line[end:]  # the text after N
    if bar and (before.endswith(("|", "%")) or (before and _BAR_GLYPHS.fullmatch(before[-1]) is not None)):
        return True  # tqdm "| n/N [" (or "45% n/N [" when a notebook drops the bar), rich/keras "━━━ n/N"
    if not before.strip() and re.match(r"\s+(?:-|\S*[━#=]|\[[=.>]+\])", after):
        return True  # keras "n/N - 11s - …" / "n/N ━━━…"
    return before.endswith("][") or (before.endswith("[") and after.startswith("]"))


def _after_epoch(line: str, slots: list[Slot], matches: list[re.Match[str]], i: int) -> bool:
    """Whether the ``n/N`` at number ``i`` follows the line's epoch number directly ("epoch 3  120/500")."""
    if i == 0 or not slots or slots[-1].index != i - 1 or slots[-1].metric != "epoch":
        return False
    return re.fullmatch(r"[\s:|\]\[]{1,8}", line[matches[i - 1].end() : matches[i].start()]) is not None


def _counter_follows_epoch(line: str, slots: list[Slot], matches: list[re.Match[str]]) -> bool:
    """Whether the line's loop counter comes right after its epoch index ("Epoch [3][150/2500]")."""
    counter = next((x.index for x in slots if x.kind == "counter" and x.metric == "step"), None)
    if counter is None or not any(x.metric == "epoch" and x.index == counter - 1 for x in slots):
        return False
    epoch = counter - 1
    return re.fullmatch(r"[\s:|\]\[]{1,8}", line[matches[epoch].end() : matches[counter].start()]) is not None


def _is_count_pair(line: str, matches: list[re.Match[str]], i: int) -> bool:
    a, b = matches[i].group(), matches[i + 1].group()
    between = line[matches[i].end() : matches[i + 1].start()]
    return re.fullmatch(r"\s*/\s*", between) is not None and a.isdigit() and b.isdigit() and 0 <= int(a) <= int(b)


def _nested_counter(line: str, matches: list[re.Match[str]], i: int) -> int | None:
    """Index of an inner ``n/N`` counter after the one at ``i`` when the line prints two (epoch, then step)."""
    if not _is_count_pair(line, matches, i):
        return None
    outer_total = int(matches[i + 1].group())
    for j in range(i + 2, len(matches) - 1):
        if _is_count_pair(line, matches, j):
            return j if int(matches[j + 1].group()) > outer_total else None
    return None


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
    exact_loss: set[int] = set()
    aggregated: set[int] = set()  # losses averaged over a window: the step's own loss is preferred
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
        if (
            metric == "loss"
            and key_m
            and any(
                _normalise_key(" ".join(key_m.group(1).split()[k:])) in _LOSS_KEYS
                for k in range(len(key_m.group(1).split()))
            )
        ):
            exact_loss.add(i)
        if metric == "loss" and key_m and _AGGREGATE.search(" ".join(key_m.group(1).split()[-3:])):
            aggregated.add(i)
        key_unit = (key_m.group(2) or "").strip(" ()") if key_m else ""
        if key_m and not unit and not is_counter and _declared_total(key_m.group(1)):
            slots.append(Slot(i, "total_steps", "declared"))
            continue
        if key_m and not unit and not is_counter and not is_bar and _declared_total(key_m.group(1), _MAX_EPOCH_KEYS):
            slots.append(Slot(i, "total_epochs", "declared"))  # "`max_epochs=2` reached": the run's epoch count
            continue
        if (
            metric is None
            and key_m
            and _normalise_key(key_m.group(1).split()[-1]) in _COUNTER_STEP_KEYS
            and (is_counter or re.search(r"\[\s*$", line[max(0, start - 4) : start]) is not None)
        ):
            metric = "step"  # "Batch 20/500", MXNet's "Batch [200]": a position the loop's word names
        if metric == "epoch" and ds_epoch is not None and ds_epoch.start() <= start < ds_epoch.end():
            continue
        if unit in ("it/s", "s/it") and metric is None:
            if is_bar:
                slots.append(Slot(i, "step_time_s", "bar_rate", invert=unit == "it/s"))
            continue
        rate_key = _normalise_key(key_m.group(1)).rsplit("_", 1)[-1] if key_m and metric is None else ""
        per_step = key_m is not None and metric is None and _STEP_RATE_KEY.fullmatch(_normalise_key(key_m.group(1)))
        if unit in _STEP_RATE_UNITS or (not unit and (rate_key in _STEP_RATE_KEYS or per_step)):
            slots.append(Slot(i, "step_time_s", "keyed", invert=True))  # "0.93 steps/s", "ups=2.11"
            continue
        if unit in _STEP_TIME_UNITS and metric in (None, "step_time_s"):
            slots.append(Slot(i, "step_time_s", "keyed", scale=_STEP_TIME_UNITS[unit]))
            continue
        if unit in _RATE_UNITS and metric in (None, "samples_per_s", "tokens_per_s"):
            slots.append(Slot(i, _RATE_UNITS[unit], "keyed"))  # type: ignore[arg-type]
            continue
        if metric == "step_time_s" and (re.match(r":\d\d", after) or (not unit and re.match(r"[A-Za-z]", after))):
            continue  # "Total time: 1:52:15" is a duration on a clock, "[time] 0.4m" one in another unit: no step time
        if metric is not None:
            if metric == "step_time_s":
                scale = 0.001 if (unit == "ms" or key_unit == "ms") else 1.0
                if unit not in ("", "ms", "s", "sec"):
                    continue
                slots.append(Slot(i, metric, "keyed", scale=scale))
                continue
            if unit and unit not in ("s", "sec"):
                continue  # a count with a unit (%, GB, …) is not a training metric
            if metric == "step" and "." in m.group() and not is_counter:
                slots.append(Slot(i, "step_time_s", "keyed"))  # OpenPCDet's "Iter: 2.13 (2.56)": an iteration's
                continue  # time in seconds; a step count is never fractional
            if metric == "step" and re.match(r"[kKM](?![\w/])", after):
                slots.append(Slot(i, "step", "keyed", scale=1e6 if after[0] == "M" else 1e3))  # "Step: 425k"
                continue
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
        if is_counter and counter_total is None and not any(x.metric == "epoch" for x in slots):
            inner = _nested_counter(line, matches, i)
            if inner is not None:  # "1/3 ... [ 149/323 ...]": the outer loop is the epoch, the inner the step
                slots += [Slot(i, "epoch", "keyed"), Slot(i + 1, "total_epochs", "keyed"),
                          Slot(inner, "step", "counter"), Slot(inner + 1, "total_steps", "counter")]  # fmt: skip
                taken.update({i + 1, inner, inner + 1})
                counter_total = inner + 1
                continue
        if (
            metric is None
            and not is_counter
            and counter_total is None
            and i + 2 < len(matches)
            and re.fullmatch(r"\s*\[\s*", line[end : matches[i + 1].start()])
            and _is_count_pair(line, matches, i + 1)
            and not any(x.metric == "epoch" for x in slots)
        ):
            slots.append(Slot(i, "epoch", "keyed"))  # "Train: 0 [ 120/2502": the loop index before the counter
            continue
        if (
            is_counter
            and counter_total is None
            and (_unkeyed_counter(line, start, matches[i + 1].end(), is_bar) or _after_epoch(line, slots, matches, i))
        ):
            slots.append(Slot(i, "step", "counter"))
            slots.append(Slot(i + 1, "total_steps", "counter"))
            taken.add(i + 1)
            counter_total = i + 1
    loss_slots = [x for x in slots if x.metric == "loss"]
    if len(loss_slots) > 1:  # "loss=10.9, nll_loss=10.1": the one named exactly a loss key wins
        exact = [x for x in loss_slots if x.index in exact_loss]
        if exact:
            slots = [x for x in slots if x.metric != "loss" or x.index in exact_loss]
        plain = [x for x in slots if x.metric == "loss" and x.index not in aggregated]
        if plain and len(plain) < len([x for x in slots if x.metric == "loss"]):  # "loss 3.9 - moving ave loss 4.1"
            slots = [x for x in slots if x.metric != "loss" or x.index not in aggregated]
    return TemplateSpec(
        n_numbers=len(matches),
        slots=tuple(slots),
        is_eval=is_eval,
        is_summary=is_summary,
        is_bar=is_bar,
        counter_total_index=counter_total,
        counter_after_epoch=_counter_follows_epoch(line, slots, matches),
    )
