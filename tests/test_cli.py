"""The command line: offline contract, accuracy on labelled logs, schemas, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED

PROGRESS = SHARED / "eval" / "dev" / "progress"


def schedmate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "schedmate.infra.cli", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_metrics_json_contract(tmp_path: Path) -> None:
    """`schedmate metrics LOG --json` prints exactly the documented keys, line 1-based."""
    log = tmp_path / "t.log"
    log.write_bytes(
        b"hello\n 10%|#         | 10/100 [00:01<00:09, 10.00it/s, loss=0.5]\r 20%|##        | 20/100 [00:02<00:08, 10.00it/s, loss=0.4]\nbye\n"
    )
    out = schedmate("metrics", str(log), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert list(got) == ["step", "total_steps", "epoch", "loss", "lr", "step_time_s", "samples_per_s",
                         "tokens_per_s", "eta_s", "line"]  # fmt: skip
    assert (got["step"], got["total_steps"], got["loss"], got["line"]) == (20, 100, 0.4, 2)
    assert got["step_time_s"] == pytest.approx(0.1)
    assert got["eta_s"] == pytest.approx(8.0)


@pytest.mark.skipif(not (PROGRESS / "labels.jsonl").exists(), reason="labelled logs not beside the repo")
def test_accuracy_on_labelled_progress_logs() -> None:
    """≥ 95% of the labelled real logs fully right (step and loss exact, step time within 5%)."""
    out = schedmate("eval", "metrics", str(PROGRESS), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    wrong = {r["id"]: r["wrong"] for r in result["results"] if not r["ok"]}
    assert result["share"] >= 0.95, wrong


def test_schemas_export(tmp_path: Path) -> None:
    """`schedmate schemas export DIR` writes one JSON Schema per topic."""
    out = schedmate("schemas", "export", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert len(list(tmp_path.glob("*.schema.json"))) == 10


def test_no_broker_is_one_clear_message(tmp_path: Path) -> None:
    """Commands that need a broker say how to start one, in one line, exit code 2."""
    out = schedmate("watch", "jobs.metrics", "--timeout", "1", env={"SCHEDMATE_DATA_DIR": str(tmp_path)})
    assert out.returncode == 2
    assert "schedmate up" in out.stderr
    assert "Traceback" not in out.stderr


def test_bad_setting_is_reported() -> None:
    """An invalid SCHEDMATE_BROKER names the accepted forms."""
    out = schedmate("watch", "jobs.metrics", env={"SCHEDMATE_BROKER": "localhost:9092"})
    assert out.returncode == 2
    assert "SCHEDMATE_BROKER" in out.stderr and "kafka://host:port" in out.stderr
    assert "Traceback" not in out.stderr


def test_advise_json_contract_and_resubmission(tmp_path: Path) -> None:
    """`schedmate advise --json -- CMD` prints the documented keys; a recorded job resubmitted is matched at once."""
    from schedmate.infra.measure.bench_advise import synthetic_repos  # noqa: PLC0415

    ((repo, cmd),) = synthetic_repos(tmp_path / "repos", 1)
    env = dict(os.environ, SCHEDMATE_DATA_DIR=str(tmp_path / "data"))
    line = f"CUDA_VISIBLE_DEVICES=0,1 {cmd.replace('--nproc_per_node=1', '--nproc_per_node=2')}"
    first = schedmate("advise", "--workdir", str(repo), "--json", "--record", "--job-id", "j1", "--", line, env=env)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert set(out) >= {"metadata", "estimate", "resubmission_of", "path", "elapsed_s"}
    assert set(out["metadata"]) == {"model_name", "model_type", "task", "params_millions", "dataset",
                                    "batch_size_per_device", "global_batch_size", "epochs", "max_steps",
                                    "learning_rate", "precision", "framework", "distributed", "num_gpus"}  # fmt: skip
    assert (out["metadata"]["num_gpus"], out["metadata"]["distributed"], out["path"]) == (2, "ddp", "static")
    assert out["estimate"]["method"] == "prior:default" and out["resubmission_of"] is None
    again = json.loads(schedmate("advise", "--workdir", str(repo), "--json", "--", line, env=env).stdout)
    assert (again["path"], again["resubmission_of"], again["metadata"]) == ("resubmission", "j1", out["metadata"])
    assert again["elapsed_s"] < 0.5
    missing = schedmate("advise", "--workdir", str(repo), "--json", env=env)
    assert missing.returncode == 2 and "after `--`" in missing.stderr
