"""The version manager: extracted metadata cached per repository state and command.

A cache entry is keyed by (working directory, command) and remembers the repository state it
was extracted at — the git commit plus the SHA-1 of every file the extractor read (which
covers uncommitted changes) — and which file each field came from. On lookup the recorded
files are hashed again (a handful of small files): unchanged → the cached metadata is reused;
changed → the caller re-extracts, and :func:`merge` keeps every field whose source files did
not change (fields found by the slow LLM path are not asked again), taking the rest from the
new extraction. Entries persist as JSON lines in the data folder; the cache is bounded (LRU).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from schedmate.agents.advisor.extract.workspace import read_regular_file
from schedmate.schemas.jobs_metadata import WorkloadMetadata

__all__ = ["CacheEntry", "VersionCache", "merge"]


@dataclass(frozen=True)
class CacheEntry:
    """Metadata extracted at one repository state."""

    key: str
    git_commit: str
    files: dict[str, str]  # real path → sha1 when extracted
    metadata: WorkloadMetadata


def _sha1(path: str, limit: int, root: str) -> str | None:
    """SHA-1 of a recorded file, or None if it is gone, too big, not a regular file or no longer inside ``root``.

    Never blocks: a FIFO or device swapped in since the extraction is refused, not read.
    """
    try:
        p = Path(path)
        if p.is_symlink() or (root and Path(root) not in p.resolve().parents):
            return None
        return hashlib.sha1(read_regular_file(p, limit), usedforsecurity=False).hexdigest()
    except (OSError, ValueError, RuntimeError):
        return None


def _record(entry: CacheEntry) -> str:
    return json.dumps({"key": entry.key, "git_commit": entry.git_commit, "files": entry.files,
                       "metadata": entry.metadata.model_dump(mode="json")})  # fmt: skip


def merge(
    cached: WorkloadMetadata, fresh: WorkloadMetadata, changed: set[str], workdir: str
) -> tuple[WorkloadMetadata, list[str]]:
    """Fields whose provenance file did not change keep their cached value; the rest come from ``fresh``.

    Returns the merged metadata and the names of the fields that were taken from ``fresh``.
    """
    # as provenance names them: relative to the working directory (``../pkg/model.py`` in the job's repository)
    changed_rel = {os.path.relpath(c, workdir) if Path(c).is_absolute() else c for c in changed}
    data = cached.model_dump()
    fresh_data = fresh.model_dump()
    refreshed = []
    provenance = dict(cached.provenance)
    for name in WorkloadMetadata.model_fields:
        if name in ("provenance", "extra"):
            continue
        src = cached.provenance.get(name)
        keep = src is not None and src.path == "llm" and src.file not in changed_rel and src.file != "command"
        if not keep and data[name] != fresh_data[name]:
            data[name] = fresh_data[name]
            refreshed.append(name)
            if name in fresh.provenance:
                provenance[name] = fresh.provenance[name]
            else:
                provenance.pop(name, None)
    data["provenance"] = provenance
    data["extra"] = {**cached.extra, **fresh.extra}
    return WorkloadMetadata.model_validate(data), refreshed


class VersionCache:
    """(workdir, command) → the metadata of its last repository state."""

    def __init__(self, path: Path | None = None, max_entries: int = 10_000, max_file_bytes: int = 1_000_000) -> None:
        self.path = path
        self.max_entries = max_entries
        self.max_file_bytes = max_file_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._file_lines = 0
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                self._file_lines += 1
                try:
                    raw = json.loads(line)
                    entry = CacheEntry(raw["key"], raw.get("git_commit", ""), dict(raw["files"]),
                                       WorkloadMetadata.model_validate(raw["metadata"]))  # fmt: skip
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line after a crash
                self._entries[entry.key] = entry
                self._entries.move_to_end(entry.key)
            while len(self._entries) > max_entries:
                self._entries.popitem(last=False)

    @staticmethod
    def key(workdir: str, command: str, repo: str = "") -> str:
        """The cache key of a job's code location (working directory, and the repository root read around it)
        and command."""
        where = f"{workdir}\0{repo}" if repo else workdir
        return hashlib.sha1(f"{where}\0{' '.join(command.split())}".encode(), usedforsecurity=False).hexdigest()

    def lookup(
        self, workdir: str, command: str, git_commit: str = "", repo: str = ""
    ) -> tuple[CacheEntry | None, set[str]]:
        """The cached entry and the set of its files that changed since (empty: reusable as is)."""
        with self._lock:
            entry = self._entries.get(self.key(workdir, command, repo))
            if entry is not None:
                self._entries.move_to_end(entry.key)
        if entry is None:
            return None, set()
        changed = {p for p, h in entry.files.items() if _sha1(p, self.max_file_bytes, repo or workdir) != h}
        if git_commit and entry.git_commit and git_commit != entry.git_commit and not changed:
            changed = {"<git commit>"}  # a new commit that touched none of our files: still re-check
        return entry, changed

    def store(
        self,
        workdir: str,
        command: str,
        git_commit: str,
        files: dict[str, str],
        metadata: WorkloadMetadata,
        repo: str = "",
    ) -> None:
        """Remember the metadata of this repository state (appended to the cache file)."""
        entry = CacheEntry(self.key(workdir, command, repo), git_commit, dict(files), metadata)
        with self._lock:
            self._entries[entry.key] = entry
            self._entries.move_to_end(entry.key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(_record(entry) + "\n")
                self._file_lines += 1
                if self._file_lines > 2 * max(self.max_entries // 2, len(self._entries), 64):
                    self._compact()

    def _compact(self) -> None:
        """Rewrite the cache file with the live entries only (atomic rename; bounded file)."""
        assert self.path is not None
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for entry in self._entries.values():
                fh.write(_record(entry) + "\n")
        tmp.replace(self.path)
        self._file_lines = len(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
