"""Opening LanceDB folders with bounded caches.

LanceDB's default session caches grow with every table version a process sees (each write is a
version: a worker recording thousands of job outcomes grew ~0.2 MB per write, without bound in
practice). Every SchedMate connection shares one session whose index and metadata caches are capped,
so a long-running worker's memory stays flat; a cache miss only re-reads a small manifest or index.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import lancedb

__all__ = ["CACHE_MB", "connect"]

CACHE_MB = 32  # per cache (index, metadata), shared by every table this process opens


@lru_cache(maxsize=1)
def _session() -> lancedb.Session:
    return lancedb.Session(index_cache_size_bytes=CACHE_MB << 20, metadata_cache_size_bytes=CACHE_MB << 20)


def connect(path: Path, **options: Any) -> lancedb.DBConnection:
    """``lancedb.connect`` on ``path`` with the process's bounded session."""
    return lancedb.connect(str(path), session=_session(), **options)
