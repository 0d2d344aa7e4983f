"""The Failure Handler's rules: locating the root cause, classifying it, choosing an action (pure logic)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedmate.agents.failures.diagnosis import Locator, diagnose_lines, recovery_action
from schedmate.agents.failures.tracebacks import find_tracebacks
from tests.conftest import SHARED

FAILURES = SHARED / "eval" / "dev" / "failures"


def progress(n: int, start: int = 1) -> list[str]:
    """n training progress lines."""
    return [f"step {i} | loss {1 / i:.4f} | lr 1.0e-04 | 20.0 ms/step" for i in range(start, start + n)]


def test_benign_early_errors_are_not_the_root_cause() -> None:
    """An optional import failing and a retried connection before training are ignored."""
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.11/site-packages/apex/__init__.py", line 3, in <module>',
        "ModuleNotFoundError: No module named 'amp_C'",
        "[W socket.cpp:663] connect failed, retrying",
        *progress(200),
        "Traceback (most recent call last):",
        '  File "/home/me/train.py", line 88, in <module>',
        "    batch = next(it)",
        '  File "/home/me/data.py", line 12, in __getitem__',
        "KeyError: 'sample_0042'",
    ]
    d = diagnose_lines(lines)
    assert d.first_error_line == 205
    assert d.category == "user_script"
    assert d.action == "notify_user"


def test_hardware_evidence_outranks_its_cascade() -> None:
    """An ECC error inside a traceback, followed by NCCL watchdog noise: GPU infrastructure, traceback start."""
    lines = [
        *progress(50),
        " 44%|####3     | 437/1000 [02:56<01:16,  7.37it/s]Traceback (most recent call last):",
        '  File "/home/me/model.py", line 257, in forward',
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "node-17:2211:2290 [3] NCCL INFO comm 0x55 rank 3 nranks 8 - Abort COMPLETE",
        "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout",
    ]
    d = diagnose_lines(lines)
    assert (d.first_error_line, d.category, d.infra_component) == (51, "infrastructure", "gpu")
    assert d.action in ("drain_node_and_requeue", "requeue")


def test_killed_rank_outranks_peer_symptoms() -> None:
    """Connection resets on the surviving rank are symptoms; the SIGKILL of the other rank is the root."""
    lines = [
        *progress(30),
        "[rank0]: RuntimeError: [gloo/transport/tcp/pair.cc:537] Read error: Connection reset by peer",
        "W1121 15:06:03 api.py:1028] Sending process 29547 closing signal SIGTERM",
        "E1121 15:06:03 api.py:1002] failed (exitcode: -9) local_rank: 1 (pid: 29548) of binary: python",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    ]
    d = diagnose_lines(lines)
    assert (d.first_error_line, d.category, d.log_node, d.faulty_node) == (33, "other", "rank 1", None)
    assert d.action == "none"


def test_library_internal_error_is_framework_and_config_rejection_is_user() -> None:
    """AttributeError deep in a library is the framework's; a ValueError rejecting the config is the user's."""
    frames = [
        '  File "/home/me/train.py", line 10, in <module>',
        "    trainer.train()",
        '  File "/opt/conda/lib/python3.11/site-packages/transformers/trainer.py", line 937, in train',
        "    with model.no_sync():",
    ]
    internal = [
        "Traceback (most recent call last):",
        *frames,
        "AttributeError: 'Engine' object has no attribute 'no_sync'",
    ]
    config = ["Traceback (most recent call last):", *frames, "ValueError: Type fp16 is not supported on your device."]
    assert diagnose_lines([*progress(5), *internal]).category == "framework"
    assert diagnose_lines([*progress(5), *config]).category == "user_script"


def test_storage_and_network_signatures_name_the_component_and_node() -> None:
    """Read-only filesystem → storage; IB completion error → network, with the node from the NCCL prefix."""
    ro = diagnose_lines([*progress(5), "OSError: [Errno 30] Read-only file system: '/ckpt/step_5.pt'"])
    assert (ro.category, ro.infra_component, ro.action) == ("infrastructure", "storage", "requeue")
    ib_tail = [
        "gpu-a12:25146:25854 [0] NCCL INFO proxy.cc:698 -> 6",
        "gpu-a12:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer with error 12, vendor err 129",
    ]
    ib = diagnose_lines([*progress(5), *ib_tail])
    assert (ib.first_error_line, ib.category, ib.infra_component, ib.log_node, ib.faulty_node) == (
        6,
        "infrastructure",
        "network",
        "gpu-a12",
        None,  # no allocation given: the log's node is only a hint
    )
    assert ib.action == "requeue"
    ib2 = diagnose_lines(ib_lines := [*progress(5), *ib_tail], allocation=["gpu-a11", "gpu-a12"])
    assert (ib2.faulty_node, ib2.action) == ("gpu-a12", "requeue_excluding_node")
    assert diagnose_lines(ib_lines, allocation=["gpu-b01", "gpu-b02"]).faulty_node is None


def test_healthy_log_has_no_failure() -> None:
    """A log that ends in progress yields no root cause."""
    d = diagnose_lines(progress(100))
    assert d.first_error_line is None and d.action == "none"


def test_binary_search_uses_logarithmic_classifier_calls() -> None:
    """A 200,000-line log with a 300-line failure tail costs O(log N) chunk classifications."""
    tail = [f"[rank{r % 8}]: frame #{r}: c10::Error" for r in range(300)]
    lines = [
        *progress(200_000),
        "Traceback (most recent call last):",
        '  File "/home/me/t.py", line 1, in <m>',
        "ValueError: bad",
        *tail,
    ]
    loc = Locator()
    d = diagnose_lines(lines, loc)
    assert d.first_error_line == 200_001
    assert loc.calls <= 2 * 14  # ~log2(10,000 chunks) probes


def test_recovery_actions_come_from_the_allowlist_and_need_evidence() -> None:
    """Low confidence never acts; an unnamed node is requeued rather than excluded."""
    assert recovery_action("infrastructure", "gpu", "n1", 0.9, corroborated=True) == "drain_node_and_requeue"
    assert recovery_action("infrastructure", "gpu", "n1", 0.9) == "requeue"  # the job's own word is not enough
    assert recovery_action("infrastructure", "gpu", None, 0.9) == "requeue"
    assert recovery_action("infrastructure", "network", "n1", 0.3) == "none"
    assert recovery_action("other", None, "n1", 0.9) == "none"


def test_chained_worker_traceback_points_to_user_code() -> None:
    """'Caught KeyError in DataLoader worker' + 'Original Traceback' → the user's dataset raised it."""
    lines = [
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1, in __next__',
        "KeyError: Caught KeyError in DataLoader worker process 0.",
        "Original Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/_utils/fetch.py", line 51, in fetch',
        '  File "/data/me/datasets.py", line 216, in __getitem__',
        "KeyError: 'station_07'",
    ]
    tbs = find_tracebacks(lines)
    assert len(tbs) == 1 and tbs[0].origin().innermost.path == "/data/me/datasets.py"  # type: ignore[union-attr]
    assert diagnose_lines([*progress(3), *lines]).category == "user_script"


