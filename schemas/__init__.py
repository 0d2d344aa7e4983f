"""The contract: one versioned event model per topic, and their JSON Schemas.

``ALL_TOPICS`` are the topics subscribers see; ``INTERNAL_TOPICS`` hold agents' own state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedmate.schemas import (
    deadletter,
    gpu_samples,
    jobs_estimates,
    jobs_events,
    jobs_failures,
    jobs_metadata,
    jobs_metrics,
    jobs_submitted,
    logs_chunks,
    scheduler_actions,
    track_state,
)
from schedmate.schemas._base import Event, TopicSpec
from schedmate.schemas.exceptions import InvalidEventError, SchedMateError

__all__ = [
    "ALL_TOPICS",
    "INTERNAL_TOPICS",
    "Event",
    "InvalidEventError",
    "SchedMateError",
    "TopicSpec",
    "export_json_schemas",
    "topic_by_name",
]

ALL_TOPICS: tuple[TopicSpec[Any], ...] = (
    jobs_submitted.TOPIC,
    jobs_events.TOPIC,
    logs_chunks.TOPIC,
    gpu_samples.TOPIC,
    jobs_metadata.TOPIC,
    jobs_estimates.TOPIC,
    jobs_metrics.TOPIC,
    jobs_failures.TOPIC,
    scheduler_actions.TOPIC,
    deadletter.TOPIC,
)
INTERNAL_TOPICS: tuple[TopicSpec[Any], ...] = (track_state.TOPIC,)


def topic_by_name(name: str) -> TopicSpec[Any]:
    """The topic spec called ``name``; raises with the known names otherwise."""
    for t in ALL_TOPICS:
        if t.name == name:
            return t
    known = ", ".join(t.name for t in ALL_TOPICS)
    raise SchedMateError(f"unknown topic {name!r}; known topics: {known}")


def export_json_schemas(folder: Path) -> list[Path]:
    """Write one ``<topic>.schema.json`` per topic into ``folder``; return the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for t in ALL_TOPICS:
        p = folder / f"{t.name}.schema.json"
        p.write_text(json.dumps(t.json_schema(), indent=2, sort_keys=True) + "\n")
        paths.append(p)
    return paths
