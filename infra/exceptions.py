"""Errors of running SchedMate: configuration, broker, environment."""

from __future__ import annotations

from schedmate.schemas.exceptions import SchedMateError

__all__ = ["BrokerError", "ConfigError", "InfraError"]


class InfraError(SchedMateError):
    """Base of errors raised by infra/."""


class ConfigError(InfraError):
    """A setting is missing or invalid."""


class BrokerError(InfraError):
    """The broker cannot be started or reached."""
