"""The ReAct agent: mechanics, confinement, budget and proof of every value (scripted and real local server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schedmate.agents.advisor.react import ReactReport, react_fill
from schedmate.agents.ml.llm import LLMClient
from schedmate.schemas.jobs_metadata import WorkloadMetadata

HAS_LLAMA = True
try:
    import llama_cpp  # noqa: F401
except ImportError:  # pragma: no cover - the [llm] extra is part of the test install
    HAS_LLAMA = False

TRAIN = "import torch\nLR = 0.0125\nBATCH = 48\nopt = torch.optim.SGD(params, lr=LR)\n"
OPEN = WorkloadMetadata()


class Scripted:
    """An OpenAI-compatible server whose answer depends on the turn (sections of the transcript) and on the
    request's temperature; it records every request."""

    def __init__(self, turns: Callable[[int, float], dict[str, Any]]) -> None:
        self.turns = turns
        self.url = ""
        self.requests: list[dict[str, Any]] = []

    async def __aenter__(self) -> Scripted:
        from aiohttp import web  # noqa: PLC0415

        async def complete(req: web.Request) -> web.Response:
            body = await req.json()
            self.requests.append(body)
            turn = body["messages"][1]["content"].count("\n\n")
            content = json.dumps(self.turns(turn, float(body.get("temperature", 0.0))))
            return web.json_response({
                "id": "x", "object": "chat.completion", "created": 0, "model": "local",
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            })  # fmt: skip

        app = web.Application()
        app.router.add_post("/v1/chat/completions", complete)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()


async def fill(
    turns: Callable[[int, float], dict[str, Any]], work: Path, **kw: Any
) -> tuple[WorkloadMetadata, ReactReport, list[dict[str, Any]]]:
    """Run the agent on ``work`` against a scripted server; the server's recorded requests come back too."""
    async with Scripted(turns) as server:
        client = LLMClient(server.url, timeout_s=10)
        try:
            meta, report = await react_fill(work, "python train.py", OPEN, client, **kw)
        finally:
            await client.close()
    return meta, report, server.requests


def _script(turn: int, _: float) -> dict[str, Any]:
    return [
        {"thought": "look", "action": "list_files", "path": "."},
        {"thought": "escape", "action": "read_file", "path": "../secret.txt"},
        {"thought": "read", "action": "read_file", "path": "train.py"},
        {"thought": "done", "action": "answer", "answers": [
            {"field": "learning_rate", "value": "0.0125", "file": "train.py", "quote": "LR = 0.0125"},
            {"field": "batch_size_per_device", "value": "64", "file": "train.py", "quote": "BATCH = 48"},
            {"field": "epochs", "value": "10", "file": "config.yaml", "quote": "epochs: 10"},
            {"field": "max_steps", "value": "500", "file": "train.py", "quote": "max_steps = 500"},
        ]},
    ][min(turn, 3)]  # fmt: skip


def script_rate(turn: int, _: float) -> dict[str, Any]:
    """Reads train.py and answers the rate the static pass cannot tell (a name no consumer or convention uses)."""
    return [
        {"thought": "read", "action": "read_file", "path": "train.py"},
        {"thought": "done", "action": "answer", "answers": [
            {"field": "learning_rate", "value": "0.0125", "file": "train.py", "quote": "rate = 0.0125"},
            {"field": "batch_size_per_device", "value": "64", "file": "train.py", "quote": "rate = 0.0125"},
        ]},
    ][min(turn, 1)]  # fmt: skip


RATE_TRAIN = "import json\ncfg = json.load(open(pick()))\nrate = 0.0125\n"


async def test_only_values_proven_by_a_read_file_are_accepted(tmp_path: Path) -> None:
    """The agent's tools stay in the workspace; a value not in its quote, from an unread file, or in a quote
    that is no line of the file is rejected; the accepted one carries its file, line and path ``react``."""
    work = tmp_path / "job"
    work.mkdir()
    (work / "train.py").write_text(TRAIN)
    (work / "config.yaml").write_text("epochs: 10\n")
    (tmp_path / "secret.txt").write_text("TOKEN=abc\n")
    meta, report, requests = await fill(_script, work, samples=1)
    assert meta.learning_rate == 0.0125 and meta.batch_size_per_device is None and meta.epochs is None
    src = meta.provenance["learning_rate"]
    assert (src.file, src.line, src.path) == ("train.py", 2, "react")
    assert report.refused_paths == ["../secret.txt"]
    assert not any("TOKEN=abc" in json.dumps(r) for r in requests)  # nothing outside reached the model
    assert len(report.rejected) == 3 and report.calls == 4 and report.prompt_tokens == 400


