"""Online log-template mining (drain3) and one embedding-based class decision per template.

Every distinct template is classified once into ``error | warning | progress | other``
by nearest labelled exemplars in embedding space; decisions are cached in memory and
in LanceDB, so a restarted worker embeds nothing it has seen before. Lines whose
numeric slots name training metrics are ``progress`` by rule (no embedding needed).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Final, Literal

import numpy as np
from drain3 import TemplateMiner  # type: ignore[import-untyped]
from drain3.template_miner_config import TemplateMinerConfig  # type: ignore[import-untyped]

from schedmate.agents.logtext.slots import learn_spec
from schedmate.agents.logtext.template_store import Store
from schedmate.agents.ml.embeddings import Embedder, Vectors

__all__ = ["CLASSES", "EXEMPLARS", "TemplateClassifier", "rule_class"]

LineClass = Literal["error", "warning", "progress", "other"]
CLASSES: Final = ("error", "warning", "progress", "other")

# Generic, framework-agnostic exemplars of each class (not taken from any evaluation log).
EXEMPLARS: Final[dict[str, tuple[str, ...]]] = {
    "error": (
        "Traceback (most recent call last):",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "NCCL error in: ProcessGroupNCCL.cpp, unhandled system error",
        "Segmentation fault (core dumped)",
        "ERROR: process exited with non-zero exit code 1",
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.bin'",
        "ValueError: Expected input batch_size to match target batch_size",
        "ModuleNotFoundError: No module named 'apex'",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
        "terminate called after throwing an instance of 'c10::Error'",
        "AssertionError: assert x is not None",
        "KeyError: 'input_ids'",
        "Fatal Python error: Aborted",
        "ERROR - training failed with an exception",
        "OSError: [Errno 28] No space left on device",
        "Killed",
    ),
    "warning": (
        "UserWarning: this overload is deprecated and will be removed in a future release",
        "WARNING: the default value of this argument will change",
        "FutureWarning: `evaluation_strategy` is deprecated, use `eval_strategy` instead",
        "DeprecationWarning: pkg_resources is deprecated",
        "warnings.warn(",
        "Some weights of the model checkpoint were not used when initializing the model",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect, retrying",
        "Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 32768",
        "WARN: falling back to the slower implementation",
    ),
    "progress": (
        "epoch 1 step 100 loss 2.31 lr 0.001",
        "iter 100: loss 2.3041, time 50.12ms",
        "{'loss': 1.2, 'learning_rate': 5e-05, 'epoch': 0.5}",
        "45%| 450/1000 [00:10<01:30, 9.8it/s, loss=1.2]",
        "Epoch 3/10 - loss: 0.5210 - accuracy: 0.8100",
        "step 500 | loss 1.23 | 12000 tokens/s",
        "Train Epoch: 2 [1280/60000 (2%)] Loss: 0.301",
        "iteration 200/ 10000 | elapsed time per iteration (ms): 512.3 | lm loss: 3.2E+00",
    ),
    "other": (
        "Loading checkpoint shards",
        "Saving model checkpoint to /out/checkpoint-500",
        "Using device: cuda",
        "Model config GPT2Config {",
        "Namespace(batch_size=32, lr=0.001, epochs=3)",
        "***** Running training *****",
        "Num examples = 1000",
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2",
        "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
        "torch.distributed process group initialized with backend nccl",
        "Added key: store_based_barrier_key:1 to store for rank: 0",
        "}",
        "Configuration saved in /out/config.json",
        "Training completed.",
        "Downloading and preparing dataset",
    ),
}


# Explicit severity markers decide before any embedding (cheap first); a warning marker wins
# over error words it may mention ("UserWarning: … error …").
_WARNING_MARK: Final = re.compile(r"\b(?:WARNING|WARN|Warning|\w+Warning)\b|^\[W ")
_ERROR_MARK: Final = re.compile(
    r"\b(?:ERROR|FATAL|CRITICAL|Traceback|\w+Error|\w+Exception|Segmentation fault|core dumped|Aborted)\b|"
    r"\b[A-Z]\w*Failed(?=: )|"  # an exception class named for a failure (torch.compile's BackendCompilerFailed: …)
    r"terminate called after throwing"  # a C++ exception escaping (c10::Error), often glued to a progress bar
)


def rule_class(line: str) -> str | None:
    """Class from an explicit severity marker, if the line has one."""
    if _WARNING_MARK.search(line):
        return "warning"
    if _ERROR_MARK.search(line):
        return "error"
    return None


def _miner() -> TemplateMiner:
    cfg = TemplateMinerConfig()
    cfg.profiling_enabled = False
    cfg.drain_sim_th = 0.5
    cfg.drain_depth = 4
    cfg.drain_max_clusters = 20_000
    cfg.parametrize_numeric_tokens = True
    return TemplateMiner(config=cfg)


class TemplateClassifier:
    """Classifies templates once; thread-safe; persistence through :class:`Store` when given."""

    def __init__(
        self,
        embedder: Embedder | None,
        store: Store | None = None,
        k: int = 3,
        max_keys: int = 200_000,
        max_pending: int = 10_000,
    ) -> None:
        self._embedder = embedder
        self._store = store
        self._k = k
        self._miner = _miner()
        self._lock = threading.Lock()
        self._by_key: OrderedDict[str, str] = OrderedDict()  # template key → class
        self._by_cluster: dict[str, tuple[str, str]] = {}  # drain template → (class, path)
        self._pending: OrderedDict[str, tuple[str, str]] = OrderedDict()  # drain template → (key, line)
        self._pending_keys: dict[str, int] = {}  # template key → lines seen before its decision
        self._max_keys = max_keys
        self._max_pending = max_pending
        self._protos: Vectors | None = None
        self._proto_labels: list[str] = []
        self.embedded_templates = 0
        self.loaded_from_store = 0
        if store is not None:
            for template, (cls, path) in store.load_template_classes().items():
                self._by_cluster[template] = (cls, path)
            self.loaded_from_store = len(self._by_cluster)

    def class_of(self, key: str, line: str) -> str | None:
        """Class of the template of ``line`` (None until :meth:`classify_pending` decides it)."""
        cls = self._by_key.get(key)
        if cls is not None:
            return cls
        with self._lock:
            cluster = self._miner.add_log_message(key)["template_mined"]
            known = self._by_cluster.get(cluster)
            if known is not None:
                self._remember(key, known[0])
                return known[0]
            ruled = "progress" if learn_spec(line).is_progress else rule_class(line)
            if ruled is not None:
                self._by_cluster[cluster] = (ruled, "rules")
                self._remember(key, ruled)
                return ruled
            if len(self._pending) < self._max_pending and cluster not in self._pending:
                self._pending[cluster] = (key, line)
            if key in self._pending_keys or len(self._pending_keys) < self._max_pending:
                self._pending_keys[key] = self._pending_keys.get(key, 0) + 1
        return None

    def _remember(self, key: str, cls: str) -> None:
        self._by_key[key] = cls
        if len(self._by_key) > self._max_keys:
            self._by_key.popitem(last=False)

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model this classifier uses."""
        return self._embedder

    def warm_up(self) -> None:
        """Load the model and embed the exemplars now (blocking)."""
        if self._embedder is not None:
            self._prototypes()

    @property
    def pending(self) -> int:
        """Templates waiting for a decision."""
        return len(self._pending)

    def _prototypes(self) -> tuple[Vectors, list[str]]:
        if self._protos is None:
            assert self._embedder is not None
            labels = [c for c in CLASSES for _ in EXEMPLARS[c]]
            texts = [t for c in CLASSES for t in EXEMPLARS[c]]
            self._protos = self._embedder.encode(texts)
            self._proto_labels = labels
        return self._protos, self._proto_labels

    def classify_texts(self, texts: list[str]) -> list[str]:
        """Embedding k-NN class of each text (blocking)."""
        if self._embedder is None:
            return ["other"] * len(texts)
        protos, labels = self._prototypes()
        vecs = self._embedder.encode(texts)
        return self._vote(vecs @ protos.T, labels)

    def _vote(self, sims: Vectors, labels: list[str]) -> list[str]:
        out = []
        for row in sims:
            top = np.argsort(-row)[: self._k]
            scores: dict[str, float] = {}
            for i in top:
                scores[labels[i]] = scores.get(labels[i], 0.0) + float(row[i])
            out.append(max(scores, key=scores.__getitem__))
        return out

    def classify_pending(self) -> dict[str, int]:
        """Embed and decide every pending template (blocking; run in a thread).

        Returns, per class, how many lines seen before the decision belong to it, so a
        caller can credit its counters.
        """
        with self._lock:
            batch = list(self._pending.items())
            self._pending.clear()
            waiting, self._pending_keys = self._pending_keys, {}
        if not batch:
            return {}
        if self._embedder is None:
            classes = ["other"] * len(batch)
            vecs: Vectors | None = None
            path = "none"
        else:
            protos, labels = self._prototypes()
            vecs = self._embedder.encode([line for _, (_, line) in batch])
            classes = self._vote(vecs @ protos.T, labels)
            path = "embedding"
        self.embedded_templates += len(batch)
        rows = []
        with self._lock:
            for i, ((cluster, (_key, _line)), cls) in enumerate(zip(batch, classes, strict=True)):
                self._by_cluster[cluster] = (cls, path)
                if vecs is not None:
                    rows.append({"key": cluster, "template": cluster, "cls": cls, "path": path,
                                 "vector": vecs[i].tolist()})  # fmt: skip
        credited: dict[str, int] = {}
        for key, n in waiting.items():
            cls_of_key = self.class_of(key, key)
            if cls_of_key is not None:
                credited[cls_of_key] = credited.get(cls_of_key, 0) + n
        if self._store is not None and rows:
            self._store.add_templates(rows)
        return credited
