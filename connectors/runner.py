"""A local runner: runs a command as a job and streams its lifecycle and output to Kafka.

``schedmate run --workdir DIR -- CMD...`` is a tiny real cluster: it publishes
jobs.submitted, a started event, the merged stdout/stderr as log chunks (live
progress bars included, as partial lines), and a finished event with the status
(completed / failed / cancelled) and exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import uuid
from pathlib import Path
from typing import IO, BinaryIO

from schedmate.connectors.chunker import LineChunkStream
from schedmate.connectors.exceptions import ConnectorError
from schedmate.connectors.publisher import Publisher
from schedmate.infra.logging import get_logger
from schedmate.schemas import jobs_events, jobs_submitted, logs_chunks
from schedmate.schemas.jobs_events import JobEvent, JobStatus
from schedmate.schemas.jobs_submitted import JobSubmitted

__all__ = ["new_job_id", "run_job"]

log = get_logger(__name__)


def _mirror(data: bytes, copy: BinaryIO | None, echo: IO[str] | None) -> None:
    if copy is not None:
        copy.write(data)
        copy.flush()
    if echo is not None:
        echo.write(data.decode("utf-8", errors="replace"))
        echo.flush()


def new_job_id(prefix: str = "run") -> str:
    """A fresh local job id."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def run_job(
    publisher: Publisher,
    command: list[str],
    workdir: Path,
    job_id: str | None = None,
    name: str = "",
    user: str = "",
    num_gpus: int = 0,
    echo: IO[str] | None = None,
    log_copy: Path | None = None,
    flush_s: float = 0.5,
    repo_root: Path | None = None,
) -> tuple[str, int]:
    """Run ``command`` in ``workdir`` as a job; return (job id, exit code). ``repo_root``: the job's repository
    around ``workdir``, which the Advisor may read up to."""
    if not command:
        raise ConnectorError("nothing to run: give a command after `--`")
    if not workdir.is_dir():
        raise ConnectorError(f"working directory {workdir} does not exist")
    job_id = job_id or new_job_id()
    node = socket.gethostname()
    await publisher.publish(
        jobs_submitted.TOPIC,
        JobSubmitted(job_id=job_id, user=user or os.environ.get("USER", ""), name=name or Path(command[0]).name,
                     command=command, workdir=str(workdir.resolve()), num_gpus=num_gpus, cluster="local",
                     repo_root=str(repo_root.resolve()) if repo_root else ""),
    )  # fmt: skip
    env = dict(os.environ, PYTHONUNBUFFERED="1", SCHEDMATE_JOB_ID=job_id)
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, cwd=str(workdir), env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        await publisher.publish(jobs_events.TOPIC, JobEvent(job_id=job_id, kind="started", node=node))
        await publisher.publish(
            jobs_events.TOPIC, JobEvent(job_id=job_id, kind="finished", status="failed", exit_code=127, node=node)
        )
        raise ConnectorError(f"cannot start {command[0]!r}: {exc}") from exc
    await publisher.publish(jobs_events.TOPIC, JobEvent(job_id=job_id, kind="started", node=node))
    log.info("job started", job_id=job_id, pid=proc.pid, command=" ".join(command)[:200])

    cancelled = False
    loop = asyncio.get_running_loop()

    def _cancel() -> None:
        nonlocal cancelled
        cancelled = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _cancel)

    stream = LineChunkStream(job_id, source="stdout", node=node, max_age_s=flush_s)
    copy = open(log_copy, "ab") if log_copy else None  # noqa: PTH123, SIM115, ASYNC230
    assert proc.stdout is not None
    try:
        while True:
            try:
                data = await asyncio.wait_for(proc.stdout.read(65536), flush_s)
            except TimeoutError:
                data = None
            if data == b"":
                break
            if data:
                _mirror(data, copy, echo)
                for cut in stream.feed(data):
                    await publisher.publish(logs_chunks.TOPIC, cut.chunk)
            if (due := stream.due()) is not None:
                await publisher.publish(logs_chunks.TOPIC, due.chunk)
        rc = await proc.wait()
        for cut in stream.finish():
            await publisher.publish(logs_chunks.TOPIC, cut.chunk)
    finally:
        if copy is not None:
            copy.close()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
    status: JobStatus = "cancelled" if cancelled else ("completed" if rc == 0 else "failed")
    await publisher.publish(
        jobs_events.TOPIC, JobEvent(job_id=job_id, kind="finished", status=status, exit_code=rc, node=node)
    )
    log.info("job finished", job_id=job_id, status=status, exit_code=rc)
    return job_id, rc
