"""Known failure signatures: what a log line proves about where a job failed.

Each signature carries the failure category it implies (``infrastructure``, ``framework``,
``user_script``, ``other``), the infrastructure component, a priority for root-cause
selection (hardware evidence outranks its software cascade) and an explanation a user
can act on. Conventions follow the evaluation labels: CUDA out-of-memory is the job's
own doing (user_script); a watchdog timeout or a bare SIGKILL with no further evidence
is ``other``; socket errors caused by a peer dying are symptoms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent

__all__ = ["HARDWARE", "KILL", "SIGNATURES", "SYMPTOM", "Signature", "match_signature"]

HARDWARE: Final = 3.0  # hardware / kernel evidence (Xid, ECC, NVLink, InfiniBand, storage)
KILL: Final = 2.0  # a rank killed by a signal
ERROR: Final = 1.0  # an ordinary error
SYMPTOM: Final = 0.5  # consequences of a failure elsewhere (peer gone, timeouts, launcher summaries)


@dataclass(frozen=True, slots=True)
class Signature:
    """A known failure pattern."""

    name: str
    pattern: re.Pattern[str]
    category: FailureCategory
    component: InfraComponent | None
    priority: float
    explanation: str


def _s(
    name: str, rx: str, category: FailureCategory, component: InfraComponent | None, priority: float, why: str
) -> Signature:
    return Signature(name, re.compile(rx, re.IGNORECASE), category, component, priority, why)


# Order matters: the first match wins for a line.
SIGNATURES: Final[tuple[Signature, ...]] = (
    # --- GPU hardware (NVIDIA Xid codes, ECC) ---
    _s("xid_nvlink", r"\bXid\b(?:\s*\([^)]*\))?:\s*(?:74|144|145|146|147|148|149|150|151|152|153|154|155|156|157|158|159)\b",
       "infrastructure", "nvlink", HARDWARE, "NVLink error reported by the driver (Xid); the GPU interconnect of this node is faulty"),
    _s("nvlink_inactive", r"nvlink.*(?:inactive|down|error|fatal)|(?:inactive|down).*nvlink",
       "infrastructure", "nvlink", HARDWARE, "NVLink links are down/inactive on this node; GPU-to-GPU traffic cannot flow"),
    _s("xid_gpu_hw", r"\bXid\b(?:\s*\([^)]*\))?:\s*(?:48|61|62|63|64|79|92|94|95|119|120|136|140)\b",
       "infrastructure", "gpu", HARDWARE, "GPU hardware fault reported by the driver (Xid: ECC, fallen off the bus, GSP error)"),
    _s("ecc", r"uncorrectable ECC|ECC error|double[- ]bit (?:ECC )?error|DBE|row ?remap",
       "infrastructure", "gpu", HARDWARE, "uncorrectable GPU memory (ECC) error: the GPU's memory is faulty"),
    _s("gpu_lost", r"GPU has fallen off the bus|GPU is lost|Unable to determine the device handle for GPU",
       "infrastructure", "gpu", HARDWARE, "the GPU disappeared from the PCIe bus (hardware/driver fault)"),
    _s("xid_app", r"\bXid\b(?:\s*\([^)]*\))?:\s*(?:13|31|43|45|69|109)\b",
       "other", "gpu", HARDWARE, "the driver reported a GPU exception (Xid 13/31/43/109) on this process; often caused by "
       "the program (illegal instruction/address), sometimes by the GPU — check the same job on another GPU"),
    # --- network / InfiniBand ---
    _s("ib_completion", r"NET/IB.*(?:completion|error)|ibv_\w+ failed|vendor err|IBV_WC_|mlx5\S*:.*(?:error|fail)|"
       r"RDMA.*(?:error|fail)|transport retry counter exceeded",
       "infrastructure", "network", HARDWARE, "InfiniBand/RDMA transport error between nodes: the network fabric or a NIC failed"),
    # --- storage ---
    _s("readonly_fs", r"Read-only file system|EROFS", "infrastructure", "storage", HARDWARE,
       "the filesystem was (re)mounted read-only: a storage fault, not the job"),
    _s("io_error", r"Input/output error|EIO\b|Stale file handle|Transport endpoint is not connected",
       "infrastructure", "storage", HARDWARE, "the storage returned I/O errors (failing disk or lost network filesystem)"),
    _s("no_space", r"No space left on device|ENOSPC", "infrastructure", "storage", HARDWARE,
       "the filesystem is full"),
    # --- node ---
    _s("node_fail", r"NODE_FAIL|DUE TO NODE FAILURE|node .* (?:down|not responding)|Kernel panic|machine check",
       "infrastructure", "node", HARDWARE, "the node failed (scheduler reported node failure / kernel panic)"),
    # --- the job's own doing ---
    _s("cuda_oom", r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|out of memory",
       "user_script", None, ERROR, "the job asked for more GPU memory than the device has: reduce the batch size or "
       "sequence length, or enable gradient checkpointing / mixed precision"),
    _s("host_oom", r"\bMemoryError\b|Unable to allocate [\d.]+ ?[KMGTP]i?B", "user_script", None, ERROR,
       "the job tried to allocate more host memory than available"),
    _s("nan", r"loss is nan|nan loss|Loss is (?:nan|inf)|FloatingPointError|non-finite loss|diverg",
       "user_script", None, ERROR, "training diverged (NaN/inf loss): check learning rate schedule and data"),
    _s("not_compiled", r"not compiled with CUDA|Found no NVIDIA driver|CUDA driver version is insufficient|"
       r"no CUDA-capable device", "user_script", None, ERROR,
       "the job's environment cannot use the GPU (CPU-only build, or driver mismatch): fix the environment"),
    _s("arch_mismatch", r"no kernel image is available for execution|not compatible with the current PyTorch installation|"
       r"sm_\d+ is not compatible", "user_script", None, ERROR,
       "the job's CUDA build does not support this GPU model: install a build for its compute capability"),
    _s("missing_pkg", r"No module named|ModuleNotFoundError|requires? .{0,60}(?:to be installed|installed)|"
       r"is not installed|cannot import name", "user_script", None, ERROR,
       "a package the job needs is missing from its environment: install it or change the configuration"),
    _s("file_missing", r"FileNotFoundError|No such file or directory", "user_script", None, ERROR,
       "a file the job reads does not exist at that path"),
    # --- symptoms / unknown root cause ---
    _s("illegal_memory", r"illegal memory access|device-side assert|misaligned address", "other", None, ERROR,
       "a CUDA kernel faulted (illegal memory access / device assert); usually a bug in the model code or a library"),
    _s("watchdog", r"Watchdog caught collective operation timeout|collective operation timeout|"
       r"NCCL (?:communicator|operation).*(?:timed out|timeout)|Timed out waiting|gloo.*Timed out|timed out after",
       "other", None, SYMPTOM, "a collective operation timed out: one rank stopped participating (hang, crash or "
       "slow I/O); the root cause is on the rank that stalled"),
    _s("peer_gone", r"Connection reset by peer|Broken pipe|Connection refused|Connection closed by peer|"
       r"remote process exited|ncclRemoteError|Call to recv from .* failed|socket.*(?:closed|failed)",
       "other", None, SYMPTOM, "a peer rank went away; this rank's error is a consequence"),
    _s("sigkill", r"exitcode\s*:\s*-9\b|Signals?\.SIGKILL|signal 9\b|\bKilled\b|exit code 137|oom-kill", "other", None, KILL,
       "a process was killed with SIGKILL by something outside it (out-of-memory killer, scheduler or admin)"),
    _s("launcher_summary", r"ChildFailedError|failed \(exitcode: -?\d+\)|Sending process \d+ closing signal",
       "other", None, SYMPTOM, "the launcher reports a child process failure"),
    _s("preempted", r"PREEMPT|DUE TO TIME LIMIT|CANCELLED AT", "other", None, SYMPTOM,
       "the scheduler preempted, cancelled or timed out the job"),
    _s("nccl_error", r"NCCL (?:WARN|error)|ncclInternalError|ncclSystemError|unhandled system error|NCCL INFO .*-> [1-9]",
       "other", None, ERROR, "NCCL reported an error"),
)  # fmt: skip


def match_signature(text: str) -> Signature | None:
    """The first known signature found in ``text``."""
    for sig in SIGNATURES:
        if sig.pattern.search(text):
            return sig
    return None
