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

__all__ = [
    "GPU_UNAVAILABLE",
    "HARDWARE",
    "KILL",
    "MAX_LINE_CHARS",
    "SIGNATURES",
    "SYMPTOM",
    "Signature",
    "match_signature",
]

HARDWARE: Final = 3.0  # hardware / kernel evidence (Xid, ECC, NVLink, InfiniBand, storage)
KILL: Final = 2.0  # a rank killed by a signal
EXPLAINED_KILL: Final = 2.5  # a kill whose reason the log states (the kernel's or the scheduler's OOM killer)
ERROR: Final = 1.0  # an ordinary error
SYMPTOM: Final = 0.5  # consequences of a failure elsewhere (peer gone, timeouts, launcher summaries)


MAX_LINE_CHARS: Final = 4096  # a line is classified by its first 4 KiB (bounds the cost of every pattern)


@dataclass(frozen=True, slots=True)
class Signature:
    """A known failure pattern; ``examples`` are lines it must match (tests glue them into words to check it
    matches whole words only)."""

    name: str
    pattern: re.Pattern[str]
    category: FailureCategory
    component: InfraComponent | None
    priority: float
    explanation: str
    examples: tuple[str, ...] = ()


def _s(
    name: str,
    rx: str,
    category: FailureCategory,
    component: InfraComponent | None,
    priority: float,
    why: str,
    examples: tuple[str, ...],
) -> Signature:
    return Signature(name, re.compile(rx, re.IGNORECASE), category, component, priority, why, examples)


