"""History (LanceDB on disk), estimator, version cache, trace import and model identity — each on its own."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import numpy as np
import pytest

from schedmate.agents.advisor.advisor import Advisor, command_text
from schedmate.agents.advisor.estimator import estimate
from schedmate.agents.advisor.extract.identity import canonical_dataset, model_type_of, task_of
from schedmate.agents.advisor.extract.known import known_model
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.facets import embed_metadata, vector_dim
from schedmate.agents.advisor.history import History, HistoryMatch, Outcome, outcome_recorded
from schedmate.agents.advisor.trace_import import TraceFormatError, import_csv
from schedmate.agents.advisor.version_cache import VersionCache
from schedmate.agents.ml import lance
from schedmate.agents.ml.embeddings import Embedder
from schedmate.infra.measure.bench_advise import synthetic_repos
from schedmate.schemas.jobs_metadata import WorkloadMetadata
from schedmate.schemas.jobs_submitted import JobSubmitted
from tests.conftest import SHARED


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """The real embedding model."""
    return Embedder("minilm")


def test_history_upserts_are_idempotent_and_search_filters(tmp_path: Path) -> None:
    """Pending → outcome; a second identical outcome and a re-submission keep one row; filters apply."""
    h = History(tmp_path, dim=4)
    h.upsert([{"job_id": "a", "user": "u", "workdir": "/w", "metadata": {"x": 1}, "vector": [1, 0, 0, 0],
               "submit_ts": 100.0}])  # fmt: skip
    assert h.record_outcome("a", "completed", 400.0, start_ts=150.0)
    assert h.record_outcome("a", "completed", 400.0)
    h.upsert([{"job_id": "a", "user": "u", "workdir": "/w", "metadata": {"x": 2}, "vector": [1, 0, 0, 0]}],
             only_pending=True)  # fmt: skip
    row = h.get("a")
    assert row is not None and row["duration_s"] == 250.0 and json.loads(row["metadata"]) == {"x": 1}
    h.upsert([{"job_id": "b", "user": "v", "vector": [0.8, 0.6, 0, 0], "submit_ts": 0.0}])
    assert not h.record_outcome("zzz", "failed", 5.0)  # unknown job: written, but no duration to learn from
    h.record_outcome("b", "failed", 30.0)
    assert [m.outcome.job_id for m in h.similar(np.array([1.0, 0, 0, 0]), k=5, threshold=0.7)] == ["a", "b"]
    assert [m.outcome.job_id for m in h.similar(np.array([1.0, 0, 0, 0]), k=5, threshold=0.7, user="v")] == ["b"]
    assert [m.outcome.job_id for m in h.similar(np.array([1.0, 0, 0, 0]), k=5, threshold=0.9)] == ["a"]
    assert h.count() == 3 and h.summary("all") is not None and h.summary("all").n == 2  # type: ignore[union-attr]
    reopened = History(tmp_path, dim=4)  # a restart: everything comes back from disk
    assert reopened.get("a") == {**row, "_distance": row.get("_distance")} or reopened.get("a")["duration_s"] == 250.0  # type: ignore[index]
    assert [m.outcome.job_id for m in reopened.similar(np.array([1.0, 0, 0, 0]), threshold=0.9)] == ["a"]


def test_outcome_recorded_tells_another_process_when_a_job_has_its_outcome(tmp_path: Path) -> None:
    """What the demo waits on before it resubmits: no table, a pending row and another job's outcome say no; the
    job's own outcome, written by another History object (the worker's), says yes."""
    assert not outcome_recorded(tmp_path, "a")
    h = History(tmp_path, dim=4)
    h.upsert([{"job_id": "a", "user": "u", "vector": [1, 0, 0, 0], "submit_ts": 100.0}])
    h.record_outcome("b", "completed", 50.0)
    assert not outcome_recorded(tmp_path, "a")
    h.record_outcome("a", "failed", 400.0)
    assert outcome_recorded(tmp_path, "a") and not outcome_recorded(tmp_path, "a' OR '1'='1")


def _rss_mb() -> float:
    return (
        next(int(x.split()[1]) for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS"))
        / 1024
    )


def test_many_history_writes_keep_lancedb_caches_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write is a new table version; LanceDB's default session caches each (a worker recording thousands of
    outcomes grew ~0.2 MB per write). With the shared session capped, 300 more writes after a warm-up add little
    memory (with the default session: ~60 MB)."""
    monkeypatch.setattr(lance, "CACHE_MB", 1)
    lance._session.cache_clear()
    try:
        h = History(tmp_path, dim=4)
        for b in range(400):
            if b == 100:
                warm = _rss_mb()
            h.record_events([(f"j{b}-{i}", kind, "completed" if kind == "finished" else None, 100.0 + b, None, None)
                             for i in range(4) for kind in ("started", "finished")])  # fmt: skip
        assert h.count() == 1600
        assert _rss_mb() - warm < 25, f"{_rss_mb() - warm:.0f} MB more after 300 writes"
    finally:
        lance._session.cache_clear()


