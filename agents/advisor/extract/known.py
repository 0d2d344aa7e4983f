"""Well-known architectures by name: parameters (millions) and model type, from ``known_models.json`` (each
family with its source): torchvision, timm, YOLOv5, Hugging Face families, DINO/MAE ViTs."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Final

__all__ = ["handle_name", "known_model"]

_KNOWN_MODELS: Final = Path(__file__).with_name("known_models.json")


@functools.cache
def _known_table() -> dict[str, tuple[float, str | None]]:
    """``name → (params in millions, model type)`` from the data file (see its sources)."""
    data = json.loads(_KNOWN_MODELS.read_text(encoding="utf-8"))
    return {_norm(k): (float(v), fam.get("type")) for fam in data["families"] for k, v in fam["models"].items()}


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(" ", "-")


@functools.cache
def _longest_first() -> tuple[str, ...]:
    return tuple(sorted(_known_table(), key=len, reverse=True))


def handle_name(name: str) -> str:
    """The last part of a model id or path, past a hub handle's version (``https://tfhub.dev/google/albert_base/1``
    is ``albert_base``)."""
    parts = name.rstrip("/").split("/")
    if len(parts) > 1 and parts[-1].isdigit():
        parts.pop()
    return parts[-1]


@functools.lru_cache(maxsize=4096)
def known_model(name: str) -> tuple[float, str | None] | None:
    """Parameters (millions) and type of a well-known architecture named by ``name`` (a hub id, a
    torchvision/timm name, a config file stem); None when it is not a known one."""
    low = _norm(handle_name(name).removesuffix(".yaml").removesuffix(".yml").removesuffix(".pt").removesuffix(".cfg"))
    table = _known_table()
    for key in _longest_first():
        if (
            low == key
            or low.startswith((f"{key}-", f"{key}."))
            or (low.startswith(key) and key.endswith(("-base", "-large")))
        ):
            return table[key]
    return None
