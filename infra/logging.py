"""structlog, configured once per process (JSON when stderr is not a terminal).

Records from the standard library's loggers (Faust, mode, aiokafka) go through the same renderer as structlog's own
events, so a log that is JSON is JSON on every line: a library's warning must not break a reader that parses one
object per line.
"""

from __future__ import annotations

import logging
import logging.config
import sys
from typing import Any

import structlog

__all__ = ["configure_logging", "get_logger", "stdlib_logging_config"]

_configured = False
_use_json = False


def _renderer(use_json: bool) -> structlog.types.Processor:
    return structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer(colors=False)


def _shared_processors() -> list[structlog.types.Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def stdlib_logging_config(level: str = "WARNING") -> dict[str, Any]:
    """A :func:`logging.config.dictConfig` dict that renders the standard library's records as this process's
    structlog events are rendered (one JSON object per line when the log is JSON), on stderr, from ``level`` up.

    Faust's worker takes it as its ``logging_config`` instead of installing its own plain-text format.
    """
    formatter = {
        "()": structlog.stdlib.ProcessorFormatter,
        "foreign_pre_chain": [*_shared_processors(), structlog.stdlib.add_logger_name],
        "processors": [
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _renderer(_use_json),
        ],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"structlog": formatter},
        "handlers": {
            "default": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "structlog"}
        },
        "root": {"level": level.upper(), "handlers": ["default"]},
    }


def configure_logging(level: str = "INFO", json: bool | None = None) -> None:
    """Configure structlog and the stdlib root logger; later calls are no-ops."""
    global _configured, _use_json
    if _configured:
        return
    _configured = True
    _use_json = (not sys.stderr.isatty()) if json is None else json
    lvl = logging.getLevelName(level.upper())
    structlog.configure(
        processors=[*_shared_processors(), structlog.processors.format_exc_info, _renderer(_use_json)],
        wrapper_class=structlog.make_filtering_bound_logger(lvl if isinstance(lvl, int) else logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.config.dictConfig(stdlib_logging_config("WARNING"))


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A bound logger named ``name``."""
    return structlog.get_logger(name)  # type: ignore[no-any-return]
