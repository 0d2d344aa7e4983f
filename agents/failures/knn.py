"""Nearest labelled failure exemplars in embedding space: a vote when rules and tracebacks are silent.

The exemplars are generic error messages (not taken from any evaluation log), each labelled
with the category and component it usually means. The vote is used only when no known
signature matched and the traceback analysis could not decide.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Final

import numpy as np

from schedmate.agents.ml.embeddings import Embedder, Vectors
from schedmate.schemas.jobs_failures import FailureCategory, InfraComponent

__all__ = ["FAILURE_EXEMPLARS", "FailureKnn", "KnnVote"]

# (text, category, component)
FAILURE_EXEMPLARS: Final[tuple[tuple[str, FailureCategory, InfraComponent | None], ...]] = (
    ("GPU memory page retirement failed, hardware error on device", "infrastructure", "gpu"),
    ("the GPU stopped responding and was reset by the driver", "infrastructure", "gpu"),
    ("peer-to-peer link between GPUs reported a fatal link error", "infrastructure", "nvlink"),
    ("network interface link down, lost connection to the fabric switch", "infrastructure", "network"),
    ("remote host unreachable, no route to host on the cluster interconnect", "infrastructure", "network"),
    ("disk quota exceeded on the shared checkpoint filesystem", "infrastructure", "storage"),
    ("lustre client evicted, filesystem operation failed", "infrastructure", "storage"),
    ("the compute node rebooted unexpectedly, job lost", "infrastructure", "node"),
    ("size mismatch for layer weight when loading state dict", "user_script", None),
    ("expected input of shape 32x3 but got 32x4", "user_script", None),
    ("invalid argument passed to the training script", "user_script", None),
    ("the config file has an unknown key", "user_script", None),
    ("dataset path does not exist", "user_script", None),
    ("internal assertion failed inside the library, please report a bug", "framework", None),
    ("this operation is not implemented for the backend", "framework", None),
    ("incompatible versions between the trainer and the distributed engine", "framework", None),
    ("the process received a termination signal", "other", None),
    ("operation timed out waiting for other ranks", "other", None),
    ("unknown error", "other", None),
)


@dataclass(frozen=True)
class KnnVote:
    """The neighbours' answer."""

    category: FailureCategory
    component: InfraComponent | None
    score: float


class FailureKnn:
    """k-NN over :data:`FAILURE_EXEMPLARS` with any :class:`Embedder` (exemplars embedded once)."""

    def __init__(self, embedder: Embedder, k: int = 3) -> None:
        self.embedder = embedder
        self.k = k
        self._vecs: Vectors | None = None
        self._lock = threading.Lock()

    def vote(self, text: str) -> KnnVote:
        """Category (and component) of the nearest exemplars, with their mean similarity (blocking)."""
        with self._lock:
            if self._vecs is None:
                self._vecs = self.embedder.encode([t for t, _, _ in FAILURE_EXEMPLARS])
        q = self.embedder.encode([text[:500]])[0]
        sims = self._vecs @ q
        top = np.argsort(-sims)[: self.k]
        scores: dict[tuple[FailureCategory, InfraComponent | None], float] = {}
        for i in top:
            _, cat, comp = FAILURE_EXEMPLARS[i]
            scores[(cat, comp)] = scores.get((cat, comp), 0.0) + float(sims[i])
        (cat, comp), total = max(scores.items(), key=lambda kv: kv[1])
        return KnnVote(cat, comp, total / self.k)
