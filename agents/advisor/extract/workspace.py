"""Read-only access to a job's working directory, confined to it (or to the job's repository around it).

Users' code is read, never executed or written. Paths are relative to the working directory and must
resolve inside the boundary: the working directory itself, or the root of the job's repository when the
submission names one that contains the working directory (a job run from ``examples/x/`` imports the
package at its repository's root). No absolute paths, no ``..`` past the boundary, no symlink pointing
outside; files over the size cap and binary files are refused; directory walks cover the working directory
only, skip symlinked directories, hidden folders and virtual environments and stop at a file-count cap.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Final

from schedmate.agents.advisor.extract.budget import charge_file
from schedmate.agents.exceptions import WorkspaceError

__all__ = ["TEXT_SUFFIXES", "Workspace", "read_regular_file"]

_SKIP_DIRS: Final = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", "env", ".mypy_cache", ".pytest_cache",
     ".tox", "site-packages", "wandb", "outputs"}
)  # fmt: skip
TEXT_SUFFIXES: Final = (".py", ".yaml", ".yml", ".json", ".toml", ".sh", ".cfg", ".ini", ".txt", ".md")


def read_regular_file(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; never blocks.

    Opened with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor, so a FIFO or device
    swapped in after an earlier check is refused instead of hanging the reader. Raises :class:`OSError`.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if st.st_size > limit:
            raise OSError(errno.EFBIG, f"{st.st_size} bytes is over the {limit}-byte limit")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"over the {limit}-byte limit")
        return data
    finally:
        os.close(fd)


class Workspace:
    """A confined, read-only view of ``root`` (paths relative to it), readable up to ``boundary``."""

    def __init__(
        self,
        root: Path,
        max_file_bytes: int = 1_000_000,
        max_files: int = 5_000,
        reads: dict[str, str] | None = None,
        boundary: Path | None = None,
    ) -> None:
        try:
            self.root = root.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise WorkspaceError(f"working directory {root} does not exist or cannot be resolved") from exc
        if not self.root.is_dir():
            raise WorkspaceError(f"working directory {root} is not a directory")
        self.boundary = self.root
        if boundary is not None:
            try:
                self.boundary = boundary.resolve(strict=True)
            except (OSError, RuntimeError) as exc:
                raise WorkspaceError(f"repository root {boundary} does not exist or cannot be resolved") from exc
            if self.boundary != self.root and self.boundary not in self.root.parents:
                raise WorkspaceError(
                    f"working directory {root} is not inside the repository root {boundary}: name the repository "
                    "that holds the working directory, or none"
                )
        # the repository root as seen from the working directory (``../..``), where an installed package lives
        self.up: PurePosixPath | None = (
            PurePosixPath(*([".."] * len(self.root.relative_to(self.boundary).parts)))
            if self.boundary != self.root
            else None
        )
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.reads = reads if reads is not None else {}  # real path → sha1 of every file read (version manager)
        self._texts: dict[Path, str] = {}  # real path → text: a file read twice is read (and charged) once
        self._modules: dict[tuple[str, int, str], str | None] = {}  # (module, level, importer's folder) → file
        # relative path → real path, or why not: one workspace serves one extraction, which asks for the same
        # paths many times (bounded by the files it may read and the imports it follows)
        self._resolved: dict[str, Path | WorkspaceError] = {}
        self._named: dict[str, str | None] = {}  # file name → the one file of that name (a bare config name looked up)
        self.import_roots: tuple[str, ...] = ()  # folders the job puts on sys.path (``import _init_paths``)

    def add_import_roots(self, roots: list[str]) -> None:
        """Folders (relative to the root) that absolute imports are also looked up from, after the usual ones."""
        new = tuple(r for r in roots if r not in self.import_roots)
        if new:
            self.import_roots += new
            self._modules.clear()  # an import that was not found may be found now

    def resolve(self, rel: str | Path) -> Path:
        """The real path of ``rel`` inside the root; raises :class:`WorkspaceError` if it escapes."""
        key = str(rel)
        got = self._resolved.get(key)
        if got is None:
            got = self._resolved[key] = self._resolve(rel)
        if isinstance(got, WorkspaceError):
            raise WorkspaceError(str(got))
        return got

    def _resolve(self, rel: str | Path) -> Path | WorkspaceError:
        rel_path = Path(rel)
        if rel_path.is_absolute():
            return WorkspaceError(f"{rel}: absolute paths are outside the job's working directory")
        try:
            real = (self.root / rel_path).resolve(strict=True)
        except (OSError, RuntimeError):
            return WorkspaceError(f"{rel}: no such file in the job's working directory")
        if real != self.boundary and self.boundary not in real.parents:
            where = "working directory" if self.up is None else "repository"
            return WorkspaceError(f"{rel}: resolves outside the job's {where}")
        return real

    def alias(self, name: str, rel: str) -> None:
        """Let ``name`` read the file ``rel`` (confined like any path): an executable script without ``.py`` that its
        shebang runs under Python is analysed as the Python file it is."""
        self._resolved[name] = self.resolve(rel)

    def exists(self, rel: str | Path) -> bool:
        """Whether ``rel`` is a readable file inside the root."""
        try:
            return self.resolve(rel).is_file()
        except WorkspaceError:
            return False

    def is_dir(self, rel: str | Path) -> bool:
        """Whether ``rel`` is a folder inside the root."""
        try:
            return self.resolve(rel).is_dir()
        except WorkspaceError:
            return False

    def read_text(self, rel: str | Path, max_bytes: int | None = None) -> str:
        """Text of a file inside the root (refuses big and binary files, FIFOs and devices; never blocks); a data
        file the job opens may be given a larger ``max_bytes`` than source and config files."""
        path = self.resolve(rel)
        if path in self._texts:
            return self._texts[path]
        try:
            data = read_regular_file(path, max_bytes or self.max_file_bytes)
        except OSError as exc:
            raise WorkspaceError(f"{rel}: {exc.strerror or exc}") from exc
        charge_file(len(data))
        if b"\x00" in data[:8192]:
            raise WorkspaceError(f"{rel}: binary file")
        self.reads[str(path)] = hashlib.sha1(data, usedforsecurity=False).hexdigest()
        text = self._texts[path] = data.decode("utf-8", errors="replace")
        return text

    def read_text_or_none(self, rel: str | Path) -> str | None:
        """Text of a file inside the root, or None where :meth:`read_text` would refuse it."""
        try:
            return self.read_text(rel)
        except WorkspaceError:
            return None

    def module_file(self, module: str, level: int, importer: str) -> str | None:
        """The local file of ``module`` imported (``level`` dots) from ``importer``; None if not in the workspace."""
        base = PurePosixPath(importer).parent
        key = (module, level, str(base))
        if key not in self._modules:
            self._modules[key] = self._module_file(module, level, base)
        return self._modules[key]

    def _module_file(self, module: str, level: int, base: PurePosixPath) -> str | None:
        parts = [p for p in module.split(".") if p]
        roots = (
            [base] if level else [base, PurePosixPath(), PurePosixPath("src"), *map(PurePosixPath, self.import_roots)]
        )
        if not level and self.up is not None:  # the job's repository installs its own package (`pip install -e .`)
            roots += [self.up, self.up / "src"]
        if level > 1:
            roots = [base.parents[level - 2]] if len(base.parents) >= level - 1 else []
        for root in roots:
            stem = "/".join(p for p in [*root.parts, *parts] if p not in ("", "."))
            for cand in (f"{stem}.py", f"{stem}/__init__.py"):
                if self.exists(cand):
                    return cand
        for i in range(1, len(parts) - 1) if not level else ():  # `vision.fair.pkg.tools.x`: an internal prefix
            stem = "/".join(parts[i:])
            if self.exists(f"{stem}.py"):
                return f"{stem}.py"
        return None

    def sub(self, rel: str) -> Workspace:
        """A workspace for a folder inside this one, recording reads in the same place."""
        return Workspace(self.resolve(rel), self.max_file_bytes, self.max_files, self.reads, self.boundary)

    def only_file_named(self, name: str) -> str | None:
        """The one file of the workspace with this name (None when there is none, or more than one); the walk is
        done once per name."""
        suffix = os.path.splitext(name)[1]  # noqa: PTH122
        if not suffix or "/" in name:
            return None
        if name not in self._named:
            found = [f for f in self.files((suffix,)) if os.path.basename(f) == name]  # noqa: PTH119
            self._named[name] = found[0] if len(found) == 1 else None
        return self._named[name]

    def child_dirs(self, limit: int = 2_000) -> list[str]:
        """Names of the folders directly in the workspace root, sorted (at most ``limit`` entries are looked at)."""
        try:
            with os.scandir(self.root) as it:
                entries = [e for _, e in zip(range(limit), it, strict=False)]
        except OSError:
            return []
        return sorted(e.name for e in entries if not e.name.startswith(".") and self.is_dir(e.name))

    def files(self, suffixes: tuple[str, ...] = TEXT_SUFFIXES) -> Iterator[str]:
        """Relative paths of text files of interest (bounded walk). A symlinked folder is walked once when it
        resolves inside the boundary (a recipe folder's ``wenet -> ../../../wenet``), never one outside or a loop."""
        count = 0
        seen = {self.root}
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=True):
            kept = []
            for d in sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")):
                real = (Path(dirpath) / d).resolve()  # each real folder once, however many links reach it
                if real in seen or not (real == self.boundary or self.boundary in real.parents):
                    continue
                seen.add(real)
                kept.append(d)
            dirnames[:] = kept
            for name in sorted(filenames):
                if not name.endswith(suffixes):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), self.root)  # noqa: PTH118
                if not self.exists(rel):
                    continue  # a symlink pointing outside, or a broken one
                yield rel
                count += 1
                if count >= self.max_files:
                    return