def test_estimator_paths() -> None:
    """Similar matches (scaled by planned length), the QSSF-like fallback, the prior, and nothing at all."""
    o = [Outcome(f"j{i}", "u", "vc", "n", 1, 100.0 * (i + 1), "failed" if i == 0 else "completed", 50.0, 1000.0)
         for i in range(5)]  # fmt: skip
    groups = {("user+gpus", "u", 1): o, ("gpus", 1): o, ("all",): o}

    def summary(kind: str, key: tuple[object, ...]) -> object:
        from schedmate.agents.advisor.history import GroupSummary  # noqa: PLC0415

        members = groups.get((kind, *key))
        return GroupSummary.of(members) if members else None

    m = [HistoryMatch(o[1], 0.99, {"max_steps": 1000}), HistoryMatch(o[2], 0.95, {"max_steps": 1000})]
    e = estimate({"max_steps": 2000}, m, summary, user="u", num_gpus=1)  # type: ignore[arg-type]
    assert e.method == "similar" and e.duration_p50_s == 400.0 and [x.job_id for x in e.matched] == ["j1", "j2"]
    assert "scaled" in e.explanation and 0 < e.confidence <= 0.98
    fb = estimate({}, [], summary, user="u", num_gpus=1)  # type: ignore[arg-type]
    assert (fb.method, fb.duration_p50_s, fb.duration_p90_s, fb.early_exit_prob) == ("fallback:user+gpus", 300.0,
                                                                                     500.0, 0.2)  # fmt: skip
    assert estimate({}, [], summary, user="x", num_gpus=1).method == "prior:gpus"  # type: ignore[arg-type]
    none = estimate({}, [], lambda k, key: None, num_gpus=8)
    assert none.method == "prior:default" and none.confidence < fb.confidence


def test_similar_durations_are_scaled_by_the_work_per_gpu() -> None:
    """A match that ran the same epochs on 4 GPUs took a quarter of what one GPU needs; the same steps at the same
    batch per GPU on more GPUs (a larger global batch) take as long; steps of a batch twice as large are twice the
    work; without comparable lengths nothing is scaled, and no scale leaves its bounds."""

    def p50(new: dict[str, object], old: dict[str, object], gpus: int, old_gpus: int) -> float | None:
        past = Outcome("p", "u", "vc", "n", old_gpus, 1000.0, "completed", 50.0, 1000.0)
        return estimate(new, [HistoryMatch(past, 0.99, old)], lambda k, key: None, num_gpus=gpus).duration_p50_s

    assert p50({"epochs": 10}, {"epochs": 10}, 1, 4) == 4000.0
    assert p50({"epochs": 20}, {"epochs": 10}, 8, 4) == 1000.0
    same_steps = {"max_steps": 500, "global_batch_size": 32}
    assert p50({"max_steps": 500, "global_batch_size": 64}, same_steps, 2, 1) == 1000.0  # weak scaling
    assert p50({"max_steps": 500, "global_batch_size": 64}, same_steps, 1, 1) == 2000.0
    assert p50({"max_steps": 500}, {"epochs": 3}, 8, 1) == 1000.0  # not comparable: as the match ran
    assert p50({"epochs": 1000}, {"epochs": 1}, 1, 8) == 64000.0  # bounded


