"""An async client for any OpenAI-compatible LLM server (vLLM on GPUs, llama.cpp on CPUs).

Every call asks for JSON that follows a pydantic model's schema (``json_schema`` response
format for vLLM, ``json_object`` + ``schema`` for llama.cpp's server), validates the answer
with pydantic, and returns ``None`` — never raises — when the server is slow, down, or
answers nonsense, so callers fall back to their non-LLM path and say so. Concurrency is
bounded, calls time out and are retried with back-off, a circuit breaker stops calling a
failing server for a while, and tokens and latency are accounted. Text is redacted of
secrets before it is sent. Answers are data: nothing an LLM says is ever executed.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import openai
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from schedmate.infra.logging import get_logger
from schedmate.infra.redact import redact

__all__ = ["CircuitBreaker", "LLMClient", "LLMStats", "client_from_settings"]

log = get_logger(__name__)
T = TypeVar("T", bound=BaseModel)
Mode = Literal["json_schema", "json_object"]
_RETRYABLE = (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError, openai.InternalServerError)


@dataclass
class LLMStats:
    """Token and latency accounting."""

    calls: int = 0
    answered: int = 0
    invalid: int = 0
    failed: int = 0
    skipped_open_circuit: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latencies_s: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, float | int]:
        """Summary for logs and benchmarks."""
        lat = sorted(self.latencies_s)
        return {
            "calls": self.calls, "answered": self.answered, "invalid": self.invalid, "failed": self.failed,
            "skipped_open_circuit": self.skipped_open_circuit, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_p50_s": lat[len(lat) // 2] if lat else 0.0,
        }  # fmt: skip


@dataclass
class CircuitBreaker:
    """Opens after ``threshold`` consecutive failures; lets one trial call through after ``cooldown_s``."""

    threshold: int = 3
    cooldown_s: float = 30.0
    failures: int = 0
    opened_at: float | None = None

    def allow(self) -> bool:
        """Whether a call may go to the server now."""
        if self.opened_at is None:
            return True
        return time.monotonic() - self.opened_at >= self.cooldown_s  # half-open: one trial

    def record(self, ok: bool) -> None:
        """Count a call's outcome."""
        if ok:
            self.failures, self.opened_at = 0, None
            return
        self.failures += 1
        if self.failures >= self.threshold:
            if self.opened_at is None:
                log.warning("LLM circuit opened: falling back to non-LLM paths", cooldown_s=self.cooldown_s)
            self.opened_at = time.monotonic()

    @property
    def is_open(self) -> bool:
        """Whether calls are being skipped."""
        return self.opened_at is not None and not self.allow()


class LLMClient:
    """``await client.structured(system, user, Model)`` → a validated ``Model`` or ``None``."""

    def __init__(
        self,
        base_url: str,
        model: str = "local",
        api_key: str | None = None,
        mode: Mode = "json_object",
        timeout_s: float = 30.0,
        max_concurrency: int = 2,
        retries: int = 1,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.model = model
        self.mode = mode
        self.timeout_s = timeout_s
        self.retries = retries
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=0
        )
        self._sem = asyncio.Semaphore(max_concurrency)
        self.breaker = breaker or CircuitBreaker()
        self.stats = LLMStats()

    def _response_format(self, schema_model: type[BaseModel]) -> dict[str, object]:
        schema = schema_model.model_json_schema()
        if self.mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": schema_model.__name__, "schema": schema, "strict": True},
            }
        return {"type": "json_object", "schema": schema}

    async def structured(
        self, system: str, user: str, schema_model: type[T], max_tokens: int = 256, temperature: float = 0.0
    ) -> T | None:
        """Ask for an answer following ``schema_model``; ``None`` if none could be had (the caller falls back)."""
        self.stats.calls += 1
        if not self.breaker.allow():
            self.stats.skipped_open_circuit += 1
            return None
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": redact(system)}, {"role": "user", "content": redact(user)}],
            "response_format": self._response_format(schema_model),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        t0 = time.monotonic()
        try:
            async with self._sem:
                async for attempt in AsyncRetrying(
                    retry=retry_if_exception_type(_RETRYABLE),
                    stop=stop_after_attempt(self.retries + 1),
                    wait=wait_exponential(multiplier=0.2, max=2.0),
                    reraise=True,
                ):
                    with attempt:
                        resp = await asyncio.wait_for(self._client.chat.completions.create(**request), self.timeout_s)
        except (openai.OpenAIError, TimeoutError) as exc:
            self.stats.failed += 1
            self.breaker.record(ok=False)
            log.warning("LLM call failed; using the non-LLM path", error=type(exc).__name__, detail=str(exc)[:200])
            return None
        self.stats.latencies_s.append(time.monotonic() - t0)
        if resp.usage is not None:
            self.stats.prompt_tokens += resp.usage.prompt_tokens
            self.stats.completion_tokens += resp.usage.completion_tokens
        self.breaker.record(ok=True)
        text = (resp.choices[0].message.content or "") if resp.choices else ""
        try:
            answer = schema_model.model_validate(json.loads(text, strict=False))
        except (ValueError, ValidationError) as exc:
            self.stats.invalid += 1
            log.info("LLM answer rejected by validation", error=str(exc)[:200])
            return None
        self.stats.answered += 1
        return answer

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


def client_from_settings(settings: object) -> LLMClient | None:
    """The configured client, or ``None`` when no LLM endpoint is set (every agent still works)."""
    endpoint = getattr(settings, "llm_endpoint", None)
    if not endpoint:
        return None
    key = getattr(settings, "llm_api_key", None)
    return LLMClient(
        endpoint,
        model=getattr(settings, "llm_model", None) or "local",
        api_key=key.get_secret_value() if key is not None else None,
        mode=getattr(settings, "llm_mode", "json_object"),
        timeout_s=getattr(settings, "llm_timeout_s", 30.0),
        max_concurrency=getattr(settings, "llm_max_concurrency", 2),
    )
