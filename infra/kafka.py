"""Reaching the broker: its address, client security options (aiokafka and Faust from one place), topics.

Every Kafka client SchedMate makes takes its options from here, so SASL/SSL settings are
translated once.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError, KafkaError
from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential

from schedmate.infra.exceptions import BrokerError
from schedmate.infra.settings import Settings
from schedmate.schemas import ALL_TOPICS, INTERNAL_TOPICS

__all__ = ["client_options", "ensure_topics", "faust_credentials", "pid_alive", "producer_options", "resolve_bootstrap"]


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def resolve_bootstrap(settings: Settings) -> str:
    """``host:port[,host:port]`` of the configured broker (the running embedded one by default)."""
    if settings.broker != "embedded":
        return settings.broker[len("kafka://") :]
    state = settings.broker_state_file
    try:
        info = json.loads(state.read_text())
    except (OSError, ValueError) as exc:
        raise BrokerError(
            "no embedded broker is running: start one with `schedmate up` (or `schedmate demo`), "
            "or set SCHEDMATE_BROKER=kafka://host:port"
        ) from exc
    if not pid_alive(int(info.get("pid", -1))):
        raise BrokerError(f"the embedded broker recorded in {state} is no longer running: start `schedmate up` again")
    return str(info["bootstrap"])


def _ssl_context(settings: Settings) -> ssl.SSLContext | None:
    if settings.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    return ssl.create_default_context(cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None)


def _sasl_password(settings: Settings) -> str | None:
    return settings.sasl_password.get_secret_value() if settings.sasl_password else None


def client_options(settings: Settings) -> dict[str, Any]:
    """aiokafka keyword arguments for security (SASL/SSL passed through from settings)."""
    opts: dict[str, Any] = {"security_protocol": settings.security_protocol}
    if (ctx := _ssl_context(settings)) is not None:
        opts["ssl_context"] = ctx
    if settings.security_protocol.startswith("SASL"):
        opts["sasl_mechanism"] = settings.sasl_mechanism or "PLAIN"
        opts["sasl_plain_username"] = settings.sasl_username
        opts["sasl_plain_password"] = _sasl_password(settings)
    return opts


def producer_options(settings: Settings) -> dict[str, Any]:
    """aiokafka producer options the broker's capabilities allow: idempotence where the broker supports it
    (real Kafka; the embedded broker does not)."""
    return {"enable_idempotence": True} if settings.idempotence else {}


def faust_credentials(settings: Settings) -> Any:
    """The same security settings as Faust ``broker_credentials`` (None for PLAINTEXT)."""
    import faust  # noqa: PLC0415  (only workers need Faust)

    if settings.security_protocol == "PLAINTEXT":
        return None
    ctx = _ssl_context(settings)
    if settings.security_protocol.startswith("SASL"):
        return faust.SASLCredentials(
            username=settings.sasl_username,
            password=_sasl_password(settings),
            mechanism=settings.sasl_mechanism or "PLAIN",
            ssl_context=ctx,
        )
    return faust.SSLCredentials(ctx)


async def ensure_topics(
    bootstrap: str,
    partitions: int,
    options: dict[str, Any] | None = None,
    timeout_s: float = 15.0,
    replication_factor: int = 1,
) -> list[str]:
    """Create every SchedMate topic (internal ones compacted) that does not exist yet; return those created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, **(options or {}))
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
    except (KafkaConnectionError, TimeoutError) as exc:
        raise BrokerError(
            f"cannot reach the Kafka broker at {bootstrap}: is it running? "
            "(`schedmate up` starts the embedded one; SCHEDMATE_BROKER selects another)"
        ) from exc
    created: list[str] = []
    try:
        # A cluster that has just come up may still answer NodeNotReady / NotController: retry what is retriable.
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, KafkaError) and e.retriable),
            wait=wait_exponential(multiplier=0.2, max=2.0),
            stop=stop_after_delay(timeout_s),
            reraise=True,
        ):
            with attempt:
                existing = set(await admin.list_topics())
                wanted = {t.name: t for t in (*ALL_TOPICS, *INTERNAL_TOPICS) if t.name not in existing}
                if wanted:
                    await admin.create_topics(
                        [
                            NewTopic(name, num_partitions=t.partitions or partitions,
                                     replication_factor=replication_factor,
                                     topic_configs={"cleanup.policy": "compact"} if t.internal else {})
                            for name, t in wanted.items()
                        ]
                    )  # fmt: skip
                created += wanted
    except KafkaError as exc:
        raise BrokerError(f"could not create topics on {bootstrap}: {exc}") from exc
    else:
        return created
    finally:
        await admin.close()