def test_trace_import_philly(tmp_path: Path) -> None:
    """The Philly CSV seeds history; re-importing changes nothing; per-cluster fallback follows the data."""
    src = SHARED / "data" / "philly_jobs.csv"
    head = "".join(src.read_text().splitlines(keepends=True)[:2001])
    trace = tmp_path / "philly.csv"
    trace.write_text(head + "2017-10-09 07:01:55,not-a-number,1,0,x\n")
    h = History(tmp_path / "db", dim=4)
    r1 = import_csv(h, trace)
    r2 = import_csv(h, trace)
    assert (r1.imported, r1.skipped, h.count()) == (2000, 1, 2000) and r2.imported == 2000
    cluster = head.splitlines()[1].split(",")[-1]
    durs = sorted(float(line.split(",")[1]) for line in head.splitlines()[1:] if line.split(",")[-1] == cluster
                  and line.split(",")[2] == "1")  # fmt: skip
    e = estimate({}, [], h.summary, cluster=cluster, num_gpus=1)
    assert e.method == "fallback:cluster+gpus" and e.duration_p50_s == durs[(len(durs) - 1) // 2]
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(TraceFormatError, match="no duration column"):
        import_csv(h, tmp_path / "bad.csv")


def test_version_cache_reuses_and_refreshes_changed_fields(tmp_path: Path, embedder: Embedder) -> None:
    """Same repo state → cache; an edited config → only the fields it feeds change; resubmission → at once."""
    (repo, cmd), = synthetic_repos(tmp_path / "r", 1)  # fmt: skip
    adv = Advisor(History(tmp_path / "db", dim=vector_dim(embedder)), embedder,
                  VersionCache(tmp_path / "versions.jsonl"))  # fmt: skip
    argv = shlex.split(cmd)
    a1 = adv.advise(JobSubmitted(job_id="1", user="u1", workdir=str(repo), command=argv))
    a2 = adv.advise(JobSubmitted(job_id="2", user="u2", workdir=str(repo), command=argv))  # another user: no admission
    assert (a1.path, a2.path) == ("static", "cache") and a2.metadata == a1.metadata
    cfg = repo / "config.yaml"
    cfg.write_text(
        cfg.read_text().replace("dataset: CIFAR-10", "dataset: ImageNet").replace("batch_size: 16", "batch_size: 48")
    )
    a3 = adv.advise(JobSubmitted(job_id="3", user="u3", workdir=str(repo), command=argv))
    assert a3.path == "cache+refresh" and set(a3.refreshed) == {"dataset", "batch_size_per_device", "global_batch_size"}
    assert a3.metadata.dataset == "ImageNet" and a3.metadata.model_name == a1.metadata.model_name
    reloaded = VersionCache(tmp_path / "versions.jsonl")  # persisted across restarts
    assert reloaded.lookup(str(repo.resolve()), command_text(argv))[0] is not None
    a4 = adv.advise(JobSubmitted(job_id="4", user="u3", workdir=str(repo), command=argv))
    assert (a4.path, a4.resubmission_of) == ("resubmission", "3")


def test_metadata_vectors_separate_workloads(tmp_path: Path, embedder: Embedder) -> None:
    """Hyper-parameter changes keep the cosine ≥ 0.9; a different dataset or task does not."""
    base = WorkloadMetadata(model_name="GPT (12L)", model_type="decoder_only_transformer", task="language_modeling",
                            dataset="OpenWebText", learning_rate=6e-4, batch_size_per_device=12, num_gpus=8)  # fmt: skip
    hp = base.model_copy(update={"learning_rate": 3e-4, "batch_size_per_device": 16})
    data = base.model_copy(update={"dataset": "Shakespeare (char-level)"})
    task = base.model_copy(update={"task": "instruction_finetuning", "dataset": "alpaca_en_demo"})
    v = embed_metadata(embedder, [base, hp, data, task])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] >= 0.95 and v[0] @ v[2] < 0.9 and v[0] @ v[3] < 0.9


