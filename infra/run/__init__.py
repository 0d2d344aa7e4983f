"""Running processes: the embedded broker, the local stack supervisor, the local LLM server."""

__all__ = ["broker", "llm_server", "supervisor"]
