"""The semantic layer, with no Kafka: each feature in its room, sharing only ``logtext`` and ``ml``.

The public API is importable from here (loaded on first use, so importing one name stays cheap):
the Metric Tracker (:class:`MetricTracker`, :func:`metrics_of_file`), the Failure Handler
(:func:`diagnose_lines`, :func:`diagnose_lines_llm`, :class:`FailureTails`, :func:`recovery_action`),
the Scheduling Advisor (:class:`Advisor`, :func:`extract_metadata`, :class:`History`), and the shared
models (:class:`Embedder`, :class:`LLMClient`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedmate.agents.advisor.advisor import Advice, Advisor
    from schedmate.agents.advisor.extract.metadata import extract_metadata
    from schedmate.agents.advisor.history import History
    from schedmate.agents.exceptions import AgentError
    from schedmate.agents.failures.actions import recovery_action
    from schedmate.agents.failures.diagnosis import Diagnosis, diagnose_lines
    from schedmate.agents.failures.llm_vote import diagnose_lines_llm
    from schedmate.agents.failures.tail import FailureTails
    from schedmate.agents.logtext.templates import TemplateClassifier
    from schedmate.agents.ml.embeddings import Embedder
    from schedmate.agents.ml.llm import LLMClient
    from schedmate.agents.tracker.metric_tracker import MetricTracker, metrics_of_file
    from schedmate.agents.tracker.progress import ProgressSnapshot

_PUBLIC = {
    "Advice": "advisor.advisor",
    "Advisor": "advisor.advisor",
    "AgentError": "exceptions",
    "Diagnosis": "failures.diagnosis",
    "Embedder": "ml.embeddings",
    "FailureTails": "failures.tail",
    "History": "advisor.history",
    "LLMClient": "ml.llm",
    "MetricTracker": "tracker.metric_tracker",
    "ProgressSnapshot": "tracker.progress",
    "TemplateClassifier": "logtext.templates",
    "diagnose_lines": "failures.diagnosis",
    "diagnose_lines_llm": "failures.llm_vote",
    "extract_metadata": "advisor.extract.metadata",
    "metrics_of_file": "tracker.metric_tracker",
    "recovery_action": "failures.actions",
}
__all__ = [
    "Advice",
    "Advisor",
    "AgentError",
    "Diagnosis",
    "Embedder",
    "FailureTails",
    "History",
    "LLMClient",
    "MetricTracker",
    "ProgressSnapshot",
    "TemplateClassifier",
    "diagnose_lines",
    "diagnose_lines_llm",
    "extract_metadata",
    "metrics_of_file",
    "recovery_action",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
