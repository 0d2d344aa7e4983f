"""The Failure Handler: locate a failed job's root-cause line, classify it, choose an allowed recovery action.

``tail`` keeps what a diagnosis needs while a log streams; ``locator`` finds where training stopped and
the error blocks after it; ``signatures`` and ``tracebacks`` say what a block proves; ``taxonomy`` says
whose failure an error is; ``diagnosis`` decides, ``knn`` and ``llm_vote`` vote where rules cannot;
``gpu_evidence`` adds what the GPUs reported; ``actions`` is the allowlist."""

__all__ = [
    "actions",
    "diagnosis",
    "gpu_evidence",
    "knn",
    "llm_vote",
    "locator",
    "signatures",
    "tail",
    "taxonomy",
    "tracebacks",
]
