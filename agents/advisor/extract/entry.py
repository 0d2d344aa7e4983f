"""Where a job's training code really starts: console scripts and thin wrapper scripts followed.

``stylegan2_pytorch --data …`` runs the function a package declares under ``console_scripts``
(``setup.py``, ``setup.cfg``) or ``[project.scripts]`` (``pyproject.toml``). ``python train_mem.py``
often only imports the training function from the job's own package and calls it
(``from pkg.train import train; train()``, ``fire.Fire(main)``). In both cases the analysis moves to
the module that defines the function, with the call appended as that module's ``__main__`` block
(:attr:`Launch.entry_suffix`), so settings and consumers are read where the work happens.
"""

from __future__ import annotations

import ast
import re
import tomllib
from typing import Final

from schedmate.agents.advisor.extract.launch import WHICH_PREFIX, Launch, follow_shell_script, parse_command
from schedmate.agents.advisor.extract.syntax import parse
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["follow_entry", "follow_process_launcher", "top_level_statements"]

_SCRIPT_SPEC: Final = re.compile(r"""['"]?\s*([\w.-]+)\s*=\s*([\w.]+)\s*:\s*(\w+)\s*['"]?""")
_PARSES_ITSELF: Final = re.compile(
    r"\.add_argument\(|HfArgumentParser\(|@click\.|@hydra\.main|@(?:dora\.)?hydra_main\(|\bFLAGS\b"
)
_KNOWN_LAUNCHERS: Final = frozenset(
    {None, "python", "torchrun", "deepspeed", "accelerate", "mpirun", "srun", "llamafactory-cli", "bash", "sh"}
)
_MAIN_GUARD: Final = re.compile(r"""__name__\s*==\s*['"]__main__['"]""")


def follow_entry(ws: Workspace, launch: Launch) -> Launch:
    """``launch`` with its script moved to the module a console script or a thin wrapper runs (unchanged if none)."""
    if launch.script is None and launch.module is None and launch.launcher not in _KNOWN_LAUNCHERS:
        _console_script(ws, launch)
    elif launch.script and launch.script.startswith(WHICH_PREFIX) and launch.script.endswith(")"):
        _console_script(ws, launch, launch.script[len(WHICH_PREFIX) : -1])  # `torchrun … $(which lerobot-train)`
    if launch.script and launch.script.endswith(".py"):
        _relauncher(ws, launch)
    if launch.script and launch.script.endswith(".py"):
        _thin_wrapper(ws, launch)
    return launch


_STARTS_PYTHON: Final = re.compile(r"\b(?:Popen|subprocess\.run|subprocess\.call|check_call)\(")


_LAUNCH_COPY: Final = re.compile(r"""add_argument\(\s*["']--nproc[_-]per[_-]node["']""")


def follow_process_launcher(ws: Workspace, launch: Launch) -> Launch:
    """``python tools/launch.py --nnodes 1 --nproc_per_node 8 configs/run.sh``: a copy of
    ``torch.distributed.launch`` kept in the job's code (``--nproc_per_node`` and a ``training_script`` it starts once
    per process) runs like ``torchrun`` on the script it is given; a shell script given to it is followed, and the
    command that script runs gets the launcher's processes. Unchanged for any other script."""
    if launch.launcher != "python" or not launch.script or not launch.script.endswith(".py"):
        return launch
    text = ws.read_text_or_none(launch.script) or ""
    if not _LAUNCH_COPY.search(text) or "training_script" not in text or not _STARTS_PYTHON.search(text):
        return launch
    inner = parse_command(["torchrun", *launch.args])
    inner.env, inner.cwd = {**launch.env, **inner.env}, launch.cwd
    if inner.script and inner.script.endswith(".sh"):
        shell = Launch(env=dict(inner.env), cwd=inner.cwd, launcher="bash", script=inner.script, args=inner.args)
        ran = follow_shell_script(ws, shell)
        if ran.launcher == "python" and (ran.script or ran.module):
            ran.launcher, ran.launcher_args = "torchrun", inner.launcher_args
            ran.nproc_per_node, ran.nnodes, ran.world_size = inner.nproc_per_node, inner.nnodes, inner.world_size
            return ran
    return inner


def _relauncher(ws: Workspace, launch: Launch) -> None:
    """``python -m multiproc train.py --flags``: a module of the job's own that starts one Python per GPU on the
    script and flags it is given (its ``sys.argv`` handed to ``sys.executable``). The work is that script's; the
    processes are the loop's count (``range(torch.cuda.device_count())``: every visible GPU)."""
    text = ws.read_text_or_none(launch.script or "")
    if (
        not text or not launch.args or not launch.args[0].endswith(".py") or not ws.exists(launch.args[0])
        or not _STARTS_PYTHON.search(text) or "sys.executable" not in text or "sys.argv" not in text
    ):  # fmt: skip
        return
    count = re.search(r"for\s+\w+\s+in\s+range\(\s*(\w+)\s*\)", text)
    launch.launcher, launch.script, launch.args = "relaunch", launch.args[0], launch.args[1:]
    launch.module = None
    if count and count.group(1).isdigit():
        launch.nproc_per_node = int(count.group(1))


