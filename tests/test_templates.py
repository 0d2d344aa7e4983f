"""Template classes with the real embedding model, cached in LanceDB on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.exceptions import EmbeddingModelError
from schedmate.agents.logtext.slots import template_key
from schedmate.agents.logtext.template_store import Store
from schedmate.agents.logtext.templates import TemplateClassifier
from schedmate.agents.ml.embeddings import Embedder
from schedmate.agents.tracker.metric_tracker import MetricTracker


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """The packaged all-MiniLM-L6-v2, loaded once for this module."""
    return Embedder("minilm")


def decide(clf: TemplateClassifier, lines: list[str]) -> list[str | None]:
    """Classes of lines after one classification round."""
    for line in lines:
        clf.class_of(template_key(line), line)
    clf.classify_pending()
    return [clf.class_of(template_key(line), line) for line in lines]


def test_classes_of_unseen_lines(embedder: Embedder, tmp_path: Path) -> None:
    """Errors, warnings, progress and other lines get their classes (none of these are exemplars)."""
    clf = TemplateClassifier(embedder, Store(tmp_path / "db"))
    lines = [
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275",
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices",
        "/usr/lib/python3/site-packages/torch/nn/modules/module.py:1511: UserWarning: Using a target size that is different",
        "epoch 3 | step 1200/5000 | loss 0.8123 | lr 2.0e-04",
        "Saving model checkpoint to /scratch/run7/checkpoint-1500",
    ]
    assert decide(clf, lines) == ["error", "error", "warning", "progress", "other"]


def test_embedding_decides_lines_without_severity_markers(embedder: Embedder, tmp_path: Path) -> None:
    """Lines with no ERROR/WARNING marker are classified by the embedding model."""
    clf = TemplateClassifier(embedder, Store(tmp_path / "db"))
    lines = [
        "Segfault in worker process, core file written to /tmp/core.1234",
        "Initializing distributed process group with backend nccl, world size 8",
    ]
    assert decide(clf, lines) == ["error", "other"]
    assert clf.embedded_templates == 2


def test_restarted_worker_does_not_re_embed(embedder: Embedder, tmp_path: Path) -> None:
    """Decisions persist in LanceDB: a new classifier on the same store embeds nothing it knows."""
    db = tmp_path / "db"
    first = TemplateClassifier(embedder, Store(db))
    lines = ["device-side assert triggered on rank 3", "Loading dataset from /data/shard-0007.arrow"]
    decided = decide(first, lines)
    assert first.embedded_templates == 2
    assert Store(db).count_templates() == 2
    before = embedder.texts
    second = TemplateClassifier(embedder, Store(db))
    assert second.loaded_from_store == 2
    assert [second.class_of(template_key(x), x) for x in lines] == decided
    assert second.pending == 0
    assert embedder.texts == before


def test_tracker_counts_error_lines_once_decided(embedder: Embedder, tmp_path: Path) -> None:
    """Lines fed before their template was classified are credited after the decision."""
    clf = TemplateClassifier(embedder, Store(tmp_path / "db"))
    t = MetricTracker(classes=clf)
    t.feed("j", 1, ["step 1 loss 2.0", "Traceback (most recent call last):", "ValueError: bad shape (3, 4)"])
    clf.classify_pending()
    t.settle()
    counts = t.job("j").counts
    assert counts.error == 2
    assert counts.progress == 1


def test_missing_model_folder_says_what_to_do(tmp_path: Path) -> None:
    """A wrong model path gives one clear message naming the setting."""
    with pytest.raises(EmbeddingModelError, match="SCHEDMATE_EMBEDDING_MODEL"):
        Embedder(str(tmp_path / "nope")).encode(["x"])


def test_failure_knn_votes_where_rules_are_silent(embedder: Embedder) -> None:
    """With no signature and an inconclusive traceback, the nearest labelled exemplars decide (path says so)."""
    from schedmate.agents.failures.diagnosis import diagnose_lines  # noqa: PLC0415
    from schedmate.agents.failures.knn import FailureKnn  # noqa: PLC0415

    lines = [
        *(f"step {i} loss 0.5" for i in range(1, 10)),
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.11/site-packages/somelib/config.py", line 218, in load',
        "RuntimeError: the dataset path /data/imagenet/train does not exist",
    ]
    assert diagnose_lines(lines).category == "other"
    d = diagnose_lines(lines, knn=FailureKnn(embedder))
    assert d.category == "user_script" and "embedding" in d.path
