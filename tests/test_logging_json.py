"""A JSON log is JSON on every line: the libraries' own records (Faust, mode, aiokafka) included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import logging
from schedmate.infra.logging import configure_logging, get_logger
from schedmate.infra.settings import Settings
from schedmate.streams.worker import build_worker, faust_runner

configure_logging("INFO", json=True)
settings = Settings()
runner = faust_runner(build_worker(settings, "127.0.0.1:9", classify=False, advise=False), settings)
runner._setup_logging()  # what Faust's worker does first when it starts
logging.getLogger("mode.timers").warning(
    "Timer %s is overlapping (interval=%r runtime=%r)", "track-flush", 0.25, 0.59
)
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("aiokafka.consumer").exception("fetch failed")
logging.getLogger("faust.transport").info("below the worker's level: not shown")
get_logger("schedmate.test").info("own event", job_id="j-1")
"""


def test_worker_log_is_one_json_object_per_line(tmp_path: Path) -> None:
    """Under load mode warns that a timer overlaps; in the worker's JSON log that warning (and a library's logged
    exception) must be one JSON object with level, logger and timestamp like SchedMate's own events, not Faust's
    plain-text format, which broke every reader that parses the log line by line."""
    env = dict(os.environ, SCHEDMATE_DATA_DIR=str(tmp_path))
    env.pop("SCHEDMATE_BROKER", None)
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    lines = [x for x in (proc.stdout + proc.stderr).decode().splitlines() if x.strip()]
    records = [json.loads(x) for x in lines]  # every line parses
    by_event = {r["event"]: r for r in records}
    timer = by_event["Timer track-flush is overlapping (interval=0.25 runtime=0.59)"]
    assert timer["level"] == "warning"
    assert timer["logger"] == "mode.timers"
    assert timer["timestamp"].endswith("Z")
    failed = by_event["fetch failed"]
    assert failed["level"] == "error"
    assert "ZeroDivisionError" in failed["exception"]
    assert by_event["own event"]["job_id"] == "j-1"
    assert not any("not shown" in r["event"] for r in records)
