"""Per-job training progress built from progress lines (the Metric Tracker's state).

:class:`JobProgress` keeps the latest value of every metric, learns per job whether a
loop counter restarts every epoch (Lightning, Keras, MMEngine print the step within the
epoch) and which progress bar is the training loop (evaluation bars run inside it), and
turns that into a :class:`ProgressSnapshot`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from schedmate.agents.logtext.slots import TemplateSpec

__all__ = ["JobProgress", "ProgressSnapshot"]


@dataclass(frozen=True, slots=True)
class ProgressSnapshot:
    """The latest progress of one job (the ``schedmate metrics`` contract)."""

    step: int | None = None
    total_steps: int | None = None
    epoch: float | None = None
    loss: float | None = None
    lr: float | None = None
    step_time_s: float | None = None
    samples_per_s: float | None = None
    tokens_per_s: float | None = None
    eta_s: float | None = None
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain dict in the documented key order."""
        return asdict(self)


def _as_float(v: Any) -> float | None:
    """A stored metric value: numbers, and the "NaN"/"Infinity" strings non-finite floats travel as."""
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def _per_second(batch: float | None, step_time: float | None) -> float | None:
    """Samples per second from the global batch and the step time (Megatron prints both, not the rate)."""
    return None if batch is None or not step_time else round(batch / step_time, 6)


