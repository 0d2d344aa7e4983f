"""Small repositories written for the extraction tests."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write"]


def write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path under ``root`` → text) as a small repository and return ``root``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root
