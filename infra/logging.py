"""structlog, configured once per process (JSON when stderr is not a terminal)."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure_logging", "get_logger"]

_configured = False


def configure_logging(level: str = "INFO", json: bool | None = None) -> None:
    """Configure structlog and the stdlib root logger; later calls are no-ops."""
    global _configured
    if _configured:
        return
    _configured = True
    use_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer(colors=False)
    )
    lvl = logging.getLevelName(level.upper())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl if isinstance(lvl, int) else logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A bound logger named ``name``."""
    return structlog.get_logger(name)  # type: ignore[no-any-return]