@pytest.mark.skipif(not (FAILURES / "labels.jsonl").exists(), reason="labelled logs not beside the repo")
def test_accuracy_on_labelled_failure_logs() -> None:
    """Root-cause line within ±3 ≥ 90%, infrastructure F1 ≥ 0.85, category accuracy ≥ 80% (no LLM)."""
    out = subprocess.run([sys.executable, "-m", "schedmate.infra.cli", "eval", "diagnose", str(FAILURES), "--json"],
                         capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    r = json.loads(out.stdout)
    wrong = [x for x in r["results"] if not (x["line_ok"] and x["category_ok"])]
    assert r["line_within_tolerance"] >= 0.9, wrong
    assert r["infra_f1"] >= 0.85, wrong
    assert r["category_accuracy"] >= 0.8, wrong


def test_diagnose_json_contract(tmp_path: Path) -> None:
    """`schedmate diagnose LOG --json` prints exactly the documented keys."""
    log = tmp_path / "f.log"
    log.write_text(
        "\n".join([*progress(3), "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]) + "\n"
    )
    out = subprocess.run([sys.executable, "-m", "schedmate.infra.cli", "diagnose", str(log), "--json"],
                         capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    d = json.loads(out.stdout)
    assert list(d) == ["first_error_line", "category", "infra_component", "faulty_node", "log_node", "confidence",
                       "action", "explanation", "evidence", "path"]  # fmt: skip
    assert (d["first_error_line"], d["category"], d["action"]) == (4, "user_script", "notify_user")
    assert d["path"] == ["rules"]


@pytest.mark.parametrize(
    ("tail", "category", "component", "node"),
    [
        (
            ["slurmstepd: error: *** JOB 4242 ON gpu-node12 CANCELLED AT 2026-01-01T00:00:00 DUE TO NODE FAILURE ***"],
            "infrastructure",
            "node",
            "gpu-node12",
        ),
        (
            [
                "Traceback (most recent call last):",
                '  File "/home/me/train.py", line 5, in <module>',
                "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            ],
            "user_script",
            None,
            None,
        ),
        (
            [
                "Root Cause (first observed failure):",
                "[0]:",
                "  time      : 2026-01-01_00:00:00",
                "  host      : gpu-a07",
                "  rank      : 3 (local_rank: 3)",
                "  exitcode  : -9 (pid: 1234)",
                "  traceback : Signal 9 (SIGKILL) received by PID 1234",
            ],
            "other",
            None,
            "gpu-a07",
        ),
        (
            [
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.15 GiB total capacity)"
            ],
            "user_script",
            None,
            None,
        ),
        (
            ["RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"],
            "infrastructure",
            "nvlink",
            None,
        ),
    ],
)
def test_common_failures_beyond_the_dev_set(
    tail: list[str], category: str, component: str | None, node: str | None
) -> None:
    """Typical failures of other clusters: node failure, GPU arch mismatch, torchrun kill summary, OOM, NVLink."""
    d = diagnose_lines([*progress(20), *tail])
    assert (d.category, d.infra_component) == (category, component)
    if node is not None:
        assert d.log_node == node
