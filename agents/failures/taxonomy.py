"""Which party a failure belongs to, decided from where and how the error was raised.

Known signatures (:mod:`~schedmate.agents.failures.signatures`) say what a line *proves* (an Xid, a full
disk). Everything else is decided here from the error itself, in this order:

1. **Infrastructure by what the system reported**: OS errors whose errno names a storage fault
   (``ENOSPC``, ``EDQUOT``, ``EIO``, ``ESTALE``, ``EROFS``, ``ENOTCONN``), a GPU the driver reports busy or
   unusable, and NCCL's own error classes
   (``ncclSystemError``: a socket/system call failed — the node or network; ``ncclInternalError``
   during transport: the network).
2. **Asynchronous CUDA faults** (illegal address, launch failure): CUDA reports them at a later API call,
   so where they surfaced says nothing: ``other``.
3. **The job's own doing**, whoever raised it: resources it asked for (out of memory), an environment
   it brought (missing packages, a CPU-only build), arguments a library's checks rejected (device,
   dtype, shape or size mismatches, bad state dicts, autograd misuse), input files or columns that are
   not there. But one installed package importing a name another installed package lacks, raised
   inside the first, is the two libraries' version skew: ``framework``.
4. **Where it was raised**: the innermost frame in the job's own files → ``user_script``; inside an
   installed package, an error of the caller's contract (``ValueError``, ``TypeError``, ``KeyError``,
   ``FileNotFoundError``, ...) → ``user_script``, a library's internal fault (``AttributeError`` on its
   own objects, ``NameError``, ``UnboundLocalError``, ``RecursionError``, an internal assertion,
   "please report a bug") → ``framework``.
5. **No frames at all** (an exception line alone): the exception's kind still says something — contract
   and attribute errors are most often the job's code or inputs (``user_script``, low confidence); an
   internal assertion is the framework's.

``other`` is left for what none of this decides (a bare ``RuntimeError`` from C++ with no message
that says more, a watchdog timeout, a bare kill).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from schedmate.agents.failures.signatures import GPU_UNAVAILABLE
from schedmate.agents.failures.tracebacks import Frame
from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent

__all__ = ["Verdict", "classify_error", "parse_exception_line"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A category with its component, confidence and a sentence a user can act on."""

    category: FailureCategory
    component: InfraComponent | None
    confidence: float
    why: str


# errno → component (Linux numbering, as Python prints it: "[Errno 28]").
_STORAGE_ERRNO: Final = {5: "EIO", 28: "ENOSPC", 30: "EROFS", 107: "ENOTCONN", 116: "ESTALE", 121: "EREMOTEIO",
                         122: "EDQUOT"}  # fmt: skip
