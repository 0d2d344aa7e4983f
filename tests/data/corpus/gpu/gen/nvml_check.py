"""Device check: SchedMate's NVML sampler on a real GPU, idle and under a bf16 matmul load.

Run on a GPU machine from the repository root with the package importable as ``schedmate`` (see run_on_gpu.sh)."""

import json
import os
import sys
import threading
import time
from pathlib import Path

import torch

from schedmate.connectors.nvml import NvmlSampler
from schedmate.schemas.gpu_samples import GpuSample

out: dict = {"torch": torch.__version__, "devices": torch.cuda.device_count()}
with NvmlSampler(node="n1", job_id="job-1") as s:
    t0 = time.perf_counter()
    idle = s.sample()
    out["sample_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    stop = threading.Event()
    buf = []

    def burn() -> None:
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        buf.append(torch.empty(8 * 2**30 // 2, device="cuda", dtype=torch.bfloat16))  # 8 GiB held
        while not stop.is_set():
            for _ in range(20):
                a @ a
            torch.cuda.synchronize()

    th = threading.Thread(target=burn)
    th.start()
    time.sleep(3.0)
    busy = []
    for _ in range(4):
        busy.append(s.sample())
        time.sleep(0.5)
    stop.set()
    th.join()
    buf.clear()
    torch.cuda.empty_cache()
    time.sleep(1.5)
    after = s.sample()

wire = [GpuSample.model_validate_json(x.model_dump_json()) for x in idle]  # what the publisher puts on the wire
out["idle"] = [x.model_dump(exclude={"ts"}) for x in idle]
out["busy_util"] = [b[0].util_pct for b in busy]
out["busy_mem_used_mb"] = [round(b[0].mem_used_mb or 0) for b in busy]
out["busy_power_w"] = [b[0].power_w for b in busy]
out["after_util"] = after[0].util_pct
out["round_trip_equal"] = [w.model_dump() for w in wire] == [x.model_dump() for x in idle]
checks = {
    "one sample per device": len(idle) == torch.cuda.device_count() >= 1,
    "fields present": all(
        x.node == "n1"
        and x.job_id == "job-1"
        and x.uuid.startswith("GPU-")
        and x.name
        and x.mem_total_mb
        and x.temp_c is not None
        and x.power_w is not None
        and x.util_pct is not None
        for x in idle
    ),
    "util under load > 50 %": max(u or 0 for u in out["busy_util"]) > 50,
    "memory under load grew by > 7 GiB": max(out["busy_mem_used_mb"]) - (idle[0].mem_used_mb or 0) > 7 * 1024,
    "power under load > idle": max(p or 0 for p in out["busy_power_w"]) > (idle[0].power_w or 0),
    "no xid events": all(x.xid_events == [] for x in idle),
    "schema round trip": out["round_trip_equal"],
}
out["checks"] = checks
print(json.dumps(out, indent=1, default=str))
result_dir = Path(os.environ.get("OUT", "/tmp/out"))
result_dir.mkdir(parents=True, exist_ok=True)
(result_dir / "nvml_check.json").write_text(json.dumps(out, indent=1, default=str))
sys.exit(0 if all(checks.values()) else 1)
