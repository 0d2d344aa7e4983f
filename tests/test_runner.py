"""The local runner against the real broker: lifecycle events and output chunks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from schedmate.connectors.exceptions import ConnectorError
from schedmate.connectors.publisher import Publisher
from schedmate.connectors.runner import run_job
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas.jobs_events import TOPIC as EVENTS
from schedmate.schemas.jobs_submitted import TOPIC as SUBMITTED
from schedmate.schemas.logs_chunks import TOPIC as CHUNKS
from tests.conftest import collect

pytestmark = pytest.mark.integration

SCRIPT = """
import sys, time
for i in range(1, 6):
    print(f"step={i} loss={1 / i:.3f}", flush=True)
sys.stdout.write("\\r 50%|#####     | 1/2 [00:00<00:00, 5.00it/s]")
sys.stdout.flush()
time.sleep(1.0)
sys.stdout.write("\\r100%|##########| 2/2 [00:00<00:00, 5.00it/s]\\n")
print("bye", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


@pytest.mark.parametrize(("code", "status"), [(0, "completed"), (3, "failed")])
async def test_run_publishes_lifecycle_and_output(
    broker: EmbeddedBroker, settings: Settings, tmp_path: Path, code: int, status: str
) -> None:
    """submitted → started → chunks (a live partial bar, then the complete line) → finished with status."""
    (tmp_path / "job.py").write_text(SCRIPT)
    async with Publisher(settings) as pub:
        job_id, rc = await run_job(pub, [sys.executable, "job.py", str(code)], tmp_path, "job-x", flush_s=0.2)
    assert (job_id, rc) == ("job-x", code)
    sub = await collect(broker.bootstrap, SUBMITTED.name, lambda m: len(m) >= 1, 10)
    assert SUBMITTED.decode(sub[0][3]).command[-1] == str(code)
    evs = [EVENTS.decode(v) for *_, v in await collect(broker.bootstrap, EVENTS.name, lambda m: len(m) >= 2, 10)]
    assert [e.kind for e in evs] == ["started", "finished"]
    assert (evs[1].status, evs[1].exit_code) == (status, code)
    chunks = [CHUNKS.decode(v) for *_, v in await collect(broker.bootstrap, CHUNKS.name, lambda m: any(
        CHUNKS.decode(v).eof for *_, v in m), 10)]  # fmt: skip
    lines = [line for c in chunks for line in c.lines]
    assert lines[:5] == [f"step={i} loss={1 / i:.3f}" for i in range(1, 6)]
    assert lines[-1] == "bye" and "2/2" in lines[-2]
    assert any(c.partial is not None and "1/2" in c.partial for c in chunks), "the live bar was not streamed"
    numbers = [c.first_line + i for c in chunks for i in range(len(c.lines))]
    assert numbers == list(range(1, len(lines) + 1))


async def test_missing_command_is_a_clear_error(settings: Settings, tmp_path: Path) -> None:
    """A command that cannot start fails the job and says why."""
    async with Publisher(settings) as pub:
        with pytest.raises(ConnectorError, match="cannot start"):
            await run_job(pub, ["/nonexistent/bin/train"], tmp_path, "job-y")
