"""LanceDB on disk: template decisions (and, in later issues, job history)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from schedmate.agents.exceptions import StoreError
from schedmate.agents.ml.lance import connect

__all__ = ["Store", "TemplateRow"]

TemplateRow = dict[str, Any]
_TEMPLATES = "templates"


class Store:
    """A LanceDB database folder. Methods are blocking: call them from a worker thread."""

    def __init__(self, path: Path, dim: int = 384) -> None:
        self.path = path
        self.dim = dim
        self._lock = threading.Lock()
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._db = connect(path)
        except OSError as exc:
            raise StoreError(f"cannot open the LanceDB store at {path}: {exc}; set SCHEDMATE_DATA_DIR") from exc

    def _schema(self) -> pa.Schema:
        return pa.schema(
            [
                pa.field("key", pa.string()),
                pa.field("template", pa.string()),
                pa.field("cls", pa.string()),
                pa.field("path", pa.string()),
                pa.field("vector", pa.list_(pa.float32(), self.dim)),
                pa.field("created", pa.float64()),
            ]
        )

    def _templates(self, create: bool) -> Any:
        try:
            return self._db.open_table(_TEMPLATES)
        except (ValueError, FileNotFoundError, RuntimeError):
            if not create:
                return None
        return self._db.create_table(_TEMPLATES, schema=self._schema(), exist_ok=True)

    def load_template_classes(self) -> dict[str, tuple[str, str]]:
        """All stored template decisions: key → (class, path)."""
        with self._lock:
            table = self._templates(create=False)
            if table is None:
                return {}
            data = table.to_arrow().select(["key", "cls", "path"]).to_pydict()
        return {k: (c, p) for k, c, p in zip(data["key"], data["cls"], data["path"], strict=True)}

    def add_templates(self, rows: list[TemplateRow]) -> None:
        """Append template decisions (key, template, cls, path, vector)."""
        if not rows:
            return
        now = time.time()
        for r in rows:
            r.setdefault("created", now)
        with self._lock:
            table = self._templates(create=True)
            table.add(pa.Table.from_pylist(rows, schema=self._schema()))

    def count_templates(self) -> int:
        """How many template decisions are stored."""
        with self._lock:
            table = self._templates(create=False)
            return 0 if table is None else int(table.count_rows())
