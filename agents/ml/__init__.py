"""Shared kernel of models: sentence embeddings, the OpenAI-compatible LLM client, secret redaction."""

__all__ = ["embeddings", "llm", "redact"]