def test_identity_rules() -> None:
    """Family, task and dataset vocabularies from names and structure."""
    assert model_type_of(["Qwen/Qwen2.5-7B"], None) == "decoder_only_transformer"
    assert model_type_of(["bert-base-uncased"], None) == "encoder_only_transformer"
    assert model_type_of(["SimpleDenseNet"], None) == "cnn"  # by name alone…
    assert model_type_of(["google/vit-base-patch16-224"], None) == "vision_transformer"
    assert task_of("encoder_only_transformer", code="AutoModelForQuestionAnswering", hints="", pretrained=True,
                   stage=None) == "question_answering_finetuning"  # fmt: skip
    assert (
        task_of("decoder_only_transformer", code="", hints="", pretrained=True, stage=None)
        == "language_model_finetuning"
    )
    assert (
        task_of(None, code="", hints="U-Net: Semantic segmentation", pretrained=False, stage=None)
        == "semantic_segmentation"
    )
    assert canonical_dataset("data/cifar100/train") == "CIFAR-100" and canonical_dataset("nothing here") is None
    # Tacotron is a recurrent seq2seq model, still a speech synthesiser; a vocoder's README names its task
    assert model_type_of(["Tacotron2"], None) == "rnn"
    assert task_of("rnn", code="", hints="Tacotron2", pretrained=False, stage=None) == "text_to_speech"
    assert task_of("cnn", code="", hints="HiFi-GAN Generator", pretrained=False, stage=None) == "text_to_speech"
    assert known_model("runwayml/stable-diffusion-v1-5") == (860, "diffusion_unet")
    # preference and instruction datasets by their hub ids (the binarized UltraFeedback before the raw one)
    assert canonical_dataset("Anthropic/hh-rlhf") == "Anthropic HH-RLHF"
    assert canonical_dataset("HuggingFaceH4/ultrafeedback_binarized") == "UltraFeedback binarized"
    assert canonical_dataset("openbmb/UltraFeedback") == "UltraFeedback"
    assert canonical_dataset("databricks/databricks-dolly-15k") == "Dolly 15k"
    # a name inside an identifier joined by underscores; not a longer word or a numbered subset
    assert canonical_dataset("coco_5_cap_per_img_5_min_word_freq") == canonical_dataset("coco_2017_train") == "COCO"
    assert canonical_dataset("cocoa_beans") is None and canonical_dataset("coco128.yaml") == "COCO128"


def test_hf_script_from_pretrained_and_structure(tmp_path: Path) -> None:
    """An HF Trainer script: checkpoint id → family, size from the table of known checkpoints (exact), else from
    the name; an MLP class → 'mlp' by its layers."""
    (tmp_path / "ft.py").write_text(
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
        "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n"
        "args = TrainingArguments(output_dir='o')\n"
    )
    md = extract_metadata(tmp_path, "accelerate launch --num_processes 2 ft.py --dataset_name wikitext")
    assert (md.model_type, md.task, md.params_millions, md.num_gpus) == ("decoder_only_transformer",
                                                                         "language_model_finetuning", 8030.0, 2)  # fmt: skip
    assert md.dataset == "WikiText-2" and md.provenance["model_name"].line == 2
    (tmp_path / "net.py").write_text("from torch import nn\nclass Tiny(nn.Module):\n    def __init__(self):\n"
                                     "        super().__init__()\n        self.a = nn.Linear(10, 20)\n"
                                     "        self.b = nn.Linear(20, 2)\n")  # fmt: skip
    (tmp_path / "train.py").write_text("from net import Tiny\nmodel = Tiny()\n")
    md2 = extract_metadata(tmp_path, "python train.py")
    assert (md2.model_type, md2.params_millions) == ("mlp", (10 * 20 + 20 + 20 * 2 + 2) / 1e6)
    assert time.time() > 0


def test_history_never_stores_a_token_from_the_command(tmp_path: Path, embedder: Embedder) -> None:
    """A submission whose command carries a token (published raw by a connector with redaction off) is recorded
    in the history with the token redacted, and its resubmission is still recognised."""
    (repo, cmd), = synthetic_repos(tmp_path / "r", 1)  # fmt: skip
    history = History(tmp_path / "db", dim=vector_dim(embedder))
    adv = Advisor(history, embedder, VersionCache())
    argv = [*shlex.split(cmd), "--hf-token", "hf_secretsecretsecretsecretsecretsecret"]
    adv.advise(JobSubmitted(job_id="1", user="u1", workdir=str(repo), command=argv))
    rows = history.recent_for("u1", str(repo.resolve()))
    assert rows and "hf_secret" not in rows[0]["command"] and "[REDACTED]" in rows[0]["command"]
    again = adv.advise(JobSubmitted(job_id="2", user="u1", workdir=str(repo), command=argv))
    assert again.resubmission_of == "1"


