"""A trace-driven GPU cluster simulator (a sink): traces, workloads attached to their jobs, policies, reports."""

__all__ = ["cluster", "engine", "estimators", "interference", "policies", "report", "simulate", "trace", "workloads"]
