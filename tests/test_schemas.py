"""Unit tests: the event contract (models, keys, validation, JSON Schema export)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedmate.schemas import ALL_TOPICS, InvalidEventError, SchedMateError, export_json_schemas, topic_by_name
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from schedmate.schemas.logs_chunks import LogChunk


def test_every_topic_has_a_versioned_frozen_model_and_a_key() -> None:
    """Ten topics, each frozen with schema_version and a key field that exists on the model."""
    assert {t.name for t in ALL_TOPICS} == {
        "jobs.submitted", "jobs.events", "logs.chunks", "gpu.samples", "jobs.metadata", "jobs.estimates",
        "jobs.metrics", "jobs.failures", "scheduler.actions", "deadletter",
    }  # fmt: skip
    for t in ALL_TOPICS:
        assert t.model.model_config.get("frozen") is True
        assert "schema_version" in t.model.model_fields
        assert t.key_field in t.model.model_fields
    assert topic_by_name("gpu.samples").key_field == "node"


def test_round_trip_and_key() -> None:
    """An event survives encode/decode and is keyed by its job id."""
    c = LogChunk(job_id="j1", seq=3, first_line=10, lines=["a", "b"])
    assert CHUNKS.decode(c.to_bytes()) == c
    assert CHUNKS.key_of(c) == b"j1"
    assert c.last_line == 11


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"not json", "Invalid JSON"),
        (b'{"job_id": "j", "seq": -1, "first_line": 1, "lines": ["x"]}', "seq"),
        (b'{"job_id": "j", "seq": 0, "first_line": 1, "lines": ["a\\nb"]}', "must not contain"),
        (b'{"job_id": "j", "seq": 0, "first_line": 1, "lines": ["x"], "bogus": 1}', "bogus"),
        (b'{"schema_version": 99, "job_id": "j", "seq": 0, "first_line": 1, "lines": ["x"]}', "upgrade"),
        (None, "tombstone"),
    ],
)
def test_invalid_chunks_raise_with_the_reason(raw: bytes | None, fragment: str) -> None:
    """Malformed bytes raise InvalidEventError saying what is wrong."""
    with pytest.raises(InvalidEventError, match=fragment):
        CHUNKS.decode(raw)


def test_finished_event_requires_status() -> None:
    """A finished lifecycle event must say completed, failed or cancelled."""
    with pytest.raises(InvalidEventError, match="status"):
        EVENTS.decode(b'{"job_id": "j", "kind": "finished"}')
    ok = JobEvent(job_id="j", kind="finished", status="failed", exit_code=1)
    assert EVENTS.decode(ok.to_bytes()).status == "failed"


def test_unknown_topic_lists_the_known_ones() -> None:
    """Asking for a topic that does not exist names the real ones."""
    with pytest.raises(SchedMateError, match="jobs.metrics"):
        topic_by_name("jobs.metric")


def test_json_schema_export(tmp_path: Path) -> None:
    """One JSON Schema per topic, annotated with topic and key."""
    paths = export_json_schemas(tmp_path)
    assert len(paths) == len(ALL_TOPICS)
    schema = json.loads((tmp_path / "logs.chunks.schema.json").read_text())
    assert schema["x-topic"] == "logs.chunks"
    assert schema["x-key"] == "job_id"
    assert {"job_id", "seq", "first_line", "lines"} <= set(schema["properties"])


def test_domain_results_and_their_events_cannot_drift() -> None:
    """What the tracker and estimator return maps field by field onto jobs.metrics and jobs.estimates."""
    from dataclasses import fields  # noqa: PLC0415

    from schedmate.agents.advisor.estimator import Estimate  # noqa: PLC0415
    from schedmate.agents.tracker.progress import ProgressSnapshot  # noqa: PLC0415
    from schedmate.schemas.jobs_estimates import JobEstimate  # noqa: PLC0415
    from schedmate.schemas.jobs_metrics import JobMetrics  # noqa: PLC0415

    snapshot = [f.name for f in fields(ProgressSnapshot)]
    assert set(snapshot) - {"line"} <= set(JobMetrics.model_fields) and "progress_line" in JobMetrics.model_fields
    event = [n for n in JobEstimate.model_fields if n not in ("schema_version", "job_id", "ts")]
    assert [f.name for f in fields(Estimate)] == event
