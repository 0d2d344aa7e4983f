"""The git repository around a job's working directory, read from the file system (no git process runs).

A job submitted from ``repo/examples/x/`` imports the package at its repository's root; the Advisor may read up to
that root when a connector names it (``JobSubmitted.repo_root``). The lookup is bounded: at most
:data:`MAX_LEVELS` folders up, never the file system's root or the connector's home folder, and only a folder that
holds a readable ``.git`` (a directory, or a worktree's ``.git`` file) whose ``HEAD`` parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["MAX_LEVELS", "Repository", "find_repository"]

MAX_LEVELS: Final = 6  # folders above the working directory looked at (a job runs at most a few levels deep)
_SMALL: Final = 4096  # bytes read of HEAD, a ref file or a worktree's .git file
_PACKED_REFS: Final = 1 << 20  # bytes read of packed-refs
_SHA: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class Repository:
    """A job's repository: its root folder, and the commit and branch checked out there when they can be read."""

    root: Path
    commit: str | None = None
    branch: str | None = None


def _read(path: Path, limit: int) -> str | None:
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _git_dir(folder: Path) -> Path | None:
    """The git directory of ``folder``: its ``.git`` directory, or the one a worktree's ``.git`` file points to."""
    dot = folder / ".git"
    if dot.is_dir():
        return dot
    text = _read(dot, _SMALL) if dot.is_file() else None
    if text and (m := re.match(r"gitdir:\s*(\S.*)", text.strip())):
        target = Path(m.group(1).strip())
        target = target if target.is_absolute() else folder / target
        return target if target.is_dir() else None
    return None


def _resolve_ref(git_dir: Path, ref: str) -> str | None:
    """The commit a ref names: its loose file, else its line in packed-refs (a worktree's common dir included)."""
    if not re.fullmatch(r"refs/[\w./-]{1,200}", ref) or ".." in ref:
        return None
    dirs = [git_dir]
    common = _read(git_dir / "commondir", _SMALL)
    if common and common.strip():
        c = Path(common.strip())
        dirs.append(c if c.is_absolute() else git_dir / c)
    for d in dirs:
        loose = _read(d / ref, _SMALL)
        if loose and _SHA.fullmatch(loose.strip()):
            return loose.strip()
        packed = _read(d / "packed-refs", _PACKED_REFS) or ""
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref and _SHA.fullmatch(sha):
                return sha
    return None


def find_repository(workdir: Path | str, home: Path | None = None) -> Repository | None:
    """The nearest enclosing git repository of ``workdir`` (itself included), or None. ``home`` (default: this
    process's home folder) and the file system's root are never taken as a repository."""
    try:
        start = Path(workdir)
        if not start.is_absolute() or not start.is_dir():
            return None
        folder = start.resolve()
    except (OSError, RuntimeError, ValueError):  # (an unreadable mount, a symlink loop, a NUL in the path)
        return None
    try:
        home = (home or Path.home()).resolve()
    except (OSError, RuntimeError):
        home = None
    for _ in range(MAX_LEVELS + 1):
        if folder in (folder.parent, home):
            return None
        try:
            git_dir = _git_dir(folder)
        except OSError:  # (a folder the connector may not read)
            return None
        if git_dir is not None:
            head = (_read(git_dir / "HEAD", _SMALL) or "").strip()
            if _SHA.fullmatch(head):
                return Repository(folder, head, None)
            if head.startswith("ref:"):
                ref = head[4:].strip()
                branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
                return Repository(folder, _resolve_ref(git_dir, ref), branch)
            return None  # a .git without a HEAD that parses: not taken
        folder = folder.parent
    return None