_ERRNO: Final = re.compile(r"\[Errno (\d{1,4})\]|\berrno[ =:]{1,3}(\d{1,4})\b|\bOs \{ code: (\d{1,4})")
_STORAGE_WORDS: Final = re.compile(r"\b(?:Disk quota exceeded|StorageFull|Remote I/O error)\b", re.IGNORECASE)
# NCCL's result classes (nccl.h): system and internal errors come from the node or the network, remote
# errors from a peer that went away, invalid argument/usage from the caller.
_NCCL_SYSTEM: Final = re.compile(r"\bncclSystemError\b|\bunhandled system error\b|\bNCCL Error 2\b")
_NCCL_INTERNAL: Final = re.compile(r"\bncclInternalError\b|\binternal error - please report this issue to the NCCL\b")
_NCCL_USAGE: Final = re.compile(r"\bncclInvalid(?:Argument|Usage)\b|\binvalid (?:argument|usage)\b.{0,40}\bNCCL\b")
_NCCL_CUDA: Final = re.compile(r"\bncclUnhandledCudaError\b|\bunhandled cuda error\b", re.IGNORECASE)
# The GPU or its driver is not usable on this node (another process holds it, the driver did not load).
_GPU_UNAVAILABLE: Final = re.compile(GPU_UNAVAILABLE, re.IGNORECASE)
_CUDA_ASYNC: Final = re.compile(
    r"\billegal memory access\b|\bmisaligned address\b|\bunspecified launch failure\b|\billegal instruction\b|"
    r"\bcudaErrorIllegalAddress\b|\blaunch timed out\b",
    re.IGNORECASE,
)
# Messages of a library's argument checks: the caller handed it something it cannot take.
_CALLER_CHECKS: Final = re.compile(
    r"\bExpected (?:all tensors to be on the same device|object of (?:scalar )?type|tensor for argument|"
    r"scalar type|input batch_size|.{0,60}\bto have\b)|\bfound at least two devices\b|"
    r"\bsize mismatch\b|\bshapes? cannot be multiplied\b|\bmust match the size of tensor\b|"
    r"\bSizes of tensors must match\b|"
    r"\bshape '\[[^\]]{0,80}\]' is invalid for input of size\b|\bError\(s\) in loading state_dict\b|"
    r"\bUnexpected key\(s\) in state_dict\b|\bMissing key\(s\) in state_dict\b|\bdoes not require grad\b|"
    r"\bbackward through the graph a second time\b|\bmodified by an inplace operation\b|"
    r"\bnot in the dataset\b|\bcolumn\b.{0,60}\b(?:not found|does not exist|missing)\b|"
    r"\bindex out of range in self\b|\bTarget -?\d{1,9} is out of bounds\b|\bunexpected keyword argument\b|"
    r"\bmissing \d{1,3} required positional argument|\btakes \d{1,3} positional arguments? but\b|"
    r"\bCUDA out of memory\b|\bstd::bad_alloc\b|"
    r"\bnot compiled with CUDA\b|\bNo module named\b|\bcannot import name\b|\bno kernel image is available\b",
    re.IGNORECASE,
)
# An installed package that imports a name another installed package does not have (version skew between them).
_IMPORT_MISMATCH: Final = re.compile(r"\bcannot import name '?[\w.]+'? from '?([A-Za-z_][\w.]*)")
_INTERNAL_MARKS: Final = re.compile(
    r"\bINTERNAL ASSERT FAILED\b|\bplease report (?:a|this) bug\b|\bplease file (?:a|an) (?:bug|issue)\b|"
    r"\bThis is a bug\b|\bshould not happen\b|\bunreachable\b|"
    r"\.(?:cpp|cc|cxx|hpp|h):\d{1,6}: \w{1,80}: Assertion `",  # a host-side C++ assert in a library's own source
    # (autograd's input_buffer.cpp); a CUDA kernel's assert (a .cu file) checks the data it is given instead
    re.IGNORECASE,
)
# Exceptions that say the caller broke the callee's contract (bad value, type, key, path, environment).
_CONTRACT: Final = frozenset(
    {"ValueError", "TypeError", "KeyError", "FileNotFoundError", "IsADirectoryError", "NotADirectoryError",
     "PermissionError", "ImportError", "ModuleNotFoundError", "JSONDecodeError", "UnicodeDecodeError",
     "ParserError", "ConfigAttributeError", "ConfigKeyError", "MissingMandatoryValue", "InterpolationKeyError",
     "ValidationError", "ArgumentError", "ArgumentTypeError", "HFValidationError", "OutOfMemoryError",
     "MemoryError", "_ArrayMemoryError", "FloatingPointError", "ZeroDivisionError", "AssertionError",
     "StopIteration", "EOFError", "UnpicklingError", "SafetensorError"}
)  # fmt: skip
# Exception classes named for a caller's wrong configuration or usage (Lightning's MisconfigurationException, wandb's
# UsageError, a ConfigError): the same contract as the built-in ones above, whatever the library.
_CONTRACT_NAME: Final = re.compile(r"Misconfigur\w*|\w*Usage(?:Error|Exception)|\w*Config\w*(?:Error|Exception)")
# Exception classes named for a library's own machinery failing (torch.compile's BackendCompilerFailed, dynamo's
# InternalTorchDynamoError): the framework, whatever the message it wraps.
_INTERNAL_NAME: Final = re.compile(r"\w*Compiler\w*(?:Failed|Error)|Internal\w*(?:Error|Exception)")
# Exceptions that, raised inside a library, mean the library's own code is broken (or broken by another
# library's version).
_INTERNAL: Final = frozenset(
    {"AttributeError", "ModuleAttributeError", "NameError", "UnboundLocalError", "RecursionError",
     "NotImplementedError", "SystemError", "IndexError"}
)  # fmt: skip
_EXC_LINE: Final = re.compile(
    r"^\s*(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Failure|Failed|Interrupt))(?::\s?(.*))?$"
)


def parse_exception_line(line: str) -> tuple[str, str] | None:
    """``(type, message)`` of a line that is an exception as Python prints it (``ValueError: bad``)."""
    m = _EXC_LINE.match(line.strip()[:2000])
    if m is None:
        return None
    return m.group(1), (m.group(2) or "").strip()


_PACKAGE: Final = re.compile(
    r"(?:site|dist)-packages[/\\]([A-Za-z_]\w*)|/lib/python[\d.]+[/\\](?!(?:site|dist)-packages)([A-Za-z_]\w*)"
)