def test_a_damaged_history_gives_one_clear_message_and_can_be_repaired(tmp_path: Path) -> None:
    """A corrupted data file: reads raise StoreError naming `schedmate history repair`; repair brings back a
    readable table (the newest readable version, or a fresh one with the damaged table kept aside)."""
    from schedmate.agents.advisor.history import repair  # noqa: PLC0415
    from schedmate.agents.exceptions import StoreError  # noqa: PLC0415

    h = History(tmp_path / "db", dim=8)
    h.upsert([{"job_id": "a", "user": "u", "status": "completed", "duration_s": 60.0, "vector": [0.1] * 8}])
    h.upsert([{"job_id": "b", "user": "u", "status": "completed", "duration_s": 90.0, "vector": [0.2] * 8}])
    data = sorted((tmp_path / "db" / "history.lance" / "data").iterdir())
    data[-1].write_bytes(b"\x00garbage")
    with pytest.raises(StoreError, match="history repair"):
        History(tmp_path / "db", dim=8).warm_up()
    said = repair(tmp_path / "db")
    assert said.startswith(("restored version", "no readable version")), said
    again = History(tmp_path / "db", dim=8)
    assert again.count() in (0, 1)
    again.upsert([{"job_id": "c", "user": "u", "status": "pending"}])
    assert again.get("c") is not None


def test_known_datasets_are_data_with_sources() -> None:
    """The dataset table is a data file: every row compiles, names its source, and the order keeps specific names
    first (CIFAR-100 before CIFAR-10, WikiText-103 before WikiText-2)."""
    import json  # noqa: PLC0415
    import re  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    import schedmate.agents.advisor.extract as extract_pkg  # noqa: PLC0415
    from schedmate.agents.advisor.extract.identity import canonical_dataset  # noqa: PLC0415

    rows = json.loads((Path(extract_pkg.__file__).parent / "known_datasets.json").read_text())["datasets"]
    assert rows and all(re.compile(r["pattern"]) and r["name"] and r["source"] for r in rows)
    assert canonical_dataset("--data-set CIFAR100") == "CIFAR-100" and canonical_dataset("cifar10") == "CIFAR-10"
    assert canonical_dataset("wikitext-103-raw-v1") == "WikiText-103" and canonical_dataset("hello") is None


EMBEDDING_LM = """
import torch.nn as nn

vocab_size = 65536


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d, bias=False)


class RWKV(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(layers)])
        self.head = nn.Linear(d, vocab_size, bias=False)
"""


def test_a_model_that_embeds_tokens_with_only_linear_layers_is_no_image_mlp(tmp_path: Path) -> None:
    """An embedding table over a vocabulary plus linear layers (an RWKV-style recurrence in custom kernels) is not an
    MLP over image features: the family stays unsaid and the task is language modelling."""
    (tmp_path / "train.py").write_text(EMBEDDING_LM + "\nmodel = RWKV(64, 2)\n")
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_type != "mlp"
    assert meta.task == "language_modeling"


def test_known_families_from_hub_ids_config_stems_and_experiment_files(tmp_path: Path) -> None:
    """The known-models table covers detector, backbone and LLM families beyond torchvision's (YOLOX, Ultralytics,
    DINOv2, SegFormer, BiT, open LLMs, T5 v1.1) by hub id or file stem; a YOLOX-style experiment file given with
    ``-f/--exp_file`` names the architecture like a config file does."""
    assert known_model("exps/default/yolox_s.py") == (9.0, "cnn_detector")
    assert known_model("nvidia/segformer-b2-finetuned-ade-512-512") == (27.5, "vision_transformer")
    assert known_model("EleutherAI/pythia-1.4b-deduped") == (1414.6, "decoder_only_transformer")
    assert known_model("google/t5-v1_1-base") == (247.6, None)
    assert known_model("BiT-M-R50x1") == (25.5, "cnn")
    assert known_model("yolox_sandbox") is None and known_model("pythia-1.4") is None
    (tmp_path / "exps").mkdir()
    (tmp_path / "exps" / "yolox_m.py").write_text("class Exp:\n    depth = 0.67\n    width = 0.75\n")
    (tmp_path / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('-f', '--exp_file', default=None)\n"
        "p.add_argument('-b', '--batch-size', type=int, default=64)\nargs = p.parse_args()\n"
    )
    md = extract_metadata(tmp_path, "python train.py -f exps/yolox_m.py -b 64")
    assert (md.model_name, md.params_millions, md.model_type) == ("yolox_m", 25.3, "cnn_detector")


