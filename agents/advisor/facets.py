"""A job's metadata as a vector: four weighted facets (model, task, dataset, setup) of sentence embeddings.

Each facet is embedded on its own, scaled by the square root of its weight and concatenated,
so the cosine of two vectors is the weighted mean of their facets' cosines: a different
dataset or task moves a job far from its neighbours, new hyper-parameters do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedmate.agents.ml.embeddings import Embedder
from schedmate.schemas.jobs_metadata import WorkloadMetadata

__all__ = ["FACETS", "embed_metadata", "facet_texts", "metadata_text", "vector_dim"]

_TEXT_FIELDS = ("model_name", "model_type", "task", "dataset", "params_millions", "framework", "distributed",
                "num_gpus", "precision", "batch_size_per_device", "global_batch_size", "epochs", "max_steps",
                "learning_rate")  # fmt: skip
# The vector is four unit sub-embeddings scaled by sqrt(weight) and concatenated, so its cosine is the
# weighted mean of the parts' cosines: a different dataset or task moves it far more than new hyper-parameters.
_FACETS: tuple[tuple[float, tuple[str, ...]], ...] = (
    (0.30, ("model_name", "model_type", "params_millions")),
    (0.20, ("task",)),
    (0.30, ("dataset",)),
    (0.20, ("framework", "distributed", "num_gpus", "precision", "batch_size_per_device", "global_batch_size",
            "epochs", "max_steps", "learning_rate")),
)  # fmt: skip
FACETS = len(_FACETS)


def facet_texts(meta: WorkloadMetadata) -> list[str]:
    """The texts of the vector's parts (model, task, dataset, setup)."""
    data = meta.model_dump()
    out = []
    for _, names in _FACETS:
        parts = []
        for name in names:
            v = data.get(name)
            if v in (None, [], ""):
                continue
            parts.append(f"{name.replace('_', ' ')}: {', '.join(map(str, v)) if isinstance(v, list) else v}")
        out.append("; ".join(parts) or "unknown")
    return out


def embed_metadata(embedder: Embedder, metas: list[WorkloadMetadata]) -> np.ndarray[Any, Any]:
    """One unit vector per metadata (``FACETS`` times the embedder's width)."""
    texts = [t for m in metas for t in facet_texts(m)]
    vecs = embedder.encode(texts).reshape(len(metas), FACETS, -1)
    weights = np.sqrt(np.asarray([w for w, _ in _FACETS], dtype=np.float32))[None, :, None]
    out = (vecs * weights).reshape(len(metas), -1)
    return np.asarray(out / np.linalg.norm(out, axis=1, keepdims=True), dtype=np.float32)


def metadata_text(meta: WorkloadMetadata) -> str:
    """The metadata as one line of text for embedding: what is trained on what first, then how."""
    data = meta.model_dump()
    parts = []
    for name in _TEXT_FIELDS:
        v = data.get(name)
        if v in (None, [], ""):
            continue
        if isinstance(v, list):
            v = ", ".join(map(str, v))
        parts.append(f"{name.replace('_', ' ')}: {v}")
    return "; ".join(parts) or "unknown workload"


def vector_dim(embedder: Embedder) -> int:
    """Width of a metadata vector made with ``embedder`` (the history's vector column)."""
    return FACETS * embedder.dim
