"""Shared kernel of models: sentence embeddings, the OpenAI-compatible LLM client."""

__all__ = ["embeddings", "llm"]
