"""The Scheduling Advisor: a submission → workload metadata and a duration/GPU estimate.

``advisor`` runs admission, the ``version_cache``, static extraction (``extract/``), retrieval over the
``history`` by metadata vectors (``facets``) and the ``estimator``; ``trace_import`` seeds the history."""

__all__ = ["advisor", "estimator", "extract", "facets", "history", "trace_import", "version_cache"]
