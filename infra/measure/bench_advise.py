"""``schedmate bench advise``: advisor latency (new job, resubmission) and jobs/min through the broker.

Workloads are generated repositories (a training script with argparse flags, a model module with
``torch.nn`` layers, a YAML config, a README) of varied families, sizes and datasets; or, with
``--repos``, real repositories and commands from a ``repos.jsonl`` (``workdir`` relative to the
file's folder, as in ``../shared/eval``). The baseline, measured in the same run, is the advisor
without admission and version cache: every submission extracted from scratch.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schedmate.agents.advisor.advisor import Advisor
from schedmate.agents.advisor.extract.sandbox import ExtractionSandbox
from schedmate.agents.advisor.facets import vector_dim
from schedmate.agents.advisor.history import History
from schedmate.agents.advisor.version_cache import VersionCache
from schedmate.agents.ml.embeddings import Embedder
from schedmate.infra.measure._worker import worker_process
from schedmate.infra.run.broker import EmbeddedBroker
from schedmate.infra.settings import Settings
from schedmate.schemas import jobs_estimates, jobs_submitted
from schedmate.schemas.jobs_submitted import JobSubmitted

__all__ = ["bench_advise", "synthetic_repos"]

_FAMILIES = (
    ("ResNet", "image_classification", "CIFAR-10", "nn.Conv2d({c}, {c2}, 3, padding=1)", "nn.BatchNorm2d({c2})"),
    ("MLP", "image_classification", "MNIST", "nn.Linear({c}, {c2})", "nn.BatchNorm1d({c2})"),
    ("GPT", "language_modeling", "OpenWebText", "nn.Linear({c}, {c2})", "nn.LayerNorm({c2})"),
    ("UNet", "semantic_segmentation", "Cityscapes", "nn.Conv2d({c}, {c2}, 3, padding=1)", "nn.BatchNorm2d({c2})"),
    ("LSTM", "language_modeling", "WikiText-103", "nn.Linear({c}, {c2})", "nn.LayerNorm({c2})"),
)


def synthetic_repos(root: Path, n: int) -> list[tuple[Path, str]]:
    """``n`` small training repositories under ``root`` and a command for each."""
    out = []
    for i in range(n):
        fam, _task, data, layer, norm = _FAMILIES[i % len(_FAMILIES)]
        width = 64 * (1 + i % 7)
        repo = root / f"{fam.lower()}-{i}"
        repo.mkdir(parents=True, exist_ok=True)
        blocks = "\n".join(
            f"        self.l{j} = {layer.format(c=width, c2=width)}\n        self.n{j} = {norm.format(c2=width)}"
            for j in range(2 + i % 4)
        )
        (repo / "model.py").write_text(
            f"import torch\nfrom torch import nn\n\n\nclass {fam}Net(nn.Module):\n"
            f"    def __init__(self, width={width}, num_classes=10):\n        super().__init__()\n"
            f"        self.stem = {layer.format(c=3 if 'Conv' in layer else width, c2='width')}\n{blocks}\n"
            f"        self.head = nn.Linear(width, num_classes)\n"
        )
        (repo / "config.yaml").write_text(
            f"dataset: {data}\nbatch_size: {16 * (1 + i % 4)}\nlr: 0.001\nepochs: {5 + i % 10}\n"
        )
        (repo / "README.md").write_text(f"# {fam} on {data}\n\nTraining code.\n")
        (repo / "train.py").write_text(
            "import argparse\nimport torch\nimport yaml\nfrom model import " + fam + "Net\n\n"
            "parser = argparse.ArgumentParser()\nparser.add_argument('--config', default='config.yaml')\n"
            "parser.add_argument('--lr', type=float, default=1e-3)\n"
            "parser.add_argument('--epochs', type=int, default=10)\n"
            "parser.add_argument('--batch-size', type=int, default=32)\n"
            "parser.add_argument('--amp', action='store_true')\n"
            "args = parser.parse_args()\n"
            f"model = {fam}Net(width={width}, num_classes=10)\n"
            "scaler = torch.cuda.amp.GradScaler(enabled=args.amp)\n"
        )  # fmt: skip
        gpus = 1 + i % 4
        cmd = f"torchrun --nproc_per_node={gpus} train.py --config config.yaml --lr {1e-3 * (1 + i % 3):g} --amp"
        out.append((repo, cmd))
    return out


def _repos_from_jsonl(path: Path) -> list[tuple[Path, str]]:
    base = path.parent
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            out.append(((base / r["workdir"]).resolve(), r["command"]))
    return out


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def _latency(repos: list[tuple[Path, str]], data_dir: Path, embedder: Embedder) -> dict[str, Any]:
    history = History(data_dir / "lat" / "store", dim=vector_dim(embedder))
    advisor = Advisor(history, embedder, VersionCache(), sandbox=ExtractionSandbox(processes=1))
    advisor.warm_up()  # as deployed: extraction in a memory-limited child process
    new, resub, baseline = [], [], []
    for i, (repo, cmd) in enumerate(repos):
        sub = JobSubmitted(job_id=f"new-{i}", user="bench", workdir=str(repo), command=shlex.split(cmd))
        new.append(advisor.advise(sub).elapsed_s)
        history.record_outcome(sub.job_id, "completed", time.time() + 600 + i, start_ts=time.time())
    for i, (repo, cmd) in enumerate(repos):
        sub = JobSubmitted(job_id=f"again-{i}", user="bench", workdir=str(repo), command=shlex.split(cmd))
        a = advisor.advise(sub)
        assert a.path == "resubmission", a.path
        resub.append(a.elapsed_s)
    cold = Advisor(History(data_dir / "base" / "store", dim=vector_dim(embedder)), embedder, VersionCache(),
                   sandbox=ExtractionSandbox(processes=1))  # fmt: skip
    cold.warm_up()
    for i, (repo, cmd) in enumerate(repos):  # baseline: no admission, no cache — extract every time
        sub = JobSubmitted(job_id=f"base-{i}", user=f"u{i}", workdir=str(repo), command=shlex.split(cmd))
        baseline.append(cold.advise(sub, record=False).elapsed_s)
    advisor.close()
    cold.close()
    return {
        "jobs": len(repos),
        "new_job_p50_s": round(statistics.median(new), 4),
        "new_job_p95_s": round(_pct(new, 0.95), 4),
        "resubmission_p50_s": round(statistics.median(resub), 4),
        "resubmission_p95_s": round(_pct(resub, 0.95), 4),
        "baseline_reextract_p50_s": round(statistics.median(baseline), 4),
        "resubmission_speedup": round(statistics.median(baseline) / max(statistics.median(resub), 1e-9), 1),
    }


async def _throughput(settings: Settings, repos: list[tuple[Path, str]], data_dir: Path, rounds: int) -> dict[str, Any]:
    async with EmbeddedBroker(settings.partitions) as broker:
        env = dict(os.environ, SCHEDMATE_BROKER=f"kafka://{broker.bootstrap}", SCHEDMATE_DATA_DIR=str(data_dir / "e2e"),
                   SCHEDMATE_LOG_LEVEL="WARNING", SCHEDMATE_PARTITIONS=str(settings.partitions))  # fmt: skip
        worker = contextlib.ExitStack()
        worker.enter_context(worker_process(env))
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5)
        consumer = AIOKafkaConsumer(jobs_estimates.TOPIC.name, bootstrap_servers=broker.bootstrap,
                                    auto_offset_reset="earliest")  # fmt: skip
        await producer.start()
        await consumer.start()
        try:

            async def submit(job_id: str, repo: Path, cmd: str) -> None:
                sub = JobSubmitted(job_id=job_id, user="bench", workdir=str(repo), command=shlex.split(cmd))
                await producer.send(jobs_submitted.TOPIC.name, sub.to_bytes(), key=job_id.encode())

            async def wait_for(ids: set[str], timeout: float) -> None:
                deadline = time.monotonic() + timeout
                while ids and time.monotonic() < deadline:
                    for msgs in (await consumer.getmany(timeout_ms=200)).values():
                        for m in msgs:
                            ids.discard(jobs_estimates.TOPIC.decode(m.value).job_id)
                if ids:
                    raise TimeoutError(f"no estimate within {timeout}s for {len(ids)} job(s)")

            await submit("warmup", *repos[0])
            await producer.flush()
            await wait_for({"warmup"}, 180)  # group join + model load, not timed
            ids = set()
            t0 = time.perf_counter()
            for r in range(rounds):  # round 0: new jobs; later rounds: resubmissions
                for i, (repo, cmd) in enumerate(repos):
                    ids.add(f"e2e-{r}-{i}")
                    await submit(f"e2e-{r}-{i}", repo, cmd)
            await producer.flush()
            n = len(ids)
            await wait_for(ids, 600)
            elapsed = time.perf_counter() - t0
            return {"e2e_jobs": n, "e2e_s": round(elapsed, 2), "jobs_per_min": round(n / elapsed * 60, 1)}
        finally:
            await consumer.stop()
            await producer.stop()
            worker.close()


def bench_advise(settings: Settings, n: int = 40, repos_file: Path | None = None, rounds: int = 3) -> dict[str, Any]:
    """Run the benchmark; returns the figures."""
    with tempfile.TemporaryDirectory(prefix="schedmate-bench-advise-") as tmp:
        root = Path(tmp)
        repos = _repos_from_jsonl(repos_file) if repos_file else synthetic_repos(root / "repos", n)
        embedder = Embedder(settings.embedding_model, settings.embedding_backend)
        out: dict[str, Any] = {"workloads": str(repos_file) if repos_file else f"{n} generated repositories"}
        out.update(_latency(repos, root, embedder))
        out.update(asyncio.run(_throughput(settings, repos, root, rounds)))
        out["targets"] = {"resubmission_p50_s": 0.05, "new_job_p95_s": 2.0}
        return out
