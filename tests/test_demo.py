"""`schedmate demo` (the README's first command) end to end: embedded broker, worker, real training jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.infra.demo.demo import DEMO_JOBS, run_demo
from schedmate.infra.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]


async def test_demo_reports_metrics_a_diagnosis_and_a_resubmission(tmp_path: Path) -> None:
    """A completed job gets live metrics, a failing one a diagnosis and an action, the resubmission an estimate
    drawn from the first run."""
    jobs = tuple(j for j in DEMO_JOBS if j[0] in ("mlp-tqdm", "failing-job"))
    rows = await run_demo(Settings(data_dir=tmp_path / "data"), jobs=jobs, settle_timeout_s=60)
    by_name = {r.name: r for r in rows}
    ok, failed, again = by_name["mlp-tqdm"], by_name["failing-job"], by_name["mlp-tqdm (again)"]
    assert ok.status == "completed" and ok.metrics is not None and ok.metrics.step == ok.metrics.total_steps
    assert failed.status == "failed" and failed.failure is not None and failed.failure.category == "user_script"
    assert failed.action is not None and failed.action.action == "notify_user"
    assert again.meta is not None and again.meta.resubmission_of == ok.job_id
    assert again.estimate is not None and again.estimate.method == "similar"
    assert (tmp_path / "data" / "demo" / "throughput.png").is_file()
