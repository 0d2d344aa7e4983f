"""The ReAct agent: an LLM that reads the job's files to fill the fields the static pass left open.

Only when an LLM is configured, and only for fields the static pass could not determine. The model
works in turns; each turn it answers one JSON object: a thought and an action — ``list_files`` (a
folder of the workspace), ``read_file`` (a file of the workspace, shown with line numbers) or
``answer``. The tools go through :class:`Workspace`, so nothing outside the job's working directory
is read (symlinks and ``..`` are refused) and nothing is run or written.

Its answer is evidence, not trust: every value must come with the file it was read from and the
quoted line; the file must be one the agent read, the line must be in it, and the value must appear
verbatim in the line. Anything else is rejected and counted. Several samples vote per field; a value
needs a majority of the samples that answered. The work is bounded: turns per sample, characters per
read, files listed, and the LLM client's timeout and circuit breaker.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from schedmate.agents.advisor.extract.workspace import TEXT_SUFFIXES, Workspace
from schedmate.agents.exceptions import WorkspaceError
from schedmate.agents.ml.llm import LLMClient
from schedmate.schemas.jobs_metadata import FieldSource, WorkloadMetadata

__all__ = ["OPEN_FIELDS", "ReactReport", "react_fill"]

# Fields the agent may fill, with their JSON type.
OPEN_FIELDS: Final[dict[str, type]] = {
    "model_name": str, "dataset": str, "batch_size_per_device": int, "epochs": float, "max_steps": int,
    "learning_rate": float,
}  # fmt: skip
_READ_CHARS: Final = 6000
_LIST_FILES: Final = 60
_SYSTEM: Final = (
    "You read a machine-learning job's source files to find its training settings. Each turn, reply with ONE "
    'JSON object: {"thought": "...", "action": "list_files"|"read_file"|"answer", "path": "...", '
    '"answers": [{"field": "...", "value": "...", "file": "...", "quote": "..."}]}. '
    "list_files shows the files of a folder (path '.' for the top). read_file shows a file with line numbers. "
    "answer gives the settings you found: value exactly as written in the file, file it is in, and quote = the "
    "whole line containing it. Only answer what you read; leave out what you did not find."
)


# Plain types only: the schema becomes a grammar on llama.cpp / vLLM, and their converters reject (or crash
# on) unions and length bounds; sizes are checked after parsing instead.
class _Found(BaseModel):
    model_config = ConfigDict(extra="ignore")
    field: str
    value: str
    file: str
    quote: str


class _Step(BaseModel):
    model_config = ConfigDict(extra="ignore")
    thought: str = ""
    action: Literal["list_files", "read_file", "answer"]
    path: str = "."
    answers: list[_Found] = Field(default_factory=list)


@dataclass
class ReactReport:
    """What the agent did: calls, tokens, seconds, turns, accepted and rejected values, per-field votes."""

    fields: list[str] = field(default_factory=list)
    samples: int = 0
    turns: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    accepted: dict[str, Any] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    refused_paths: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able."""
        return dict(self.__dict__)


@dataclass
class _Sample:
    read: dict[str, str] = field(default_factory=dict)  # relative path → text the agent was shown
    found: dict[str, tuple[Any, str, int]] = field(default_factory=dict)  # field → (value, file, line)


def _list(ws: Workspace, folder: str) -> str:
    prefix = "" if folder in ("", ".", "./") else folder.strip("/") + "/"
    out = []
    for rel in ws.files(TEXT_SUFFIXES):
        if rel.startswith(prefix):
            out.append(rel)
            if len(out) >= _LIST_FILES:
                out.append("...")
                break
    return "\n".join(out) or "(no text files)"


def _numbered(text: str) -> str:
    return "\n".join(f"{i}: {line}" for i, line in enumerate(text.splitlines(), 1))


def _rel(path: str) -> str:
    path = path.strip()
    return path[2:] if path.startswith("./") else path


def _coerce(kind: type, raw: str) -> Any:
    if kind is str:
        return raw
    try:
        v = float(raw.replace("_", ""))
    except ValueError:
        return None
    return int(v) if kind is int and v.is_integer() else (v if kind is float else None)


