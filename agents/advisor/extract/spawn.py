"""Python scripts that only start the real job: ``subprocess.call([python, 'main.py', *args], cwd='../')`` or
``os.system('bash exp.sh ...')`` after building the command from their own settings (read, never run).

The launcher is evaluated as ``__main__`` with the command line it was given (``sys.argv``, and its argparse
settings as ``parse_args()`` returns them), by the same abstract interpreter that counts models; a process it would
start is recorded with its arguments, never started. That command is parsed like a submitted one, in the folder
it would run from. Only a command whose program is Python or a shell script is followed; the folder must stay
inside the workspace's boundary (the job's repository, if the submission names it).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Final

from schedmate.agents.advisor.extract.collect import Extraction, collect_settings
from schedmate.agents.advisor.extract.launch import Launch, parse_command
from schedmate.agents.advisor.extract.param_count import ParamCounter
from schedmate.agents.advisor.extract.values import UNKNOWN, AbortError, namespace
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["spawned_command"]

_MENTIONS: Final = re.compile(r"\bsubprocess\b|\bos\.system\b")
# A script that trains itself is the job, whatever it starts beside (a `git rev-parse`, an evaluation run after)
_TRAINS: Final = re.compile(r"\.backward\(|\boptim\.\w+\(|\bDataLoader\(|\.fit\(|\bTrainer\(")
_PROGRAMS: Final = frozenset({"python", "torchrun", "bash", "sh", "deepspeed", "accelerate"})
_STEPS: Final = 50_000


def spawned_command(ws: Workspace, launch: Launch) -> Launch | None:
    """The command a Python launcher script starts (its ``cwd`` relative to the workspace root), or None when
    ``launch`` runs no such script or the command cannot be told."""
    if launch.launcher != "python" or not launch.script or not launch.script.endswith(".py"):
        return None
    text = ws.read_text_or_none(launch.script)
    if not text or not _MENTIONS.search(text) or _TRAINS.search(text):
        return None
    ex = Extraction(launch=launch)
    try:
        collect_settings(ws, launch, ex)  # `args = parser.parse_args()` in the launcher: its flags and defaults
    except (AbortError, RecursionError, ValueError, TypeError):
        return None
    counter = ParamCounter(ws, max_steps=_STEPS)
    counter.parsed_settings = namespace({k: v.value for k, v in ex.values.items()})
    try:
        counter.main_env(launch.script, [launch.script, *launch.args])
    except AbortError:
        return None
    for _, args, kwargs in counter.spawned:
        argv = _command(args[0] if args else kwargs.get("args"))
        if argv is None:
            continue
        inner = parse_command(argv)
        if inner.launcher not in _PROGRAMS or not (inner.script or inner.module):
            continue
        folder = kwargs.get("cwd", ".")
        if not isinstance(folder, str) or posixpath.isabs(folder):
            continue
        inner.cwd = posixpath.normpath(posixpath.join(launch.cwd, folder, inner.cwd))  # `cd x && …` after `cwd=`
        inner.env = {**launch.env, **inner.env}
        return inner
    return None


def _command(value: Any) -> list[str] | str | None:
    """A command as the launcher would pass it: a string for a shell, or a list of words (numbers as text)."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list | tuple) and value and all(_word(v) for v in value):
        return [str(v) for v in value]
    return None


def _word(v: Any) -> bool:
    return v is not UNKNOWN and isinstance(v, str | int | float) and not isinstance(v, bool)