# Every alternative starts and ends on a word boundary, and gaps are bounded (``.{0,N}``), so a
# pattern costs O(line length * N) at worst, never quadratic in the line. Order matters: the first
# match wins for a line.
# The node's GPUs cannot be used at all (busy in exclusive mode, driver not loaded, needs a reset): the node's fault.
GPU_UNAVAILABLE: Final = (
    r"\bbusy or unavailable\b|\bCUDA driver initialization failed\b|\bcudaErrorDevicesUnavailable\b|"
    r"\bDriver Not Loaded\b|\bGPU requires reset\b|\bcuInit\b.{0,40}\bfailed\b"
)
_XID = r"\bXid\b(?:\s{0,4}\([^)]{0,64}\))?:\s{0,4}"
SIGNATURES: Final[tuple[Signature, ...]] = (
    # --- GPU hardware (NVIDIA Xid codes, ECC) ---
    _s("xid_nvlink", _XID + r"(?:74|144|145|146|147|148|149|150|151|152|153|154|155|156|157|158|159)\b",
       "infrastructure", "nvlink", HARDWARE, "NVLink error reported by the driver (Xid); the GPU interconnect of this node is faulty",
       ("NVRM: Xid (PCI:0000:07:00): 74, pid=2, NVLink: fatal error detected on link 5",)),
    _s("nvlink_inactive", r"\bnvlink\b.{0,120}\b(?:inactive|down|error|fatal)\b|\b(?:inactive|down)\b.{0,120}\bnvlink\b",
       "infrastructure", "nvlink", HARDWARE, "NVLink links are down/inactive on this node; GPU-to-GPU traffic cannot flow",
       ("NVLink 3 is inactive", "RuntimeError: CUDA error: uncorrectable NVLink error detected")),
    _s("xid_gpu_hw", _XID + r"(?:48|61|62|63|64|79|92|94|95|119|120|136|140)\b",
       "infrastructure", "gpu", HARDWARE, "GPU hardware fault reported by the driver (Xid: ECC, fallen off the bus, GSP error)",
       ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",)),
    _s("ecc", r"\buncorrectable ECC\b|\bECC error|\bdouble[- ]bit (?:ECC )?error|"
       r"\bDBE\b.{0,40}\b(?:ECC|error)\b|\bECC\b.{0,40}\bDBE\b|\brow[- ]?remap\w{0,8} (?:fail\w{0,4}|error)",
       "infrastructure", "gpu", HARDWARE, "uncorrectable GPU memory (ECC) error: the GPU's memory is faulty",
       ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "Xid 48: DBE (double bit error) ECC error",
        "row remapping failure on GPU 3")),
    _s("gpu_unavailable", GPU_UNAVAILABLE, "infrastructure", "gpu", ERROR,
       "the node's GPUs cannot be used (busy in exclusive mode, driver not loaded or needing a reset): the node, not "
       "the job",
       ("THCudaCheck FAIL file=THCStream.cpp line=40 error=46 : all CUDA-capable devices are busy or unavailable",)),
    _s("gpu_lost", r"\bGPU has fallen off the bus\b|\bGPU is lost\b|\bUnable to determine the device handle for GPU",
       "infrastructure", "gpu", HARDWARE, "the GPU disappeared from the PCIe bus (hardware/driver fault)",
       ("Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost",)),
    _s("xid_app", _XID + r"(?:13|31|43|45|69|109)\b",
       "other", "gpu", HARDWARE, "the driver reported a GPU exception (Xid 13/31/43/109) on this process; often caused by "
       "the program (illegal instruction/address), sometimes by the GPU — check the same job on another GPU",
       ("NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception",)),
    # --- network / InfiniBand ---
    _s("ib_completion", r"\bNET/IB\b.{0,200}\b(?:completion|error)\b|\bibv_\w{1,40} failed\b|\bvendor err\b|"
       r"\bIBV_WC_\w+|\bmlx5\S{0,20}:.{0,200}\b(?:error|fail\w{0,4})\b|\bRDMA\b.{0,200}\b(?:error|fail\w{0,4})\b|"
       r"\btransport retry counter exceeded\b",
       "infrastructure", "network", HARDWARE, "InfiniBand/RDMA transport error between nodes: the network fabric or a NIC failed",
       ("NCCL WARN NET/IB : Got completion from peer with error 12, vendor err 129", "ibv_poll_cq failed",
        "transport retry counter exceeded")),
    # --- storage ---
    _s("readonly_fs", r"\bRead-only file system\b|\bEROFS\b", "infrastructure", "storage", HARDWARE,
       "the filesystem was (re)mounted read-only: a storage fault, not the job",
       ("OSError: [Errno 30] Read-only file system: '/ckpt/a.pt'",)),
    _s("io_error", r"\bInput/output error\b|\bEIO\b|\bStale file handle\b|\bTransport endpoint is not connected\b",
       "infrastructure", "storage", HARDWARE, "the storage returned I/O errors (failing disk or lost network filesystem)",
       ("OSError: [Errno 5] Input/output error", "Stale file handle")),
    _s("no_space", r"\bNo space left on device\b|\bENOSPC\b", "infrastructure", "storage", HARDWARE,
       "the filesystem is full", ("OSError: [Errno 28] No space left on device",)),
    # --- node ---
    _s("node_fail", r"\bNODE_FAIL\b|\bDUE TO NODE FAILURE\b|\bnode\b.{0,80} (?:down|not responding)\b|\bKernel panic\b|"
       r"\bmachine check\b|\bslurmstepd: error: (?!\*\*\*)(?!.{0,200}\b(?:CANCELLED|TIME LIMIT|PREEMPT|oom-kill|OOM)\b)",
       "infrastructure", "node", HARDWARE, "the node failed (scheduler reported node failure / kernel panic)",
       ("slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2024-01-01 DUE TO NODE FAILURE ***", "Kernel panic - not syncing",
        "slurmstepd: error: execve(): /tmp/slurmd/job1/slurm_script: No such file or directory")),
    _s("shm_exhausted", r"\binsufficient shared memory\b|\bout of shared memory\b|\bkilled by signal: Bus error\b",
       "infrastructure", "node", ERROR, "the node's shared memory (/dev/shm) is too small for the job's data-loader "
       "workers: raise the container's shm size (or use fewer loader workers)",
       ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "RuntimeError: DataLoader worker (pid 7579) is killed by signal: Bus error. It is possible that dataloader's "
        "workers are out of shared memory.")),
    # --- the job's own doing ---
    _s("host_oom_kill", r"\boom[-_]kill event|\bkilled by the cgroup out-of-memory handler\b|"
       r"\btask \d{1,6}: Out Of Memory\b|\bOut of memory: Kill(?:ed)? process\b|\bMemory cgroup out of memory\b",
       "user_script", None, EXPLAINED_KILL,
       "the job used more host memory than it was given (its Slurm/cgroup memory request, or the node's RAM) and the "
       "kernel's OOM killer ended it: request more memory (--mem) or hold less in memory (fewer loader workers, "
       "smaller caches)",
       ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your processes may have "
        "been killed by the cgroup out-of-memory handler.", "srun: error: gpu20-15: task 0: Out Of Memory",
        "Out of memory: Killed process 4242 (python) total-vm:90000000kB")),
    _s("cuda_oom", r"\bCUDA out of memory\b|\bOutOfMemoryError\b|\bCUBLAS_STATUS_ALLOC_FAILED\b|\bout of memory\b|"
       r"\bRESOURCE_EXHAUSTED\b.{0,200}\b(?:memory|allocat\w{0,5}|reserve)\b|\bOOM when allocating\b",
       "user_script", None, ERROR, "the job asked for more device memory (GPU or TPU) than the device has: reduce the "
       "batch size or sequence length, or enable gradient checkpointing / mixed precision",
       ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "E xla_util.cc:88]   (1) RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory. That was not "
        "possible.")),
    _s("host_oom", r"\bMemoryError\b|\bUnable to allocate [\d.]{1,20} ?[KMGTP]i?B\b", "user_script", None, ERROR,
       "the job tried to allocate more host memory than available",
       ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.2 GiB for an array",)),
    _s("nan", r"\bloss is nan\b|\bnan loss\b|\bLoss is (?:nan|inf)\b|\bFloatingPointError\b|\bnon-finite loss\b|"
       r"\b(?:loss|training|model) (?:has )?diverged\b",
       "user_script", None, ERROR, "training diverged (NaN/inf loss): check learning rate schedule and data",
       ("FloatingPointError: Loss is nan, stopping training", "training diverged at step 300")),
    _s("not_compiled", r"\bnot compiled with CUDA\b|\bFound no NVIDIA driver\b|\bCUDA driver version is insufficient\b|"
       r"\bno CUDA-capable device\b", "user_script", None, ERROR,
       "the job's environment cannot use the GPU (CPU-only build, or driver mismatch): fix the environment",
       ("AssertionError: Torch not compiled with CUDA enabled",)),
    _s("arch_mismatch", r"\bno kernel image is available for execution\b|"
       r"\bnot compatible with the current PyTorch installation\b|\bsm_\d{2,3} is not compatible\b",
       "user_script", None, ERROR,
       "the job's CUDA build does not support this GPU model: install a build for its compute capability",
       ("CUDA error: no kernel image is available for execution on the device",)),
    _s("version_skew", r"\brequires? [`'\"]?[A-Za-z][\w.-]{1,40}[`'\"]? ?(?:>=|==|~=|<=)\s?\d[\w.]{0,20}",
       "framework", None, ERROR, "an installed library requires another library's version that is not installed: "
       "the environment's package versions disagree",
       ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`: Please run `pip install -U`",)),
    _s("missing_pkg", r"\bNo module named\b|\bModuleNotFoundError\b|\brequires? .{0,60}\b(?:to be installed|installed)\b|"
       r"\bis not installed\b", "user_script", None, ERROR,
       "a package the job needs is missing from its environment: install it or change the configuration",
       ("ModuleNotFoundError: No module named 'flash_attn'", "This example requires `sacrebleu` to be installed")),
    _s("file_missing", r"\bFileNotFoundError\b|\bNo such file or directory\b", "user_script", None, ERROR,
       "a file the job reads does not exist at that path",
       ("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.bin'",)),
    _s("permission_denied", r"\bPermission denied\b|\bPermissionError\b|\bEACCES\b", "user_script", None, ERROR,
       "the job reads or writes a path its user may not access: point it at a location it owns or fix the "
       "permissions (a read-only file system is a storage fault, told apart above)",
       ("PermissionError: [Errno 13] Permission denied: '/data'",
        "W tensorflow/core/framework/op_kernel.cc:1273] OP_REQUIRES failed at save_restore_v2_ops.cc:109 : "
        "Permission denied: /models; Permission denied")),
    # --- symptoms / unknown root cause ---
    _s("kernel_range_assert", r"\bAssertion `t >= 0 && t < n_classes` failed|\bAssertion `(?:input_val|target_val) >= "
       r"zero && (?:input_val|target_val) <= one` failed|\bAssertion `srcIndex < srcSelectDimSize` failed|"
       r"\bAssertion `idx_dim >= 0 && idx_dim < index_size\b.{0,40}failed|\bAssertion `index out of bounds",
       "user_script", None, ERROR,
       "a CUDA kernel's range check failed on the job's data: a label outside [0, classes), a probability outside "
       "[0, 1] or an index past the table's end; check the labels/classes the job is given",
       ("/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:108: cunn_ClassNLLCriterion_updateOutput_kernel: block: "
        "[0,0,0], thread: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [1,0,0], thread: [0,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.")),
    _s("illegal_memory", r"\billegal memory access\b|\bdevice-side assert\b|\bmisaligned address\b", "other", None, ERROR,
       "a CUDA kernel faulted (illegal memory access / device assert); usually a bug in the model code or a library",
       ("RuntimeError: CUDA error: an illegal memory access was encountered",)),
    _s("watchdog", r"\bWatchdog caught collective operation timeout\b|\bcollective operation timeout\b|"
       r"\bNCCL (?:communicator|operations?)\b.{0,200}\b(?:timed out|timeout)\b|\bTimed out waiting\b|"
       r"\bgloo\b.{0,200}\bTimed out\b|\btimed out after\b",
       "other", None, SYMPTOM, "a collective operation timed out: one rank stopped participating (hang, crash or "
       "slow I/O); the root cause is on the rank that stalled",
       ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5) ran for 600000 milliseconds",)),
    _s("nccl_socket_setup", r"\bNCCL WARN\b.{0,200}\b(?:bind failed|Address already in use|Cannot assign requested "
       r"address|No route to host|Network is unreachable)\b",
       "infrastructure", "network", ERROR, "NCCL could not set up its sockets on this node's network (port in use, "
       "address not assignable, no route): the node's network configuration, not the job",
       ("n1:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",)),
    _s("peer_gone", r"\bConnection reset by peer\b|\bBroken pipe\b|\bConnection refused\b|\bConnection closed by peer\b|"
       r"\bremote process exited\b|\bncclRemoteError\b|\bCall to recv from\b.{0,200}\bfailed\b|"
       r"\bsocket\b.{0,100}\b(?:closed|failed)\b",
       "other", None, SYMPTOM, "a peer rank went away; this rank's error is a consequence",
       ("RuntimeError: [gloo/transport/tcp/pair.cc:537] Read error: Connection reset by peer",)),
    _s("sigkill", r"\bexitcode\s{0,4}:\s{0,4}-9\b|\bSignals?\.SIGKILL\b|\bsignal 9\b|\bKilled\b|\bexit code 137\b|"
       r"\bWTERMSIG\s{1,4}9\b", "other", None, KILL,
       "a process was killed with SIGKILL by something outside it (out-of-memory killer, scheduler or admin)",
       ("failed (exitcode: -9) local_rank: 1 (pid: 29548)", "Killed")),
    _s("launcher_summary", r"\bChildFailedError\b|\bfailed \(exitcode: -?\d{1,4}\)|\bSending process \d{1,10} closing signal\b",
       "other", None, SYMPTOM, "the launcher reports a child process failure",
       ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",)),
    _s("time_limit", r"\bDUE TO TIME LIMIT\b|\bTIMEOUT\b.{0,40}\btime limit\b|\bexceeded (?:its |the )?(?:wall ?time|time limit)\b",
       "user_script", None, ERROR,
       "the scheduler stopped the job at the time limit it asked for: request more time, or checkpoint and resume",
       ("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***",)),
    _s("preempted", r"\bPREEMPT(?:ED|ION)?\b|\bCANCELLED AT\b", "other", None, SYMPTOM,
       "the scheduler preempted or cancelled the job",
       ("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2024-01-01T00:00:00 ***",)),
    _s("nccl_error", r"\bNCCL (?:WARN|error)\b|\bncclInternalError\b|\bncclSystemError\b|\bunhandled system error\b|"
       r"\bNCCL INFO\b.{0,300}-> [1-9]\d{0,3}\b",
       "other", None, ERROR, "NCCL reported an error",
       ("n1:1:1 [0] NCCL INFO proxy.cc:698 -> 6", "NCCL WARN Cuda failure 'out of memory'")),
)  # fmt: skip


def match_signature(text: str) -> Signature | None:
    """The first known signature found in ``text`` (its first :data:`MAX_LINE_CHARS` characters)."""
    text = text[:MAX_LINE_CHARS]
    for sig in SIGNATURES:
        if sig.pattern.search(text):
            return sig
    return None
