"""`schedmate bench diagnose`: the O(log N) root-cause locator vs a linear scan of 20-line chunks, on one
generated 300k-line failed log (benign early errors, then a GPU ECC failure and its NCCL cascade)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from schedmate.agents.failures.diagnosis import diagnose_lines
from schedmate.agents.failures.locator import CHUNK_LINES, Locator
from schedmate.agents.logtext.lines import split_physical_lines

__all__ = ["bench_diagnose"]


def _failed_log(n_lines: int) -> list[str]:
    """A long training log with benign early errors, ending in a GPU ECC failure cascade."""
    head = [
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.11/site-packages/apex/__init__.py", line 3, in <module>',
        "ModuleNotFoundError: No module named 'fused_layer_norm_cuda'",
        "apex not available, falling back to torch.nn.LayerNorm",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-3]:29500 (errno: 111), retrying",
    ]
    tail = [
        " 44%|####3     | 437/1000 [02:56<01:16,  7.37it/s, loss=1.0909]Traceback (most recent call last):",
        '  File "/work/train.py", line 257, in step',
        "    loss.backward()",
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout",
        *[
            line
            for r in range(8)
            for line in (
                f"[rank{r}]:[E ProcessGroupNCCL.cpp:1785] [PG 0 Rank {r}] Exception (either an error or timeout) "
                "detected by watchdog at work: 610",
                f"[rank{r}]: Traceback (most recent call last):",
                f'[rank{r}]:   File "/work/train.py", line 120, in <module>',
                f"[rank{r}]:     dist.all_reduce(t)",
                f"[rank{r}]: torch.distributed.DistBackendError: NCCL communicator was aborted on rank {r}",
                *[f"[rank{r}]: frame #{k}: c10::detail::torchCheckFail + 0x{k:x}" for k in range(12)],
            )
        ],
        "E1121 15:06:03 api.py:1002] failed (exitcode: 1) local_rank: 3 (pid: 29548)",
    ]
    body_n = max(0, n_lines - len(head) - len(tail))
    body = [f"iter {i}: loss {2.0 / (1 + i % 997):.4f}, time {5 + i % 7}.00ms, mfu 3.0%" if i % 3 else
            f"2026-01-01 00:00:00 | INFO | checkpoint shard {i} ok" for i in range(body_n)]  # fmt: skip
    return head + body + tail


def _linear_diagnosis(lines: list[str]) -> tuple[int | None, int]:
    """Baseline: classify every 20-line chunk in order (the linear scan the paper compares with)."""
    loc = Locator()
    last = -1
    for c in range((len(lines) + CHUNK_LINES - 1) // CHUNK_LINES):
        if loc.chunk_has_progress(lines, c):
            last = c
    start = 0
    if last >= 0:
        base = last * CHUNK_LINES
        start = max(i for i in range(base, min(len(lines), base + CHUNK_LINES)) if loc.is_progress(lines[i]))
    blocks = loc.error_blocks(lines, start, max(0, start - 60))
    best = max(blocks, key=lambda b: (b.priority, -b.start)) if blocks else None
    return (best.start + 1 if best else None), loc.calls


def bench_diagnose(n_lines: int) -> dict[str, Any]:
    """Binary-search diagnosis vs a linear chunk scan on the same generated log."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "failed.log"
        path.write_text("\n".join(_failed_log(n_lines)) + "\n")
        t0 = time.perf_counter()
        lines = split_physical_lines(path.read_bytes())
        d = diagnose_lines(lines, Locator())
        seconds = time.perf_counter() - t0
        t1 = time.perf_counter()
        linear_line, linear_calls = _linear_diagnosis(split_physical_lines(path.read_bytes()))
        linear_seconds = time.perf_counter() - t1
    return {
        "lines": len(lines),
        "seconds": round(seconds, 4),
        "classifier_calls": d.classifier_calls,
        "linear_seconds": round(linear_seconds, 4),
        "linear_classifier_calls": linear_calls,
        "ratio": round(linear_seconds / seconds, 1) if seconds else None,
        "first_error_line": d.first_error_line,
        "linear_first_error_line": linear_line,
        "category": d.category,
        "infra_component": d.infra_component,
    }
