"""Property/fuzz runs over every input a worker consumes: topic decoders, the chunker, diagnose, metrics, advise.

Each property says: whatever the bytes, the code either returns a valid result or raises the one documented
error — nothing else escapes to take a worker down. ``SCHEDMATE_FUZZ_EXAMPLES`` (default 200) sets the cases
per property; the closing figures of the hardening issue used 5,000.
"""

from __future__ import annotations

import json
import os
import string
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedmate.agents.advisor.extract.budget import Budget
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.failures.diagnosis import diagnose_lines
from schedmate.agents.tracker.metric_tracker import MetricTracker
from schedmate.connectors.chunker import LineChunkStream
from schedmate.schemas import InvalidEventError, gpu_samples, jobs_events, jobs_failures, jobs_submitted, logs_chunks
from schedmate.schemas.logs_chunks import LogChunk
from schedmate.schemas.track_state import JobState

EXAMPLES = int(os.environ.get("SCHEDMATE_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
CONSUMED = [logs_chunks.TOPIC, jobs_events.TOPIC, jobs_submitted.TOPIC, gpu_samples.TOPIC, jobs_failures.TOPIC]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=12), kids, max_size=6),
    max_leaves=30,
)
VALID = {
    "logs.chunks": {"job_id": "j", "seq": 0, "first_line": 1, "lines": ["step 1 loss 0.5"]},
    "jobs.events": {"job_id": "j", "kind": "finished", "status": "failed", "exit_code": 1, "node": "n1"},
    "jobs.submitted": {"job_id": "j", "command": ["python", "train.py"], "workdir": "/tmp", "num_gpus": 2},
    "gpu.samples": {"node": "n1", "gpu_index": 0, "xid_events": [79]},
    "jobs.failures": {"diagnosis_id": "d", "job_id": "j", "category": "other", "confidence": 0.5},
}


@st.composite
def mutated_events(draw: Any) -> tuple[Any, bytes]:
    """A valid event of a consumed topic with one field replaced by anything, or raw bytes."""
    spec = draw(st.sampled_from(CONSUMED))
    base = dict(VALID[spec.name])
    if draw(st.booleans()):
        key = draw(st.sampled_from([*base, "schema_version", "extra_field"]))
        base[key] = draw(json_values)
        raw = json.dumps(base, allow_nan=True).encode()
    else:
        raw = draw(st.binary(max_size=300))
    return spec, raw


@FUZZ
@given(mutated_events())
def test_consumed_topic_decoders_accept_or_reject_cleanly(case: tuple[Any, bytes]) -> None:
    """Any bytes on a consumed topic decode to a valid event or raise InvalidEventError (→ deadletter)."""
    spec, raw = case
    try:
        event = spec.decode(raw)
    except InvalidEventError:
        return
    assert spec.decode(event.to_bytes()) == event  # what is accepted round-trips


@FUZZ
@given(st.one_of(st.binary(max_size=300), json_values.map(lambda v: json.dumps(v, allow_nan=True).encode())))
def test_track_state_records_load_or_raise_documented_errors(raw: bytes) -> None:
    """A track.state record loads or raises what recovery dead-letters (ValueError/TypeError/ValidationError)."""
    from pydantic import ValidationError  # noqa: PLC0415

    try:
        JobState.of_record("j", json.loads(raw))
    except (ValueError, TypeError, ValidationError):
        return


LOG_ALPHABET = string.printable + "\x00\x1b\x08é█\u2028"


@FUZZ
@given(st.lists(st.binary(max_size=2000) | st.text(LOG_ALPHABET, max_size=300).map(str.encode), max_size=30))
def test_the_chunker_numbers_every_line_once(pieces: list[bytes]) -> None:
    """Any byte stream → valid chunks with contiguous line numbers and byte ranges that tile the stream."""
    stream = LineChunkStream("j", max_lines=7)
    cuts = [c for p in pieces for c in stream.feed(p)]
    cuts += stream.finish()
    next_line, pos = 1, 0
    for cut in cuts:
        chunk = LogChunk.model_validate_json(cut.chunk.to_bytes())
        if chunk.lines:
            assert chunk.first_line == next_line
            next_line = chunk.last_line + 1
        assert cut.start == pos and cut.end >= cut.start
        pos = cut.end
    data = b"".join(pieces)
    assert next_line - 1 == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


SIGNAL_WORDS = ["Traceback (most recent call last):", '  File "/x/train.py", line 3, in f', "RuntimeError: x",
                "NCCL WARN", "Xid 79", "step 10 | loss 0.5", "CUDA out of memory", "nvlink", "Killed", "-> 6",
                "ECC", "[rank0]: ", "\r", "hostname gpu-1", "exitcode: -9", "ValueError:", "No such file"]  # fmt: skip


@FUZZ
@given(st.lists(st.lists(st.sampled_from(SIGNAL_WORDS) | st.text(LOG_ALPHABET, max_size=60), max_size=6)
                .map(" ".join), max_size=120))  # fmt: skip
def test_diagnose_and_metrics_never_raise(lines: list[str]) -> None:
    """Any log (signature fragments, tracebacks, bars, control bytes) diagnoses and parses without raising."""
    started = time.perf_counter()
    d = diagnose_lines(lines, allocation=["n1"])
    assert d.first_error_line is None or 1 <= d.first_error_line <= len(lines)
    assert d.faulty_node in (None, "n1")
    assert d.action != "drain_node_and_requeue"  # one log alone never drains a node
    t = MetricTracker()
    t.feed("j", 1, lines)
    t.snapshot("j")
    assert time.perf_counter() - started < 5.0


SNIPPETS = ["import torch.nn as nn", "model = nn.Linear(10, 10)", "lr = 3e-4", "x = [1] * 10", "xs.extend(xs)",
            "for _ in range(99):", "    pass", "def f():", "    return f()", "batch_size: 32", "a: &a [1, 2]",
            "b: [*a, *a]", "defaults:", "  - model: m", "A=$A$A", "python train.py --lr 0.1", "${x}",
            "max_steps = 10**400", "import hydra", "@hydra.main(config_path='c', config_name='t')", "'", '"', "\\"]  # fmt: skip
FILES = ["train.py", "config.yaml", "run.sh", "c/t.yaml", "c/model/m.yaml", "ds.json"]


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(FILES),
        st.lists(st.sampled_from(SNIPPETS) | st.text(max_size=30), max_size=12).map("\n".join),
        max_size=4,
    ),
    st.sampled_from(
        [
            "python train.py",
            "bash run.sh",
            "python train.py --config config.yaml",
            "torchrun --nproc_per_node=4 train.py",
            "python train.py 'unbalanced",
        ]
    ),
)
def test_advise_extraction_never_raises(files: dict[str, str], command: str) -> None:
    """Any small workspace and command: static extraction returns metadata within its budget."""
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        started = time.perf_counter()
        meta = extract_metadata(root, command, budget=Budget(time_s=2.0))
        assert time.perf_counter() - started < 4.0
        assert meta.num_gpus is None or 0 <= meta.num_gpus <= 1 << 20
