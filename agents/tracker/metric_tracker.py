"""The Metric Tracker: raw log lines in, per-job progress out (no Kafka here).

Hot path per line: clean → template key → cached :class:`TemplateSpec` → pick numbers.
The slow path (:func:`learn_spec`, and the optional slot-naming hook an LLM can fill)
runs once per new template. Template *classes* (error/warning/progress/other) come
from :class:`TemplateClassifier` and are looked up per template, never per line.

Whoever else needs the raw lines (the Failure Handler keeps each job's failure tail) plugs in
a :data:`LineSink`: once per fed chunk it gets the lines and which of them last reported
progress.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from schedmate.agents._lru import LruMap
from schedmate.agents.logtext.lines import clean_line, split_physical_lines, visible_segments
from schedmate.agents.logtext.slots import (
    METRICS_BLOCK_HEADER,
    METRICS_BLOCK_ROW,
    TemplateSpec,
    learn_spec,
    numbers_of,
    template_key,
)
from schedmate.agents.logtext.tables import foreign_table_bar, header_of, label_row
from schedmate.agents.logtext.timestamps import line_time
from schedmate.agents.tracker.progress import JobProgress, ProgressSnapshot

__all__ = ["LineClasses", "LineSink", "MetricTracker", "SlotNamer", "TemplateSpecCache", "metrics_of_file"]

# An LLM (or any other component) may name the slots of a template the rules could not read.
SlotNamer = Callable[[str], TemplateSpec | None]
# (job id, number of the first line, the raw lines, index of the last line that reported progress or None)
LineSink = Callable[[str, int, Sequence[str], int | None], None]


class LineClasses(Protocol):
    """Looks up a template's class; returns None while it is not decided yet."""

    def class_of(self, key: str, line: str) -> str | None:
        """Class of the template ``key`` (error, warning, progress or other)."""
        ...


class TemplateSpecCache:
    """Bounded LRU of template key → spec, shared by every job a worker tracks."""

    def __init__(self, max_entries: int = 50_000, namer: SlotNamer | None = None) -> None:
        self._specs: OrderedDict[str, TemplateSpec] = OrderedDict()
        self._max = max_entries
        self._namer = namer
        self.learned = 0
        self.hits = 0

    def get(self, key: str, line: str) -> TemplateSpec:
        """The spec for ``key``, learning it from ``line`` on a miss."""
        spec = self._specs.get(key)
        if spec is not None:
            self.hits += 1
            return spec
        spec = learn_spec(line)
        if not spec.slots and self._namer is not None and not spec.is_eval:
            named = self._namer(line)
            if named is not None:
                spec = named
        self.learned += 1
        self._specs[key] = spec
        if len(self._specs) > self._max:
            self._specs.popitem(last=False)
        return spec

    def __len__(self) -> int:
        return len(self._specs)


@dataclass(slots=True)
class LineCounts:
    """How many lines of each class a job printed."""

    lines: int = 0
    progress: int = 0
    error: int = 0
    warning: int = 0
    last_error: str | None = None
    undecided: dict[str, str] = field(default_factory=dict)  # template key → latest line, class pending


@dataclass(slots=True)
class _Job:
    progress: JobProgress = field(default_factory=JobProgress)
    counts: LineCounts = field(default_factory=LineCounts)
    in_summary_block: bool = False  # inside a "***** train metrics *****" block
    table_header: tuple[str, ...] | None = None  # the column names of a progress table printed above