def _package(frame: Frame) -> str | None:
    """The installed package a library frame belongs to (``torch``, ``mmengine``)."""
    m = _PACKAGE.search(frame.path)
    return None if m is None else (m.group(1) or m.group(2))


def _caller_package(frames: Sequence[Frame]) -> str | None:
    """The other installed package that called into the raising one, if a library (not the job) did.

    Walks outward from the raising frame past the raising package's own frames; the next frame is the
    caller. ``None`` when the caller is the job's own code or every frame is the raising package's.
    """
    raising = _package(frames[-1])
    for frame in reversed(frames[:-1]):
        if not frame.in_library:
            return None
        pkg = _package(frame)
        if pkg != raising:
            return pkg
    return None


def _errno_component(text: str) -> str | None:
    m = _ERRNO.search(text)
    if m is not None:
        code = int(next(g for g in m.groups() if g is not None))
        if code in _STORAGE_ERRNO:
            return _STORAGE_ERRNO[code]
    return "storage" if _STORAGE_WORDS.search(text) else None


def classify_error(exc_type: str, message: str, frames: Sequence[Frame] = ()) -> Verdict:
    """Category of one raised error, from what it says and where it was raised (see the module docstring)."""
    short = exc_type.rsplit(".", 1)[-1]
    text = f"{short}: {message}"
    inner = frames[-1] if frames else None
    where = f" ({inner.path}:{inner.line})" if inner is not None else ""
    head = f"{short or 'error'}{where}: {message[:200]}"
    errno = _errno_component(text)
    if errno is not None:
        return Verdict("infrastructure", "storage", 0.75, f"the storage failed ({errno}): {head}")
    if _GPU_UNAVAILABLE.search(text):
        return Verdict("infrastructure", "gpu", 0.6, f"the node's GPU or driver is not usable: {head}")
    if _NCCL_SYSTEM.search(text):
        return Verdict("infrastructure", "network", 0.6,
                       f"NCCL could not make a system call (socket/shared memory) on this node: {head}")  # fmt: skip
    if _NCCL_USAGE.search(text):
        return Verdict("user_script", None, 0.6, f"the job called NCCL with invalid arguments: {head}")
    if _NCCL_INTERNAL.search(text):
        return Verdict("infrastructure", "network", 0.5, f"NCCL failed inside its transport: {head}")
    if _CUDA_ASYNC.search(text) or _NCCL_CUDA.search(text):
        return Verdict("other", None, 0.35,
                       f"an asynchronous CUDA fault; where it surfaced does not say who caused it: {head}")  # fmt: skip
    imp = _IMPORT_MISMATCH.search(text)
    if imp is not None and inner is not None and inner.in_library:
        importer, imported = _package(inner), imp.group(1).split(".")[0]
        if importer and imported and importer != imported:  # both installed, one lacks what the other imports
            return Verdict("framework", None, 0.55,
                           f"{importer} imports a name the installed {imported} does not have: the two packages' "
                           f"versions disagree: {head}")  # fmt: skip
    if _INTERNAL_NAME.fullmatch(short):
        return Verdict("framework", None, 0.6, f"a library's own machinery failed: {head}")
    if _CALLER_CHECKS.search(text):
        return Verdict("user_script", None, 0.65, f"the job handed a library something it cannot take: {head}")
    if _INTERNAL_MARKS.search(text):
        return Verdict("framework", None, 0.65, f"a library reports an internal error: {head}")
    if inner is not None and not inner.in_library:
        return Verdict("user_script", None, 0.75, f"raised in the job's own code: {head}")
    if inner is not None:
        if short in _CONTRACT or _CONTRACT_NAME.fullmatch(short):
            caller = _caller_package(frames)
            if caller is not None:
                return Verdict("framework", None, 0.55,
                               f"{_package(inner)} rejected what another library ({caller}) handed it — the two "
                               f"disagree (often their versions): {head}")  # fmt: skip
            return Verdict("user_script", None, 0.6, f"a library rejected the job's input or configuration: {head}")
        if short in _INTERNAL:
            return Verdict("framework", None, 0.6, f"internal error inside a library: {head}")
        return Verdict("other", None, 0.35, head)
    if short in _CONTRACT or _CONTRACT_NAME.fullmatch(short) or short in ("AttributeError", "NameError"):
        return Verdict("user_script", None, 0.45, f"{head} (no stack frames: most often the job's code or inputs)")
    return Verdict("other", None, 0.3, head)