async def test_samples_vote_and_turns_are_bounded(tmp_path: Path) -> None:
    """Several samples vote (a majority of those that answered decides); a sample that never answers stops
    after its turn budget."""
    (tmp_path / "train.py").write_text("A = 0.1\nB = 0.2\n")

    def vote(turn: int, temperature: float) -> dict[str, Any]:
        if turn == 0:
            return {"thought": "", "action": "read_file", "path": "train.py"}
        value, line = ("0.1", "A = 0.1") if temperature == 0.0 else ("0.2", "B = 0.2")
        return {"thought": "", "action": "answer",
                "answers": [{"field": "learning_rate", "value": value, "file": "train.py", "quote": line}]}  # fmt: skip

    meta, _, _ = await fill(vote, tmp_path, samples=3)
    assert meta.learning_rate == 0.2

    listing = {"thought": "", "action": "list_files", "path": "."}
    meta2, report, _ = await fill(lambda turn, t: listing, tmp_path, samples=2, max_turns=3)
    assert report.turns == 6 and report.calls == 6 and meta2.learning_rate is None


async def test_nothing_open_means_no_call(tmp_path: Path) -> None:
    """When the static pass found every field the agent may fill, the LLM is not called."""
    full = WorkloadMetadata(model_name="m", dataset="d", batch_size_per_device=1, epochs=1, max_steps=1,
                            learning_rate=0.1)  # fmt: skip
    client = LLMClient("http://127.0.0.1:9/v1", timeout_s=1)
    try:
        meta, report = await react_fill(tmp_path, "python x.py", full, client)
    finally:
        await client.close()
    assert meta == full and report.calls == 0


@pytest.mark.skipif(not HAS_LLAMA, reason="llama-cpp-python not installed (pip install 'schedmate[llm]')")
@pytest.mark.slow
async def test_the_local_server_runs_the_loop_within_budget(tmp_path: Path) -> None:
    """Against the real llama.cpp server and packaged Gemma: the loop ends within its turn budget, the report
    accounts calls and tokens, and whatever is accepted is verbatim in a workspace file."""
    from schedmate.infra.run.llm_server import LlamaServer, gemma_gguf  # noqa: PLC0415

    work = tmp_path / "job"
    work.mkdir()
    (work / "train.py").write_text(TRAIN)
    model = gemma_gguf(tmp_path / "models")
    async with LlamaServer(model, threads=2) as server:
        client = LLMClient(server.endpoint, timeout_s=120)
        try:
            meta, report = await react_fill(work, "python train.py", OPEN, client, samples=2, max_turns=3)
        finally:
            await client.close()
    assert 1 <= report.calls <= 6 and report.turns <= 6
    assert report.completion_tokens > 0, "the server answered nothing (the request schema must be one it accepts)"
    for name, value in report.accepted.items():
        src = meta.provenance[name]
        assert src.path == "react" and str(value).rstrip("0").rstrip(".") in (work / src.file).read_text()


async def test_schedmate_advise_reports_the_react_path(tmp_path: Path) -> None:
    """`schedmate advise --json` with an LLM endpoint: the agent fills what the static pass left open, the
    field's provenance says ``react`` and the output carries the agent's calls, tokens and seconds."""
    import asyncio  # noqa: PLC0415
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415

    work = tmp_path / "job"
    work.mkdir()
    (work / "train.py").write_text(RATE_TRAIN)
    async with Scripted(script_rate) as server:
        env = dict(os.environ, SCHEDMATE_DATA_DIR=str(tmp_path / "data"), SCHEDMATE_LLM_ENDPOINT=server.url)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "schedmate.infra.cli", "advise", "--workdir", str(work), "--json", "--",
            "python", "train.py", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, err.decode()[-2000:]
    got = json.loads(out)
    assert got["metadata"]["learning_rate"] == 0.0125 and got["provenance"]["learning_rate"]["path"] == "react"
    assert got["path"].endswith("+react") and got["react"]["calls"] >= 2 and "seconds" in got["react"]


async def test_schedmate_eval_advise_runs_the_agent_on_every_job(tmp_path: Path) -> None:
    """`schedmate eval advise --react` over several jobs: one client, one event loop for all of them (the second
    job used to fail with a semaphore bound to the first job's loop); every job's calls are reported."""
    import asyncio  # noqa: PLC0415
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415

    records = []
    for i in range(2):
        work = tmp_path / "repos" / f"job{i}"
        work.mkdir(parents=True)
        (work / "train.py").write_text(RATE_TRAIN)
        records.append({"id": f"job{i}", "workdir": f"repos/job{i}", "command": "python train.py",
                        "expected": {"learning_rate": 0.0125}})  # fmt: skip
    labels = tmp_path / "repos.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in records))
    async with Scripted(script_rate) as server:
        env = dict(os.environ, SCHEDMATE_DATA_DIR=str(tmp_path / "data"), SCHEDMATE_LLM_ENDPOINT=server.url)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "schedmate.infra.cli", "eval", "advise", str(labels), "--root", str(tmp_path),
            "--react", "--json", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, err.decode()[-2000:]
    got = json.loads(out)
    assert got["right"] == got["total"] == 2
    assert [j["id"] for j in got["react"]["jobs"]] == ["job0", "job1"]
    assert all(j["calls"] >= 2 for j in got["react"]["jobs"])
