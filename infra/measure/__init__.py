"""Measuring: benchmarks against a baseline in one run (``bench_*``) and accuracy on labelled data (``eval_*``)."""

__all__ = ["bench_advise", "bench_diagnose", "bench_track", "eval_advise", "eval_failures", "eval_metrics"]