def _as_int(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


@dataclass(slots=True)
class _CounterFamily:
    """Everything seen of one ``n/N`` counter total within a job."""

    per_epoch: bool = False
    last_epoch: float | None = None
    last_n: float | None = None


@dataclass(slots=True)
class JobProgress:
    """Mutable progress state of one job; feed it lines' specs and numbers in order."""

    latest: dict[str, float] = field(default_factory=dict)
    line: int | None = None
    min_epoch: float | None = None
    main_bar_total: float | None = None
    max_keyed_step: float | None = None
    counters: dict[float, _CounterFamily] = field(default_factory=dict)
    progress_lines: int = 0
    printed_step_time: bool = False  # the log prints its own step time: never derive one from timestamps
    time_anchor: tuple[float, float] | None = None  # (time, step) of the latest progress line with a new step
    declared_total: float | None = None  # the run's planned steps as its settings print them ("max_steps: 3000")
    declared_epochs: float | None = None  # the run's epochs as Lightning prints them ("`max_epochs=3` reached")

    def update(self, spec: TemplateSpec, numbers: list[float], line_no: int) -> bool:
        """Apply one line; return True if it carried training progress."""
        if spec.is_eval or spec.is_summary or not spec.slots:
            return False
        values: dict[str, float] = {}
        counter_n: float | None = None
        counter_total: float | None = None
        for slot in spec.slots:
            if slot.index >= len(numbers):
                return False
            v = slot.value(numbers[slot.index])
            if v is None or ((math.isnan(v) or math.isinf(v)) and slot.metric != "loss"):
                continue  # a non-finite loss is news (divergence); any other non-finite value is noise
            if slot.kind == "declared":
                if v > 0 and float(v).is_integer():
                    if slot.metric == "total_epochs":
                        self.declared_epochs = v
                    else:
                        self.declared_total = v
                continue
            if slot.kind == "counter":
                if slot.metric == "step":
                    counter_n = v
                else:
                    counter_total = v
                continue
            if slot.kind == "bar_rate" and spec.counter_total_index is None and not spec.is_bar:
                continue
            values[slot.metric] = v
        if "epoch" in values:
            e = values["epoch"]
            self.min_epoch = e if self.min_epoch is None else min(self.min_epoch, e)
        if "step" in values:
            s = values["step"]
            self.max_keyed_step = s if self.max_keyed_step is None else max(self.max_keyed_step, s)
        if spec.is_bar and counter_total is not None:
            if self.main_bar_total is not None and counter_total < self.main_bar_total:
                return False  # a nested loop (evaluation) inside the training bar
            self.main_bar_total = counter_total
        elif spec.is_bar and counter_n is None and "step_time_s" in values and self.main_bar_total is not None:
            values.pop("step_time_s")  # a bar rate without its counter: cannot tell which loop
        if counter_n is not None and counter_total is not None:
            counted = self._counter_step(
                counter_n, counter_total, values.get("epoch"), spec.counter_after_epoch, values.get("total_epochs")
            )
            if "step" in values:  # the line names its step ("num_updates=645"): the loop counter is not it
                counted = {}
            values.update(counted)
        core = values.keys() - {"epoch", "total_epochs", "global_batch_size"}
        if "step_time_s" in values:
            self.printed_step_time = True
        self.latest.update(values)
        if core:
            self.line = line_no
            self.progress_lines += 1
        return bool(core)

    def note_time(self, when: float | None) -> None:
        """The time a progress line was printed: step time from timestamps when the log prints none.

        Step time is the time between the latest two progress lines with different steps, divided by the
        steps between them. A clock without a date that goes backwards has passed midnight.
        """
        step = self.latest.get("step")
        if when is None or step is None:
            return
        anchor = self.time_anchor
        if anchor is not None:
            t0, s0 = anchor
            if step == s0:
                return
            if when < t0 and t0 - when > 43_200 and t0 < 86_400 * 2:
                when += 86_400
            if step > s0 and when >= t0 and not self.printed_step_time:
                self.latest["step_time_s"] = (when - t0) / (step - s0)
        self.time_anchor = (when, step)

    def _counter_step(
        self,
        n: float,
        total: float,
        line_epoch: float | None,
        within_epoch: bool = False,
        line_epochs: float | None = None,
    ) -> dict[str, float]:
        """Global step (and total) from a counter that may restart every epoch (``within_epoch``: the line prints
        it right after its epoch index, "Epoch [3][150/2500]", so it counts batches of that epoch). A line whose
        epoch total is one less than the run's declared epochs ("Epoch 1/1" of ``max_epochs=2``: Lightning's bar
        counts epochs from 0 up to the last index) counts the batches of that 0-based epoch."""
        fam = self.counters.setdefault(total, _CounterFamily())
        zero_based = (
            self.declared_epochs is not None and line_epochs is not None and line_epochs == self.declared_epochs - 1
        )
        if zero_based:
            fam.per_epoch = True
        if within_epoch and line_epoch is not None and line_epoch > 1:  # epoch 2+: the counter has restarted
            fam.per_epoch = True
        epoch = line_epoch if line_epoch is not None else self.latest.get("epoch")
        restarted = (
            epoch is not None and fam.last_epoch is not None and fam.last_n is not None
            and epoch > fam.last_epoch and n <= fam.last_n
        )  # fmt: skip
        if restarted:
            fam.per_epoch = True
        if (
            not fam.per_epoch
            and epoch is not None
            and self.max_keyed_step is not None
            and self.max_keyed_step > n
            and epoch > (self.min_epoch or 0)
        ):
            fam.per_epoch = True  # an explicit global step already exceeds this counter
        fam.last_epoch, fam.last_n = epoch, n
        if fam.per_epoch and epoch is not None and float(epoch).is_integer():
            base = 0.0 if self.min_epoch == 0 or zero_based else 1.0
            out = {"step": (epoch - base) * total + n}
            if zero_based and self.declared_epochs is not None:
                out["total_steps"] = self.declared_epochs * total
            elif "total_epochs" in self.latest:
                epochs = self.latest["total_epochs"] + (1 - base if base == 0 else 0)
                out["total_steps"] = epochs * total
            return out
        return {"step": n, "total_steps": total}

    def snapshot(self) -> ProgressSnapshot:
        """The current progress, with an ETA when the total is known."""
        g = self.latest.get
        step, total, st = g("step"), g("total_steps"), g("step_time_s")
        if total is None and step is not None and self.declared_total is not None and self.declared_total >= step:
            total = self.declared_total  # no counter says n/N: the planned length the run declared
        eta = None
        if step is not None and total is not None and st is not None and total >= step:
            eta = round((total - step) * st, 3)
        return ProgressSnapshot(
            step=None if step is None else int(step),
            total_steps=None if total is None else int(total),
            epoch=None if g("epoch") is None else _as_int(g("epoch")),  # type: ignore[arg-type]
            loss=g("loss"),
            lr=g("lr"),
            step_time_s=None if st is None else round(st, 9),
            samples_per_s=g("samples_per_s")
            if g("samples_per_s") is not None
            else _per_second(g("global_batch_size"), st),
            tokens_per_s=g("tokens_per_s"),
            eta_s=eta,
            line=self.line,
        )

    def to_state(self) -> dict[str, Any]:
        """A JSON-able copy for durable per-job state."""
        return {
            "latest": self.latest,
            "line": self.line,
            "min_epoch": self.min_epoch,
            "main_bar_total": self.main_bar_total,
            "max_keyed_step": self.max_keyed_step,
            "counters": {str(k): [c.per_epoch, c.last_epoch, c.last_n] for k, c in self.counters.items()},
            "progress_lines": self.progress_lines,
            "printed_step_time": self.printed_step_time,
            "time_anchor": self.time_anchor,
            "declared_total": self.declared_total,
            "declared_epochs": self.declared_epochs,
        }

    @classmethod
    def from_state(cls, d: dict[str, Any]) -> JobProgress:
        """Inverse of :meth:`to_state`."""
        return cls(
            latest={k: f for k, v in d.get("latest", {}).items() if (f := _as_float(v)) is not None},
            line=d.get("line"),
            min_epoch=d.get("min_epoch"),
            main_bar_total=d.get("main_bar_total"),
            max_keyed_step=d.get("max_keyed_step"),
            counters={float(k): _CounterFamily(*v) for k, v in d.get("counters", {}).items()},
            progress_lines=d.get("progress_lines", 0),
            printed_step_time=bool(d.get("printed_step_time", False)),
            time_anchor=None if d.get("time_anchor") is None else tuple(d["time_anchor"]),  # type: ignore[arg-type]
            declared_total=_as_float(d.get("declared_total")),
            declared_epochs=_as_float(d.get("declared_epochs")),
        )