def _console_scripts(ws: Workspace) -> dict[str, str]:
    """Declared console scripts: name → ``module:function``."""
    out: dict[str, str] = {}
    for path in ("setup.py", "setup.cfg"):
        text = ws.read_text_or_none(path) or ""
        m = re.search(r"console_scripts['\"]?\s*[:=]\s*(\[[^\]]*\]|(?:\n[ \t]+\S.*)+)", text)
        if m:
            for spec in _SCRIPT_SPEC.finditer(m.group(1)):
                out.setdefault(spec.group(1), f"{spec.group(2)}:{spec.group(3)}")
    pyproject = ws.read_text_or_none("pyproject.toml")
    if pyproject:
        try:
            data = tomllib.loads(pyproject)
        except tomllib.TOMLDecodeError:
            data = {}
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        for scripts in (data.get("project", {}).get("scripts", {}), poetry.get("scripts", {})):  # PEP 621, Poetry
            if isinstance(scripts, dict):
                out.update({k: v for k, v in scripts.items() if isinstance(k, str) and isinstance(v, str)})
    return out


def _console_script(ws: Workspace, launch: Launch, name: str | None = None) -> None:
    """The module a console script runs: the command's word (``stylegan2_pytorch``), or ``name`` handed to a launcher
    (``torchrun $(which lerobot-train)``, which keeps its launcher)."""
    target = _console_scripts(ws).get(name or launch.launcher or "")
    if target is None or ":" not in target:
        return
    module, _, func = target.partition(":")
    file = ws.module_file(module, 0, "__entry__.py")
    if file is None or not re.fullmatch(r"\w+", func):
        return
    launch.launcher, launch.script = launch.launcher if name else "python", file
    launch.entry_suffix = f"\n\nif __name__ == '__main__':\n    {func}()\n"


def _thin_wrapper(ws: Workspace, launch: Launch) -> None:
    """Move to the job-local module whose function the entry script calls last, if the script parses no settings."""
    script = launch.script or ""
    text = ws.read_text_or_none(script)
    if not text or _PARSES_ITSELF.search(text):
        return
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return
    imported: dict[str, tuple[str, str]] = {}  # local name → (module file, name there)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            file = ws.module_file(node.module, node.level, script)
            if file is not None and file != script:
                for alias in node.names:
                    imported[alias.asname or alias.name] = (file, alias.name)
    if any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in tree.body):
        return  # the script does work of its own
    statements = [s for s in top_level_statements(tree) if not _is_preamble(s)]
    if (
        not statements
        or len(statements) > 4
        or not all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in statements)
    ):
        return  # a thin wrapper only calls: `patch(); train()`, `fire.Fire(main)`
    last: tuple[ast.Call, str] | None = None
    for stmt in statements:
        assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
        call = stmt.value
        target = call.args[0] if _is_cli_runner(call) and call.args else call.func
        if isinstance(target, ast.Name) and target.id in imported:
            last = (call, target.id)
    if last is None:
        return
    call, name = last
    file, original = imported[name]
    module_text = ws.read_text_or_none(file) or ""
    if not re.search(rf"^\s*(?:async\s+)?def {re.escape(original)}\(", module_text, re.M):
        return  # re-exported from elsewhere: not followed
    renamed = ast.unparse(call).replace(name, original, 1) if name != original else ast.unparse(call)
    runner = "import fire\n" if _is_cli_runner(call) and "fire" in ast.unparse(call.func) else ""
    launch.script = file
    launch.entry_suffix = f"\n\n{runner}if __name__ == '__main__':\n    {renamed}\n"


def _is_preamble(stmt: ast.stmt) -> bool:
    """Imports, the docstring, ``sys.path``/``os.environ`` edits and logging setup: not the job's work."""
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    text = ast.unparse(stmt)
    return text.startswith(("sys.path", "os.environ", "warnings.", "logging.", "torch.multiprocessing.set_start"))


def _is_cli_runner(call: ast.Call) -> bool:
    return ast.unparse(call.func) in ("fire.Fire", "Fire", "typer.run")


def top_level_statements(tree: ast.Module) -> list[ast.stmt]:
    """The module's own statements and those of its ``if __name__ == "__main__":`` block."""
    out: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and _MAIN_GUARD.search(ast.unparse(node.test)):
            out += node.body
        else:
            out.append(node)
    return out
