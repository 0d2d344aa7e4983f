"""The CLI as a user drives it: `schedmate up`, `run`, `logs push`, `watch`, then SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def cli(
    *args: str, env: dict[str, str], stdin: bytes | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """Run `schedmate ARGS`."""
    return subprocess.run(
        [sys.executable, "-m", "schedmate.infra.cli", *args], env=env, input=stdin, capture_output=True, timeout=timeout
    )


def test_up_run_push_watch_and_clean_stop(tmp_path: Path) -> None:
    """A stack started with `schedmate up` serves `run` and `logs push`; `watch` shows their metrics; SIGTERM stops all."""
    env = dict(
        os.environ, SCHEDMATE_DATA_DIR=str(tmp_path), SCHEDMATE_METRICS_INTERVAL_S="0.5", SCHEDMATE_LOG_JSON="true"
    )
    env.pop("SCHEDMATE_BROKER", None)
    log = (tmp_path / "up.log").open("wb")
    up = subprocess.Popen(
        [sys.executable, "-m", "schedmate.infra.cli", "up"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        state = tmp_path / "broker.json"
        deadline = time.monotonic() + 30
        while not state.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        broker_pid = json.loads(state.read_text())["pid"]
        script = "for i in range(1, 41): print(f'step={i}/40 loss={1 / i:.4f} lr=0.001')"
        run = cli(
            "run", "--workdir", str(tmp_path), "--job-id", "cli-run", "-q", "--", sys.executable, "-c", script, env=env
        )
        assert run.returncode == 0, run.stderr.decode()
        push = cli("logs", "push", "--job", "cli-push", "-", env=env, stdin=b"iter 7: loss 2.5000, time 12.00ms\n")
        assert push.returncode == 0, push.stderr.decode()
        seen: dict[str, dict[str, object]] = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (
            {"cli-run", "cli-push"} <= seen.keys() and seen["cli-run"]["step"] == 40
        ):
            out = cli("watch", "jobs.metrics", "--from-beginning", "--json", "--timeout", "5", env=env)
            for line in out.stdout.decode().splitlines():
                ev = json.loads(line)
                seen[ev["job_id"]] = ev
        assert seen["cli-run"]["step"] == 40 and seen["cli-run"]["total_steps"] == 40
        assert seen["cli-push"]["step"] == 7 and seen["cli-push"]["step_time_s"] == 0.012
    finally:
        up.send_signal(signal.SIGTERM)
        code = up.wait(60)
        log.close()
    assert code == 0, (tmp_path / "up.log").read_text()[-2000:]
    with pytest.raises(ProcessLookupError):
        os.kill(broker_pid, 0)
    assert not state.exists()
