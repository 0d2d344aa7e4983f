"""The git repository a connector finds around a job's working directory (read from files, no git process)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from schedmate.connectors.repository import MAX_LEVELS, find_repository


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x",
             "HOME": str(repo), "PATH": "/usr/bin:/bin"},
    ).stdout.strip()  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit on branch `main` and a job folder two levels down."""
    root = tmp_path / "proj"
    (root / "examples" / "cifar").mkdir(parents=True)
    (root / "pkg.py").write_text("X = 1\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_a_job_folder_inside_a_repository_names_its_root_commit_and_branch(repo: Path, tmp_path: Path) -> None:
    """From `proj/examples/cifar/` the lookup climbs to `proj` and reads HEAD's branch and commit as git has them."""
    found = find_repository(repo / "examples" / "cifar", home=tmp_path / "elsewhere")
    assert found is not None
    assert found.root == repo.resolve()
    assert found.branch == "main"
    assert found.commit == _git(repo, "rev-parse", "HEAD")


def test_a_packed_ref_and_a_detached_head_are_read(repo: Path, tmp_path: Path) -> None:
    """After `git pack-refs --all` the branch lives only in packed-refs; a detached HEAD is the commit itself."""
    commit = _git(repo, "rev-parse", "HEAD")
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert find_repository(repo, home=tmp_path / "x") == find_repository(repo / "examples", home=tmp_path / "x")
    assert find_repository(repo, home=tmp_path / "x").commit == commit  # type: ignore[union-attr]
    _git(repo, "checkout", "-q", "--detach")
    detached = find_repository(repo, home=tmp_path / "x")
    assert detached is not None and (detached.commit, detached.branch) == (commit, None)


def test_no_repository_too_deep_at_home_or_relative(repo: Path, tmp_path: Path) -> None:
    """Nothing outside a repository; nothing past MAX_LEVELS folders up; never the home folder (a dotfiles
    repository there would open every job of the user); a relative path names no folder."""
    assert find_repository(tmp_path, home=tmp_path / "x") is None
    deep = repo.joinpath(*["d"] * (MAX_LEVELS + 1))
    deep.mkdir(parents=True)
    assert find_repository(deep, home=tmp_path / "x") is None
    assert find_repository(repo / "examples", home=repo) is None
    assert find_repository("examples") is None
    assert find_repository("/x\x00y") is None  # a path the contract refuses: no lookup, no exception