_MM_BASE_MODEL = """\
model = dict(
    type='ImageClassifier',
    backbone=dict(type='ResNet', depth=50, num_stages=4, out_indices=(3, ), style='pytorch'),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(type='LinearClsHead', num_classes=1000, in_channels=2048),
)
"""


def test_openmmlab_config_models_by_backbone_depth_detector_and_decode_head(tmp_path: Path) -> None:
    """An OpenMMLab config whose registry classes live in an installed package names its model by the backbone and
    depth (a classifier around ResNet depth 50 is ResNet-50 with its known count), by the detector around it, or by
    the decode head that makes a segmenter what it is (no count where the table has none)."""
    (tmp_path / "configs" / "_base_").mkdir(parents=True)
    (tmp_path / "configs" / "_base_" / "resnet50.py").write_text(_MM_BASE_MODEL)
    (tmp_path / "configs" / "cls.py").write_text("_base_ = ['./_base_/resnet50.py']\n")
    (tmp_path / "configs" / "det.py").write_text(
        "model = dict(type='FasterRCNN', backbone=dict(type='ResNet', depth=101), neck=dict(type='FPN'))\n"
    )
    (tmp_path / "configs" / "seg.py").write_text(
        "model = dict(type='EncoderDecoder', backbone=dict(type='mit_b2'), decode_head=dict(type='SegFormerHead'))\n"
    )
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom mmengine.config import Config\nfrom mmengine.runner import Runner\n"
        "p = argparse.ArgumentParser()\np.add_argument('config')\nargs = p.parse_args()\n"
        "cfg = Config.fromfile(args.config)\nrunner = Runner.from_cfg(cfg)\nrunner.train()\n"
    )
    cls = extract_metadata(tmp_path, "python train.py configs/cls.py")
    assert (cls.model_name, cls.params_millions, cls.model_type) == ("ResNet-50", 25.6, "cnn")
    det = extract_metadata(tmp_path, "python train.py configs/det.py")
    assert (det.model_name, det.params_millions) == ("FasterRCNN (ResNet-101)", None)
    seg = extract_metadata(tmp_path, "python train.py configs/seg.py")
    assert (seg.model_name, seg.params_millions, seg.model_type) == ("SegFormer (mit_b2)", None, "vision_transformer")


def test_a_text_repeated_in_one_batch_is_encoded_once(embedder: Embedder) -> None:
    """Metadata facets repeat (one model, task and dataset over many variants): each distinct text goes through the
    model once and every row still gets its own text's vector, as if encoded alone."""
    texts = ["model name: ResNet-50", "dataset: ImageNet-1k", "model name: ResNet-50", "task: classification"]
    before = embedder.encoded
    v = embedder.encode(texts)
    assert v.shape[0] == 4 and embedder.encoded - before == 3
    assert np.array_equal(v[0], v[2]) and not np.allclose(v[0], v[1])
    alone = embedder.encode(["dataset: ImageNet-1k"])[0]
    assert np.allclose(v[1], alone, atol=1e-5)


def test_pycls_regnet_configs_and_efficientdet_names_are_known_architectures() -> None:
    """pycls's model-zoo config stems (``RegNetX-400MF_dds_8gpu``) and EfficientDet's names count as the known
    architectures their tables list; a made-up suffix of a known name does not."""
    assert known_model("RegNetX-400MF_dds_8gpu") == (5.2, "cnn")
    assert known_model("RegNetY-1.6GF") == (11.2, "cnn")
    assert known_model("tf_efficientdet_d0") == (3.9, "cnn_detector")
    assert known_model("RegNetZ-400MF") is None
