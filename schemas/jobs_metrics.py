"""jobs.metrics: live training progress of a running job, at most once per job per interval."""

from __future__ import annotations

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, now

__all__ = ["TOPIC", "JobMetrics"]


class JobMetrics(Event):
    """Latest progress of a job and its rates over the last window.

    Values are the latest each log printed (null where never printed). ``steps_per_s``
    and ``lines_per_s`` are measured over ``[window_start, window_end]``.
    """

    job_id: str = Field(min_length=1, max_length=256)
    window_start: float
    window_end: float
    step: int | None = None
    total_steps: int | None = None
    epoch: float | None = None
    loss: float | None = Field(
        default=None,
        description='latest training loss; "NaN", "Infinity" or "-Infinity" when the loss diverged',
        json_schema_extra={"anyOf": [{"type": "number"}, {"enum": ["NaN", "Infinity", "-Infinity"]}, {"type": "null"}]},
    )
    lr: float | None = None
    step_time_s: float | None = None
    samples_per_s: float | None = None
    tokens_per_s: float | None = None
    eta_s: float | None = None
    steps_per_s: float | None = None
    progress_line: int | None = Field(default=None, description="1-based line of the latest progress line")
    lines_in_window: int = 0
    lines_total: int = 0
    error_lines: int = 0
    warning_lines: int = 0
    last_error: str | None = None
    worker: str | None = Field(default=None, description="host:pid of the worker that emitted it")
    ts: float = Field(default_factory=now)


TOPIC = TopicSpec("jobs.metrics", JobMetrics, "job_id", description=JobMetrics.__doc__ or "")
