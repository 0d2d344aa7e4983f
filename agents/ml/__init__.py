"""Shared kernel of models: sentence embeddings, the OpenAI-compatible LLM client, LanceDB with bounded caches."""

__all__ = ["embeddings", "lance", "llm"]