def _verify(f: _Found, sample: _Sample, wanted: list[str]) -> tuple[Any, str, int] | str:
    """The checked (value, file, line), or why the answer is rejected."""
    if f.field not in wanted:
        return f"{f.field}: not an open field"
    text = sample.read.get(_rel(f.file))
    if text is None:
        return f"{f.field}: {f.file!r} was not read"
    raw = f.value.strip()[:200]
    quote = f.quote.strip()[:2000]
    if not raw or raw not in quote:
        return f"{f.field}: value {raw[:40]!r} is not in its quote"
    lines = text.splitlines()
    line_no = next((i for i, line in enumerate(lines, 1) if quote and quote in line), None)
    if line_no is None:
        return f"{f.field}: the quote is not a line of {f.file}"
    value = _coerce(OPEN_FIELDS[f.field], raw)
    if value is None:
        return f"{f.field}: {raw[:40]!r} is not a {OPEN_FIELDS[f.field].__name__}"
    return value, f.file, line_no


async def _one_sample(
    llm: LLMClient,
    ws: Workspace,
    command: str,
    wanted: list[str],
    report: ReactReport,
    max_turns: int,
    temperature: float,
) -> _Sample:
    sample = _Sample()
    transcript = [f"Command: {command}\nFind: {', '.join(wanted)}\nFiles:\n{_list(ws, '.')}"]
    for _ in range(max_turns):
        report.turns += 1
        step = await llm.structured(_SYSTEM, "\n\n".join(transcript)[-24_000:], _Step, max_tokens=400,
                                    temperature=temperature)  # fmt: skip
        if step is None:
            break
        if step.action == "answer":
            for f in step.answers[:20]:
                checked = _verify(f, sample, wanted)
                if isinstance(checked, str):
                    report.rejected.append(checked)
                else:
                    sample.found.setdefault(f.field, checked)
            break
        path = (step.path or ".").strip()
        try:
            if step.action == "list_files":
                shown = _list(ws, path)
            else:
                text = sample.read[_rel(path)] = ws.read_text(path)[:_READ_CHARS]
                shown = _numbered(text)
        except (WorkspaceError, OSError, ValueError) as exc:
            report.refused_paths.append(path[:200])
            shown = f"refused: {str(exc)[:200]}"
        transcript.append(f"{step.action} {path}:\n{shown}")
    return sample


async def react_fill(
    workdir: Path,
    command: str,
    meta: WorkloadMetadata,
    llm: LLMClient,
    *,
    samples: int = 3,
    max_turns: int = 6,
    temperature: float = 0.7,
    repo: Path | None = None,
) -> tuple[WorkloadMetadata, ReactReport]:
    """``meta`` with the open fields the agent found and proved; the report says how (path ``react``)."""
    wanted = [f for f in OPEN_FIELDS if getattr(meta, f) is None]
    if meta.epochs is not None or meta.max_steps is not None:  # one stopping criterion is all a job has
        wanted = [f for f in wanted if f not in ("epochs", "max_steps")]
    report = ReactReport(fields=wanted, samples=samples)
    if not wanted:
        return meta, report
    ws = Workspace(workdir, boundary=repo)
    before = llm.stats.as_dict()
    t0 = time.monotonic()
    results = await asyncio.gather(
        *(
            _one_sample(llm, ws, command, wanted, report, max_turns, 0.0 if i == 0 else temperature)
            for i in range(samples)
        )
    )
    report.seconds = round(time.monotonic() - t0, 3)
    after = llm.stats.as_dict()
    report.calls = int(after["calls"] - before["calls"])
    report.prompt_tokens = int(after["prompt_tokens"] - before["prompt_tokens"])
    report.completion_tokens = int(after["completion_tokens"] - before["completion_tokens"])
    updates: dict[str, Any] = {}
    prov = dict(meta.provenance)
    for name in wanted:
        votes = Counter(repr(s.found[name][0]) for s in results if name in s.found)
        if not votes:
            continue
        top, n = votes.most_common(1)[0]
        if n * 2 <= sum(1 for s in results if s.found):  # a majority of the samples that answered anything
            report.rejected.append(f"{name}: no majority ({dict(votes)})")
            continue
        value, file, line = next(s.found[name] for s in results if name in s.found and repr(s.found[name][0]) == top)
        updates[name] = value
        prov[name] = FieldSource(file=file, line=line, path="react")
        report.accepted[name] = value
    if not updates:
        return meta, report
    return meta.model_copy(update={**updates, "provenance": prov}), report