class MetricTracker:
    """Tracks many jobs' progress from their log lines."""

    def __init__(
        self,
        specs: TemplateSpecCache | None = None,
        classes: LineClasses | None = None,
        max_jobs: int = 100_000,
        line_sink: LineSink | None = None,
    ) -> None:
        self.specs = specs or TemplateSpecCache()
        self._sink = line_sink
        self._classes = classes
        self._jobs: LruMap[str, _Job] = LruMap(max_jobs)

    def job(self, job_id: str) -> _Job:
        """State of ``job_id`` (created on first use; least recently used jobs are evicted)."""
        return self._jobs.touch(job_id, _Job)

    def restore(self, job_id: str, state: dict[str, object]) -> None:
        """Load a job's durable progress state (after a restart or rebalance)."""
        self.job(job_id).progress = JobProgress.from_state(state)  # type: ignore[arg-type]

    def forget(self, job_id: str) -> None:
        """Drop a finished job's state."""
        self._jobs.pop(job_id, None)

    def feed(self, job_id: str, first_line_no: int, lines: Sequence[str]) -> int:
        """Process raw lines numbered from ``first_line_no``; return how many carried progress."""
        job = self.job(job_id)
        progress, counts = job.progress, job.counts
        classes = self._classes
        n_progress = 0
        line_no = first_line_no - 1
        last_progress: int | None = None
        for raw in lines:
            line_no += 1
            counts.lines += 1
            segments = visible_segments(raw) if ("\r" in raw or "\x08" in raw) else [clean_line(raw)]
            if not segments or not segments[-1]:
                continue
            text = segments[-1]  # what a terminal shows: classified once per line
            if (header := header_of(text)) is not None:
                job.table_header = header
                continue
            if job.table_header is not None:
                if (labelled := label_row(job.table_header, text)) is not None:
                    text = labelled  # a table row, read with its header's names
                elif foreign_table_bar(job.table_header, text):
                    continue  # the validation table's own bar between training epochs
            key = template_key(text)
            cls = None
            if classes is not None:
                cls = classes.class_of(key, text)
                if cls == "error":
                    counts.error += 1
                    counts.last_error = text[:500]
                elif cls == "warning":
                    counts.warning += 1
                elif cls is None and len(counts.undecided) < 1000:
                    counts.undecided[key] = text[:500]
            if text[0] == "*" and METRICS_BLOCK_HEADER.match(text):
                job.in_summary_block = True
                continue
            if job.in_summary_block:
                if METRICS_BLOCK_ROW.match(text):
                    continue
                job.in_summary_block = False
            if len(segments) > 1:
                # Redraws of other templates (a log line overwritten by a bar) count too:
                # the latest redraw of each template, in order, the visible one last.
                latest: dict[str, str] = {}
                for seg in segments[:-1]:
                    latest.pop(k := template_key(seg), None)
                    latest[k] = seg
                latest.pop(key, None)
                for k, seg in latest.items():
                    self._apply(progress, k, seg, line_no, bars=False)
            moved = self._apply(progress, key, text, line_no)
            n_progress += moved
            if moved and cls != "error":
                last_progress = line_no - first_line_no
        counts.progress += n_progress
        if self._sink is not None:
            self._sink(job_id, first_line_no, lines, last_progress)
        return n_progress

    def _apply(self, progress: JobProgress, key: str, text: str, line_no: int, bars: bool = True) -> bool:
        spec = self.specs.get(key, text)
        if not spec.slots or (spec.is_bar and not bars):
            return False
        numbers = numbers_of(text)
        if len(numbers) != spec.n_numbers:
            return False
        moved = progress.update(spec, numbers, line_no)
        if moved:
            progress.note_time(line_time(text))
        return moved

    def feed_partial(self, job_id: str, line_no: int, text: str) -> bool:
        """Apply the visible state of an unfinished line (a live progress bar); counts no line."""
        clean = clean_line(text)
        if not clean:
            return False
        spec = self.specs.get(template_key(clean), clean)
        numbers = numbers_of(clean)
        if not spec.slots or len(numbers) != spec.n_numbers:
            return False
        return self.job(job_id).progress.update(spec, numbers, line_no)

    def settle(self) -> None:
        """Credit lines whose template class was decided after they were fed."""
        if self._classes is None:
            return
        for job in self._jobs.values():
            counts = job.counts
            if not counts.undecided:
                continue
            still: dict[str, str] = {}
            for key, text in counts.undecided.items():
                cls = self._classes.class_of(key, text)
                if cls == "error":
                    counts.error += 1
                    counts.last_error = text
                elif cls == "warning":
                    counts.warning += 1
                elif cls is None:
                    still[key] = text
            counts.undecided = still

    def snapshot(self, job_id: str) -> ProgressSnapshot:
        """Latest progress of ``job_id``."""
        return self.job(job_id).progress.snapshot()


def metrics_of_file(path: Path, tracker: MetricTracker | None = None) -> ProgressSnapshot:
    """Latest progress in a whole log file (the ``schedmate metrics`` path)."""
    tracker = tracker or MetricTracker()
    lines = split_physical_lines(path.read_bytes())
    tracker.feed(str(path), 1, lines)
    return tracker.snapshot(str(path))
