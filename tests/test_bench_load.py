"""`schedmate bench load` end to end, scaled down: a churning fleet through one real worker on the embedded broker."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.infra.measure.bench_load import bench_load
from schedmate.infra.settings import Settings

pytestmark = pytest.mark.integration


async def test_a_small_churning_fleet_is_counted_exactly(tmp_path: Path) -> None:
    """40 concurrent jobs living 6-12 s for 40 s (some failing): jobs replace each other, every job's lines are
    counted exactly once, memory and lag are sampled, the plot is written."""
    plot = tmp_path / "load.png"
    out = await bench_load(Settings(data_dir=tmp_path / "data"), jobs=40, minutes=40 / 60, lines_per_s=5.0,
                           job_minutes=(0.1, 0.2), fail_share=0.3, sample_s=5.0, evict_after_s=5.0, plot=plot,
                           progress=False)  # fmt: skip
    assert out["jobs_started"] > 80 and out["jobs_failed"] > 0
    done, total = map(int, out["jobs_counted_exactly"].split("/"))
    assert done == total == out["jobs_started"]
    assert len(out["samples"]) >= 6 and all(s["rss_mb"] > 0 for s in out["samples"])
    assert out["lines_sent"] > 40 * 5 * 30 and plot.stat().st_size > 10_000
