"""A worker: the Faust app with every agent registered, and the runtimes it owns from start to stop.

Wiring, in one place: the per-job state (``track.state``) shared by the track and diagnose
agents, the failure tails the Metric Tracker fills for the Failure Handler, the gpu.samples
view the diagnose agent and the history writer read, the advisor. The runtimes start with the
app and stop, in reverse order, when it stops: on SIGTERM the consumer drains and commits
first, then every runtime flushes and closes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import faust
import mode

from schedmate.agents.advisor.advisor import Advisor
from schedmate.agents.failures.knn import FailureKnn
from schedmate.agents.failures.tail import FailureTails
from schedmate.agents.logtext.template_store import Store
from schedmate.agents.logtext.templates import TemplateClassifier
from schedmate.agents.ml.embeddings import Embedder
from schedmate.agents.ml.llm import client_from_settings
from schedmate.infra.kafka import resolve_bootstrap
from schedmate.infra.logging import stdlib_logging_config
from schedmate.infra.settings import Settings
from schedmate.schemas import ALL_TOPICS
from schedmate.schemas import logs_chunks as chunks_schema
from schedmate.streams.advise import AdviseRuntime, register_advise
from schedmate.streams.app import StreamsApp, create_app
from schedmate.streams.diagnose import DiagnoseRuntime, register_diagnose
from schedmate.streams.gpu_health import GpuHealth
from schedmate.streams.history import HistoryRuntime, register_history
from schedmate.streams.runtime import Runtime
from schedmate.streams.state import JobStates
from schedmate.streams.track import TrackRuntime, register_track

__all__ = ["Worker", "build_worker", "faust_runner", "run_worker"]


@dataclass
class Worker:
    """A configured Faust app and its agents' runtimes (in start order)."""

    streams: StreamsApp
    states: JobStates
    gpu: GpuHealth
    track: TrackRuntime
    diagnose: DiagnoseRuntime
    advise: AdviseRuntime | None
    history: HistoryRuntime | None

    @property
    def app(self) -> faust.App:
        """The Faust app."""
        return self.streams.app

    @property
    def runtimes(self) -> list[Runtime]:
        """Every runtime, in start order (they stop in reverse)."""
        rts: list[Runtime | None] = [self.states, self.gpu, self.track, self.diagnose, self.advise, self.history]
        return [rt for rt in rts if rt is not None]


def _lifecycle(worker: Worker) -> type[mode.Service]:
    """A service the Faust app starts after its agents and stops after its consumer drained and committed."""

    class Runtimes(mode.Service):
        async def on_start(self) -> None:
            for rt in worker.runtimes:
                await rt.start()

        async def on_stop(self) -> None:
            for rt in reversed(worker.runtimes):
                await rt.stop()

    return Runtimes


def _follow_assignment(sa: StreamsApp, states: JobStates) -> None:
    """Recover job states of partitions assigned to this worker; forget those revoked."""

    def partitions(tps: set[Any]) -> set[int]:
        return {tp.partition for tp in tps if tp.topic == chunks_schema.TOPIC.name}

    @sa.app.on_partitions_assigned.connect  # type: ignore[untyped-decorator,arg-type]
    async def _assigned(app: faust.App, assigned: set[Any], **kwargs: Any) -> None:
        states.on_assigned(partitions(assigned))

    @sa.app.on_partitions_revoked.connect  # type: ignore[untyped-decorator,arg-type]
    async def _revoked(app: faust.App, revoked: set[Any], **kwargs: Any) -> None:
        states.on_revoked(partitions(revoked))


def build_worker(
    settings: Settings, bootstrap: str | None = None, classify: bool = True, advise: bool = True
) -> Worker:
    """A worker for ``bootstrap`` (default: the configured broker)."""
    bootstrap = bootstrap or resolve_bootstrap(settings)
    sa = create_app(settings, bootstrap, ALL_TOPICS)
    embedder = Embedder(settings.embedding_model, settings.embedding_backend) if classify or advise else None
    states = JobStates(sa)
    gpu = GpuHealth(sa.bootstrap, sa.options)
    tails = FailureTails()
    classifier = TemplateClassifier(embedder, Store(settings.store_dir)) if classify and embedder else None
    track = register_track(sa, states, classifier, line_sink=tails.record)
    knn = FailureKnn(embedder) if classify and embedder is not None else None
    diagnose = register_diagnose(sa, states, tails, track, knn, gpu)
    advise_rt = history_rt = None
    if advise and embedder is not None:
        advisor = Advisor.from_settings(settings, embedder)
        advise_rt = register_advise(sa, advisor, client_from_settings(settings) if settings.react_stream else None,
                                    settings.react_concurrency, settings.react_backlog)  # fmt: skip
        history_rt = register_history(sa, advisor.history, gpu)
    _follow_assignment(sa, states)

    async def evict() -> None:
        states.evict()

    sa.app.timer(interval=10.0, name="park-quiet-jobs")(evict)
    worker = Worker(sa, states, gpu, track, diagnose, advise_rt, history_rt)
    sa.app.service(_lifecycle(worker))
    return worker


def run_worker(settings: Settings, bootstrap: str | None = None, classify: bool = True) -> None:
    """Run a worker until SIGTERM/SIGINT (Faust drains, commits and closes; then the runtimes stop)."""
    faust_runner(build_worker(settings, bootstrap, classify), settings).execute_from_commandline()


def faust_runner(worker: Worker, settings: Settings) -> faust.Worker:
    """Faust's runner for ``worker``, logging through this process's renderer (one JSON object per line when the
    log is JSON: Faust's own format for its records, e.g. mode's "Timer ... is overlapping" warning under load, broke
    readers of the log)."""
    faust_level = "info" if settings.log_level.upper() == "DEBUG" else "warning"
    runner = faust.Worker(
        worker.app,
        loglevel=faust_level,
        logging_config=stdlib_logging_config(faust_level),
        override_logging=True,
        quiet=True,
        daemon=True,
        redirect_stdouts=False,
    )
    # Faust's start-up spinner writes cursor codes to stdout even when it is not a terminal; they glued themselves to
    # the next log line, which then no longer parsed as JSON (the log is one JSON object per line)
    runner.spinner = None
    return runner
