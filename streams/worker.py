"""Building and running a worker: the Faust app with every agent registered."""

from __future__ import annotations

from dataclasses import dataclass

import faust

from schedmate.agents.embeddings import Embedder
from schedmate.agents.store import Store
from schedmate.infra.broker import resolve_bootstrap
from schedmate.infra.settings import Settings
from schedmate.schemas import ALL_TOPICS
from schedmate.streams.advise import AdviseRuntime, register_advise
from schedmate.streams.app import StreamsApp, create_app
from schedmate.streams.diagnose import DiagnoseRuntime, register_diagnose
from schedmate.streams.track import TrackRuntime, register_track

__all__ = ["Worker", "build_worker", "run_worker"]


@dataclass
class Worker:
    """A configured Faust app and its agents' runtimes."""

    streams: StreamsApp
    track: TrackRuntime
    diagnose: DiagnoseRuntime
    advise: AdviseRuntime | None

    @property
    def app(self) -> faust.App:
        """The Faust app."""
        return self.streams.app


def build_worker(
    settings: Settings, bootstrap: str | None = None, classify: bool = True, advise: bool = True
) -> Worker:
    """A worker for ``bootstrap`` (default: the configured broker)."""
    bootstrap = bootstrap or resolve_bootstrap(settings)
    sa = create_app(settings, bootstrap, ALL_TOPICS)
    embedder = Embedder(settings.embedding_model, settings.embedding_backend) if classify or advise else None
    store = Store(settings.store_dir) if classify else None
    track = register_track(sa, embedder if classify else None, store)
    diagnose = register_diagnose(sa, track)
    advisor = register_advise(sa, embedder, diagnose.gpu) if advise and embedder is not None else None
    return Worker(streams=sa, track=track, diagnose=diagnose, advise=advisor)


def run_worker(settings: Settings, bootstrap: str | None = None, classify: bool = True) -> None:
    """Run a worker until SIGTERM/SIGINT (Faust drains, commits and closes)."""
    worker = build_worker(settings, bootstrap, classify)
    faust_level = "info" if settings.log_level.upper() == "DEBUG" else "warning"
    try:
        faust.Worker(
            worker.app, loglevel=faust_level, override_logging=True, quiet=True, daemon=True, redirect_stdouts=False
        ).execute_from_commandline()
    finally:
        worker.track.close()
        if worker.advise is not None:
            worker.advise.close()
