"""Reading a launch command as a user submits it: env assignments, `cd … &&`, launchers, scripts.

Understands ``A=1 B=2 cmd``, ``export A=1; cmd``, ``cd sub && cmd``, ``python [-m mod] script``,
``torchrun`` / ``python -m torch.distributed.run``, ``deepspeed``, ``accelerate launch``,
``mpiexec``/``mpirun``, ``srun``, ``llamafactory-cli train``, and ``bash script.sh`` (whose
training command :func:`follow_shell_script` reads from the workspace). Nothing is run.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from schedmate.agents.advisor.extract.budget import charge_nodes, check_size
from schedmate.agents.advisor.extract.slurm import SBATCH_VALUE, allocation
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError

__all__ = ["DORA_FIND_PACKAGE", "WHICH_PREFIX", "Launch", "follow_shell_script", "parse_command", "small_count"]

_ASSIGN: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SEPARATORS: Final = frozenset({"&&", ";", "||", "|"})
_LAUNCHER_INT_FLAGS: Final = {
    "torchrun": {"--nproc_per_node": "nproc", "--nproc-per-node": "nproc", "--nnodes": "nnodes"},
    "deepspeed": {"--num_gpus": "nproc", "--num-gpus": "nproc", "--num_nodes": "nnodes", "--num-nodes": "nnodes"},
    "accelerate": {"--num_processes": "world", "--num-processes": "world", "--num_machines": "nnodes",
                   "--num-machines": "nnodes"},
    "mpirun": {"-np": "world", "-n": "world", "--np": "world"},
    "fabric": {"--devices": "nproc", "--num-nodes": "nnodes", "--num_nodes": "nnodes"},
    "composer": {"-n": "nproc", "--nproc": "nproc", "--world_size": "world"},
    "srun": {"--ntasks": "world", "-n": "world", "--gpus": "gpus", "--gpus-per-node": "nproc", "-N": "nnodes",
             "--nodes": "nnodes", "--ntasks-per-node": "nproc"},
}  # fmt: skip
# launcher flags that take a value (so the value is not mistaken for the script)
_VALUE_FLAGS: Final = re.compile(
    r"^--?(?:nproc[_-]per[_-]node|nnodes|node[_-]rank|master[_-]addr|master[_-]port|rdzv[_-]\w+|num[_-]gpus|"
    r"num[_-]nodes|include|exclude|hostfile|num[_-]processes|num[_-]machines|config[_-]file|mixed[_-]precision|"
    r"main[_-]process[_-]\w+|machine[_-]rank|np|n|N|ntasks|nodes|gpus(?:-per-node)?|partition|p|c|cpus-per-task|"
    r"max[_-]restarts|monitor[_-]interval|log[_-]dir|redirects|tee|role|run[_-]path|dynamo_backend|local[_-]ranks[_-]filter|"
    r"gpu_ids|deepspeed_config_file|zero_stage|launcher|localhost|H|x|devices|accelerator|strategy|precision|"
    r"nproc|world_size|base_rank|node_rank|master_addr|master_port|"
    r"deepspeed_(?:multinode_launcher|hostfile|exclusion_filter|inclusion_filter)|gradient_accumulation_steps|"
    r"gradient_clipping|offload_\w+_device|zero3_\w+|fsdp_\w+|num_cpu_threads_per_process|main_training_function|"
    r"dynamo_\w+)$"  # (accelerate's DeepSpeed/FSDP options: `--deepspeed_multinode_launcher standard train.py`)
)


_ASCII_DIGITS: Final = re.compile(r"[0-9]{1,9}")
WHICH_PREFIX: Final = "$(which "  # a script given as `$(which name)`: the console script `name` declares
_SWIFT_STAGES: Final = frozenset({"sft", "pt", "rlhf"})
_TRL_COMMANDS: Final = frozenset({"sft", "dpo", "kto", "grpo", "rloo", "reward", "orpo", "ppo", "online_dpo"})
_ARRAY: Final = re.compile(r"^[ \t]*(?:export\s+|declare\s+-a\s+|local\s+)?(\w+)=\(([^()]*)\)", re.M)
_VAR: Final = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)")


@dataclass
class Launch:
    """What a command says about how the job runs."""

    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."
    launcher: str | None = None  # torchrun, deepspeed, accelerate, mpirun, srun, python, llamafactory-cli, bash
    module: str | None = None
    script: str | None = None
    args: list[str] = field(default_factory=list)
    launcher_args: list[str] = field(default_factory=list)
    nproc_per_node: int | None = None
    nnodes: int | None = None
    world_size: int | None = None
    entry_suffix: str = ""  # source appended to the script: the call a console script or thin wrapper makes
    count_unknown: bool = False  # a launcher's process or node count is given but cannot be told (`--nproc_per_node
    # $NGPU` with NGPU computed at run time): several processes, how many unknown
    batch_options: list[str] = field(default_factory=list)  # `sbatch --gres=gpu:4 run.sh`: the batch system's options
    scheduler: str | None = None  # "sbatch" for a Slurm batch script

    @property
    def visible_gpus(self) -> int | None:
        """GPUs named by CUDA_VISIBLE_DEVICES, if set."""
        v = self.env.get("CUDA_VISIBLE_DEVICES")
        if v is None or v.strip() == "":
            return None
        ids = [x for x in v.split(",") if x.strip() and not x.strip().startswith("-")]
        return len(ids) or None  # (`-1`: no GPU at all, a CPU arm of the script: says nothing of a GPU run)

    @property
    def num_gpus(self) -> int | None:
        """GPUs the command asks for (processes x nodes, or the visible devices), None if it does not say."""
        if self.world_size is not None:
            return self.world_size
        if self.nproc_per_node is not None:
            return self.nproc_per_node * (self.nnodes or 1)
        return self.visible_gpus


def _split_commands(tokens: list[str]) -> list[tuple[list[str], bool]]:
    """The commands of a line, each with whether it reads the one before through a pipe (`… 2>&1 | tee log`)."""
    out: list[tuple[list[str], bool]] = [([], False)]
    for t in tokens:
        if t in _SEPARATORS or t == "&":
            out.append(([], t == "|"))
        else:
            out[-1][0].append(t)
    return [c for c in out if c[0]]


_REDIRECTS: Final = frozenset({">", ">>", "<", ">&", "&>", "&>>", "<<", "<<<", ">|", "<&"})


def _without_redirections(tokens: list[str], command: str) -> list[str]:
    """``tokens`` less shell redirections and their targets (``> log.txt``, ``2>&1``, ``2> err.log``, a process
    substitution ``> >(tee train.log)``): they are the shell's, not arguments of the program."""
    out: list[str] = []
    skip = False
    depth = 0  # inside a process substitution `>(tee log)`: the filter's words, up to its `)`
    for t in tokens:
        if depth:
            depth += t.count("(") - t.count(")")
            continue
        if skip:
            skip = False
            if t in (">(", "<("):
                depth = 1  # `> >(tee train.log)`: the redirection's target is a process substitution
            continue
        if t in _REDIRECTS:
            if out and out[-1].isdigit() and len(out[-1]) == 1 and f"{out[-1]}{t}" in command:
                out.pop()  # `2>&1`: the descriptor belongs to the redirection
            skip = True
            continue
        out.append(t)
    return out


def _take_flags(tokens: list[str], launch: Launch, table: dict[str, str]) -> list[str]:
    """Consume launcher flags; return the tokens from the script on."""
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if not t.startswith("-"):
            return tokens[i:]
        name, eq, inline = t.partition("=")  # (`--hostfile=` with an empty value takes nothing more)
        value = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) and _VALUE_FLAGS.match(name) else None)
        launch.launcher_args.append(t)
        if value is not None and not eq:
            launch.launcher_args.append(value)
            i += 1
        kind = table.get(name)
        n = small_count(value)
        if kind and n is None and value:
            launch.count_unknown = True  # `--nproc_per_node=$num_gpus` (set when the job runs), `auto`, `gpu`
        if kind and n is not None:
            if kind == "nproc":
                launch.nproc_per_node = n
            elif kind == "nnodes":
                launch.nnodes = n
            elif kind in ("world", "gpus"):
                launch.world_size = n
        if name in ("--include",) and value:
            m = re.search(r":([\d,]+)", value)
            if m:
                launch.nproc_per_node = len(m.group(1).split(","))
        i += 1
    return []


def _python(tokens: list[str], launch: Launch) -> None:
    """``python [opts] (-m module | script) args``."""
    i = 0
    while i < len(tokens) and tokens[i].startswith("-") and tokens[i] != "-m":
        i += 1
    rest = tokens[i:]
    if rest[:1] == ["-m"] and len(rest) > 1:
        mod = rest[1]
        if mod in ("torch.distributed.run", "torch.distributed.launch"):
            launch.launcher = "torchrun"
            _script_after(_take_flags(rest[2:], launch, _LAUNCHER_INT_FLAGS["torchrun"]), launch)
            return
        if mod == "trainer.distribute":
            _coqui_distribute(rest[2:], launch)
            return
        if mod == "accelerate.commands.launch":
            launch.launcher = "accelerate"
            _script_after(_take_flags(rest[2:], launch, _LAUNCHER_INT_FLAGS["accelerate"]), launch)
            return
        launch.module, launch.args = mod, rest[2:]
        return
    _script_after(rest, launch)


_TORCHX_VALUE_FLAGS: Final = frozenset({"-s", "--scheduler", "-cfg", "--scheduler_args", "--workspace"})


def _torchx(tokens: list[str], launch: Launch) -> None:
    """``torchx run [-s local_cwd] dist.ddp -j 1x2 --script train.py [-- args]``: TorchX's DDP component runs the
    script under torchrun, ``-j NODESxPROCS`` (or ``-j PROCS``) processes; ``-m module`` runs a module instead. Other
    components (``utils.python``: one process) run the script once."""
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in _TORCHX_VALUE_FLAGS and "=" not in tokens[i] else 1
    if i >= len(tokens):
        return
    component, rest = tokens[i], tokens[i + 1 :]
    launch.launcher = "torchrun" if component.startswith("dist.") else "python"
    args: list[str] = []
    k = 0
    while k < len(rest):
        name, eq, inline = rest[k].partition("=")
        value = inline if eq else (rest[k + 1] if k + 1 < len(rest) else None)
        if name == "--":
            args += rest[k + 1 :]
            break
        if name in ("-j", "--j", "--script", "-m", "--m") and value is not None:
            if name in ("-j", "--j"):
                nodes, _, procs = value.rpartition("x")
                launch.nproc_per_node, launch.nnodes = small_count(procs), small_count(nodes) if nodes else 1
            elif name == "--script":
                launch.script = value
            else:
                launch.module = value
            k += 1 if eq else 2
            continue
        args.append(rest[k])
        k += 1
    launch.args = args


def _coqui_distribute(tokens: list[str], launch: Launch) -> None:
    """``python -m trainer.distribute --script train.py [--gpus "0,1"] [args]``: Coqui's trainer starts one process
    per GPU of CUDA_VISIBLE_DEVICES (else of ``--gpus``) on the script, each joining one DDP group; the other
    arguments go to the script."""
    script, gpus, args = None, None, []
    i = 0
    while i < len(tokens):
        name, eq, inline = tokens[i].partition("=")
        value = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) else None)
        if name in ("--script", "--gpus") and value is not None:
            script, gpus = (value, gpus) if name == "--script" else (script, value)
            i += 1 if eq else 2
            continue
        args.append(tokens[i])
        i += 1
    if script is None:
        launch.module, launch.args = "trainer.distribute", tokens
        return
    launch.launcher, launch.script, launch.args = "relaunch", script, args
    if launch.visible_gpus is None and gpus is not None:
        launch.nproc_per_node = len([g for g in gpus.split(",") if g.strip()]) or None
    elif launch.visible_gpus is None:
        launch.count_unknown = True


_DORA_VALUE_FLAGS: Final = frozenset({"-P", "--package", "--main_module", "-f", "--from_sig", "-g", "--gpus", "-p",
                                       "--partition", "-c", "--comment"})  # fmt: skip
DORA_FIND_PACKAGE: Final = "?"  # the package is the folder of the working directory holding the main module


def _dora(tokens: list[str], launch: Launch) -> None:
    """``dora [-P pkg] [--main_module train] run [-d] [overrides]`` (or ``launch [-g N]``): Dora imports
    ``pkg.train`` (the package named by ``-P``/``DORA_PACKAGE``, else the first folder of the working directory with
    that module) and hands it the overrides; ``run`` is one local process, ``run -d`` one per visible GPU (how many
    is not said), ``launch -g N`` a Slurm job of N GPUs. ``grid`` starts many experiments: not one job's command."""
    package, main, sub, rest, ddp = launch.env.get("DORA_PACKAGE"), "train", None, [], False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        name, eq, inline = t.partition("=")
        value = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) and name in _DORA_VALUE_FLAGS else None)
        i += 1 if eq or value is None else 2
        if sub is None and not t.startswith("-"):
            sub = t
        elif sub is None and name in ("-P", "--package"):
            package = value
        elif sub is None and name == "--main_module":
            main = value or main
        elif sub is not None and name in ("-d", "--ddp"):
            ddp = True
        elif sub is not None and name in ("-g", "--gpus"):
            launch.world_size = small_count(value)
        elif sub is not None and not t.startswith("-"):
            rest.append(t)
    if sub not in ("run", "launch"):
        return
    launch.launcher, launch.args = "dora", rest
    launch.module = f"{package or DORA_FIND_PACKAGE}.{main}"
    if sub == "run" and ddp:
        launch.count_unknown = True
    elif sub == "run":
        launch.world_size = 1
    elif launch.world_size is None:
        launch.world_size = 1  # (`dora launch` asks Slurm for one GPU unless -g says more)


def _script_after(tokens: list[str], launch: Launch) -> None:
    if not tokens:
        return
    if tokens[:2] == ["$", "("] and ")" in tokens[2:8] and tokens[2:3] in (["which"], ["command"]):
        end = tokens.index(")", 2)  # `torchrun … $(which lerobot-train) …`: the console script found on PATH
        launch.script, launch.args = f"{WHICH_PREFIX}{tokens[end - 1]})", _unseparated(tokens[end + 1 :])
        return
    head = tokens[0]
    if head == "-m" and len(tokens) > 1:  # torchrun … -m package.module
        launch.module, launch.args = tokens[1], _unseparated(tokens[2:])
        return
    if re.match(r"^(?:python\d?(?:\.\d+)?|.*/python\d?(?:\.\d+)?)$", head):
        _python(tokens[1:], launch)
        return
    if re.fullmatch(r"\$\{?\w+\}?", head) and len(tokens) > 1 and tokens[1].endswith(".py"):
        tokens = tokens[1:]  # `deepspeed $WORKER_STR train.py`: a variable the script never set is empty
        head = tokens[0]
    launch.script, launch.args = head, _unseparated(tokens[1:])


def _unseparated(args: list[str]) -> list[str]:
    """The script's arguments without the ``--`` that separates them from the launcher's (``torchrun -m
    scripts.base_train -- --depth=24``): the launcher drops it, the script never sees it."""
    return args[1:] if args[:1] == ["--"] else args


def _strip_assignments(cmd: list[str], launch: Launch) -> list[str]:
    """Record leading ``NAME=value`` words as environment; return the rest."""
    i = 0
    while i < len(cmd) and (m := _ASSIGN.match(cmd[i])):
        launch.env[m.group(1)] = m.group(2)
        i += 1
    return cmd[i:]


def small_count(value: str | None, limit: int = 1 << 20) -> int | None:
    """``value`` as a count of processes, nodes or GPUs: ASCII digits only, at most ``limit`` (else None)."""
    if value is None or not _ASCII_DIGITS.fullmatch(value):
        return None
    n = int(value)
    return n if n <= limit else None


def _tokens(command: str) -> list[str]:
    """Shell words of ``command``; an unbalanced quote falls back to splitting on whitespace."""
    check_size(len(command), "command")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # "No closing quotation"/"No escaped character": read it as plain words
        return command.split()


# Environment managers that run the rest of the command in a project's environment: `poetry run yolo-train ...`,
# `uv run python train.py`, `conda run -n env python train.py`, `pipenv run`, `pdm run`, `hatch run`, `nohup`,
# `time`, `nice`. The command they wrap is the job.
_RUNNERS: Final = {("poetry", "run"), ("uv", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
                   ("conda", "run"), ("mamba", "run"), ("micromamba", "run"), ("rye", "run")}  # fmt: skip
_PREFIX_TOOLS: Final = frozenset({"nohup", "time", "nice", "stdbuf", "exec"})
_RUNNER_VALUE_FLAGS: Final = frozenset({"-n", "--name", "-p", "--prefix", "--env", "-e", "--with", "--python",
                                        "--project", "--directory", "--cwd"})  # fmt: skip


def _unwrap_runner(cmd: list[str]) -> list[str]:
    """The command an environment runner or a prefix tool wraps (unchanged if none)."""
    for _ in range(4):
        exe = cmd[0].rsplit("/", 1)[-1] if cmd else ""
        if exe in _PREFIX_TOOLS:
            cmd = cmd[1:]
            while cmd and cmd[0].startswith("-") and exe in ("nice", "stdbuf"):
                cmd = cmd[2:] if cmd[0] in ("-n", "--adjustment", "-i", "-o", "-e") else cmd[1:]
            continue
        if len(cmd) > 1 and (exe, cmd[1]) in _RUNNERS:
            rest = cmd[2:]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in _RUNNER_VALUE_FLAGS and "=" not in rest[0] else rest[1:]
            cmd = rest
            continue
        break
    return cmd


def parse_command(command: str | list[str]) -> Launch:
    """Parse a submitted command line (a string as typed, or an argv list)."""
    tokens = _without_redirections(_tokens(command), command) if isinstance(command, str) else list(command)
    launch = Launch()
    for raw, piped in _split_commands(tokens):
        if piped and (launch.script or launch.module):
            continue  # `python train.py | tee log`: the filter reading the job's output is not the job
        if not (launch.script or launch.module):
            launch.launcher = None  # `cat hosts | python train.py`, `echo start; python train.py`: that one is the job
        cmd = _strip_assignments(raw, launch)
        if not cmd:
            continue
        if cmd[0] == "cd" and len(cmd) > 1:
            launch.cwd = str((launch.cwd + "/" + cmd[1]) if launch.cwd != "." else cmd[1])
            continue
        if cmd[0] == "export":
            for t in cmd[1:]:
                m = _ASSIGN.match(t)
                if m:
                    launch.env[m.group(1)] = m.group(2)
            continue
        if cmd[0] == "env":
            cmd = _strip_assignments(cmd[1:], launch)
            if not cmd:
                continue
        cmd = _unwrap_runner(cmd)
        if not cmd:
            continue
        exe = cmd[0].rsplit("/", 1)[-1]
        if exe in ("torchrun", "deepspeed", "mpirun", "mpiexec", "horovodrun", "srun"):
            launch.launcher = "mpirun" if exe in ("mpiexec", "horovodrun") else exe  # (Horovod's `-np N`: N ranks)
            _script_after(_take_flags(cmd[1:], launch, _LAUNCHER_INT_FLAGS[launch.launcher]), launch)
        elif (exe == "lightning" and cmd[1:3] == ["run", "model"]) or (exe == "fabric" and cmd[1:2] == ["run"]):
            launch.launcher = "fabric"  # Lightning Fabric's launcher: one process per --devices on each node
            skip = 3 if exe == "lightning" else 2
            _script_after(_take_flags(cmd[skip:], launch, _LAUNCHER_INT_FLAGS["fabric"]), launch)
        elif exe == "axolotl" and cmd[1:2] == ["train"]:  # axolotl train cfg.yml [--launcher L] [-- L's flags]
            launch.launcher = "axolotl"
            rest, after = cmd[2:], []
            if "--" in rest:
                cut = rest.index("--")
                rest, after = rest[:cut], rest[cut + 1 :]
            if rest and not rest[0].startswith("-"):
                launch.script, rest = rest[0], rest[1:]
            launch.args = rest
            inner = next((rest[k + 1] for k, a in enumerate(rest[:-1]) if a == "--launcher"), "accelerate")
            _take_flags(after, launch, _LAUNCHER_INT_FLAGS["torchrun" if inner == "torchrun" else "accelerate"])
        elif exe == "trl" and cmd[1:2] and cmd[1] in _TRL_COMMANDS:  # `trl dpo --model_name_or_path ...`
            launch.launcher, launch.module, launch.args = "trl", f"trl.scripts.{cmd[1]}", cmd[2:]
        elif exe == "composer" and len(cmd) > 1:
            launch.launcher = "composer"  # MosaicML Composer's launcher: one process per visible GPU unless -n N
            _script_after(_take_flags(cmd[1:], launch, _LAUNCHER_INT_FLAGS["composer"]), launch)
        elif exe == "accelerate" and cmd[1:2] == ["launch"]:
            launch.launcher = "accelerate"
            _script_after(_take_flags(cmd[2:], launch, _LAUNCHER_INT_FLAGS["accelerate"]), launch)
        elif exe == "dora":
            _dora(cmd[1:], launch)
        elif exe == "torchx" and cmd[1:2] == ["run"]:
            _torchx(cmd[2:], launch)
        elif exe.startswith("python"):
            launch.launcher = launch.launcher or "python"
            _python(cmd[1:], launch)
        elif exe.endswith(".py"):  # `./tools/train.py ...`: an executable script runs under its shebang's Python
            launch.launcher = launch.launcher or "python"
            _python(cmd, launch)
        elif exe == "sbatch":  # `sbatch [options] job.sh [args]`: Slurm runs the script on the nodes it allocates
            rest = cmd[1:]
            while rest and rest[0].startswith("-"):
                flag = rest.pop(0)
                launch.batch_options.append(flag)
                if "=" not in flag and rest and SBATCH_VALUE.fullmatch(flag):
                    launch.batch_options.append(rest.pop(0))
            if rest:
                launch.launcher, launch.script, launch.args = "bash", rest[0], rest[1:]
                launch.scheduler = "sbatch"
        elif exe in ("bash", "sh", "zsh"):
            launch.launcher = "bash"
            at = next((i for i, t in enumerate(cmd[1:], start=1) if not t.startswith("-")), len(cmd))
            # bash's own options come before the script (`bash -x run.sh`); what follows it is the script's
            launch.script, launch.args = (cmd[at], cmd[at + 1 :]) if at < len(cmd) else (None, [])
        elif exe.endswith(".sh"):
            launch.launcher, launch.script, launch.args = "bash", cmd[0], cmd[1:]
        elif "/" in cmd[0] and "." not in exe:  # `./train --flags`: a file of the job's run by its shebang
            launch.launcher, launch.script, launch.args = "exec", cmd[0].removeprefix("./"), cmd[1:]
        else:
            launch.launcher, launch.script, launch.args = exe, None, cmd[1:]
            if exe == "swift" and cmd[1:2] and cmd[1] in _SWIFT_STAGES:  # ms-swift: `swift sft --model … --dataset …`
                launch.module, launch.args = f"swift.{cmd[1]}", cmd[2:]
                nproc = small_count(launch.env.get("NPROC_PER_NODE"))  # swift runs torchrun over NPROC_PER_NODE
                if nproc is not None:
                    launch.nproc_per_node, launch.nnodes = nproc, small_count(launch.env.get("NNODES"))
                elif (visible := launch.visible_gpus) is not None:
                    launch.world_size = 1 if visible >= 1 else None  # one process (its devices: `device_map` below)
            if exe == "llamafactory-cli":  # llamafactory-cli train [config.yaml] [key=value | --key value ...]
                rest = cmd[2:]
                if rest and not rest[0].startswith("-") and "=" not in rest[0]:
                    launch.script, rest = rest[0], rest[1:]
                launch.args = rest
    return launch


def _args_from(positional: list[str], n: str | None) -> str:
    """``${@:N}`` (``"$@"`` without N): the arguments from the N-th on, quoted as words."""
    return shlex.join(positional[max(int(n or 1) - 1, 0) :])


def _positional_from(positional: list[str], m: re.Match[str]) -> str:
    """:func:`_args_from` as a ``re.sub`` replacement (backslashes kept)."""
    return _args_from(positional, m[1]).replace("\\", "\\\\")


def _expand(variables: dict[str, str], line_len: int, m: re.Match[str]) -> str:
    """A variable's value substituted into a line (``A=$A$A`` forty times must not build a terabyte)."""
    name, default = m.group(1) or m.group(3), m.group(2)
    value = variables.get(name)
    if value is None or (value == "" and default is not None):  # `${X:-d}`: d when X is unset or empty
        value = m.group(0) if default is None else _VAR.sub(lambda d: variables.get(d[1] or d[3], d[0]), default)
    check_size(len(value) + line_len, "shell line")
    return value


@dataclass
class _Arms:
    """One ``if`` block of a shell script: whether the arm being read runs (None: cannot tell) and whether an
    earlier arm already ran."""

    live: bool | None
    taken: bool | None
    word: str | None = None  # a `case` block's word ("" when it cannot be told); None for an `if` block


@dataclass
class _Loop:
    """A ``while TEST; do`` … ``done`` loop being read: where its body starts, its test, the depth of the ``if``
    stack at its start, and how often its body has run (bounded)."""

    start: int
    test: str
    depth: int
    rounds: int = 0


_POSITIONAL: Final = re.compile(r"\"?\$\{[@*](?::(\d{1,2}))?\}\"?|\"\$[@*]\"|\$[@*]")
_ARGS_ASSIGN: Final = re.compile(r"""(?:export\s+)?(\w+)=["']?\$(?:\{[@*](?::(\d{1,2}))?\}|[@*])["']?""")
_IF: Final = re.compile(r"(if|elif)\s+(.+?)(?:\s*;\s*then)?")
_TEST_OPS: Final[dict[str, Callable[[str, str], bool]]] = {
    "=": lambda a, b: a == b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "-eq": lambda a, b: int(a) == int(b), "-ne": lambda a, b: int(a) != int(b), "-lt": lambda a, b: int(a) < int(b),
    "-le": lambda a, b: int(a) <= int(b), "-gt": lambda a, b: int(a) > int(b), "-ge": lambda a, b: int(a) >= int(b),
}  # fmt: skip


def _expanded_truth(condition: str, variables: dict[str, str]) -> bool | None:
    """:func:`_test_truth` of a test with the script's variables expanded in it (``$#``: the arguments left)."""
    condition = condition.replace("$#", variables.get("#", "$#"))
    return _test_truth(_VAR.sub(functools.partial(_expand, variables, len(condition)), condition))


def _test_truth(condition: str) -> bool | None:
    """A shell test's truth when its words are all known: ``[ -n "$X" ]``, ``[[ $GPUS -lt 8 ]]``, ``test a = b``;
    None for anything else (files, commands, unexpanded variables, ``&&`` chains)."""
    if "$" in condition or "`" in condition:
        return None
    try:
        words = shlex.split(condition)
    except ValueError:
        return None
    if words in (["true"], ["false"], [":"]):  # `if $INSTALL_DEPS; then` with INSTALL_DEPS=false: the command's status
        return words[0] != "false"
    if (words[:1] == ["["] and words[-1:] == ["]"]) or (words[:1] == ["[["] and words[-1:] == ["]]"]):
        words = words[1:-1]
    elif words[:1] == ["test"]:
        words = words[1:]
    else:
        return None
    negate = words[:1] == ["!"]
    words = words[1:] if negate else words
    truth: bool | None = None
    if len(words) == 1:
        truth = words[0] != ""
    elif len(words) == 2 and words[0] in ("-n", "-z"):
        truth = (words[1] != "") == (words[0] == "-n")
    elif len(words) == 3 and words[1] in _TEST_OPS:
        try:
            truth = bool(_TEST_OPS[words[1]](words[0], words[2]))
        except ValueError:
            return None
    return None if truth is None else truth != negate


_CASE: Final = re.compile(r"case\s+(.+?)\s+in")
_CASE_ARM: Final = re.compile(r"\(?([^()\s][^()]*)\)")
_CASE_FOLD: Final = re.compile(r"\$\{(\w+)(,,|\^\^)\}")


def _case_line(line: str, arms: list[_Arms], variables: dict[str, str]) -> bool:
    """Follow ``case WORD in`` / ``pattern)`` / ``;;`` / ``esac`` lines (True for one of them): the arm whose glob
    pattern the word matches runs (``case ${init,,} in deberta-v3-base) parameters="…" ;; esac``); a word that cannot
    be told leaves every arm possible."""
    if line in ("esac", "esac;"):
        if arms and arms[-1].word is not None:
            arms.pop()
        return True
    if m := _CASE.fullmatch(line):
        word = _CASE_FOLD.sub(
            lambda v: variables.get(v[1], v[0]).lower() if v[2] == ",," else variables.get(v[1], v[0]).upper(), m[1]
        )
        word = _VAR.sub(functools.partial(_expand, variables, len(line)), word).strip("'\"")
        outer = all(a.live is not False for a in arms)
        arms.append(_Arms(False, not outer, "" if "$" in word else word))
        return True
    if not arms or arms[-1].word is None:
        return False
    top = arms[-1]
    if line in (";;", ";&", ";;&"):
        top.live = False
        return True
    if m := _CASE_ARM.fullmatch(line):
        if top.taken is True:
            top.live = False
        elif top.word == "":
            top.live = None  # (a word the script's variables cannot tell: any arm may run)
        else:
            word = top.word or ""
            hit = any(fnmatch.fnmatchcase(word, p.strip().strip("'\"")) for p in m[1].split("|"))
            top.live = top.taken = hit
        return True
    return False


def _conditional(line: str, arms: list[_Arms], variables: dict[str, str]) -> bool:
    """Follow ``if``/``elif``/``else``/``fi`` lines (True for one of them): which arm of each block runs, where the
    test can be told with the script's variables; an arm that cannot be told may run."""
    if _case_line(line, arms, variables):
        return True
    if line in ("fi", "fi;"):
        if arms:
            arms.pop()
        return True
    if line in ("then", "do"):
        return True
    if line in ("else", "else;"):
        if arms:
            arms[-1].live = None if arms[-1].taken is None else not arms[-1].taken
        return True
    m = _IF.fullmatch(line)
    if m is None or m[2].endswith(("fi", "fi;")):
        return False  # a one-line `if ...; then ...; fi` is read as a command line
    truth = _expanded_truth(m[2], variables)
    if m[1] == "if":
        outer = all(a.live is not False for a in arms)
        arms.append(_Arms(truth if outer else False, truth if outer else True))
    elif arms:
        top = arms[-1]
        if top.taken is True:
            top.live = False
        elif top.taken is None or truth is None:
            top.live, top.taken = (None, None) if truth is not False else (False, top.taken)
        else:
            top.live = top.taken = truth
    return True


def _positional_variables(positional: list[str]) -> dict[str, str]:
    """``$1`` … ``$9`` of a script run with these arguments (those not given are empty, as in the shell) and ``$#``."""
    return {"#": str(len(positional))} | {
        f"{i}": positional[i - 1] if i <= len(positional) else "" for i in range(1, 10)
    }


_FUNCTION: Final = re.compile(r"(?:function\s+)?([A-Za-z_][\w-]*)\s*(?:\(\s*\))?\s*(\{)?")
_FUNCTION_ARGS: Final = re.compile(r"\$(?:[1-9@*#]|\{[1-9@*#]\})")


def _inline_functions(text: str) -> str:
    """A script's shell functions run where they are called: ``train() {`` … ``}`` defined at the top and called
    as ``train`` in a ``case`` arm at the bottom (CvT's ``run.sh``). Each call line of a function called without
    arguments, or whose body reads no positional arguments, becomes the body (a few rounds, for a function that
    calls another), and the definition is dropped. A function never called so keeps its body where it stands (as
    before: its command may be the one that runs)."""
    lines = text.split("\n")
    bodies: dict[str, list[str]] = {}
    spans: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        m = _FUNCTION.fullmatch(s) if ("()" in s or s.startswith("function ")) else None
        opens = m is not None and (m[2] is not None or (i + 1 < len(lines) and lines[i + 1].strip() == "{"))
        if m is None or not opens or m[1] in ("if", "while", "for", "case"):
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        start = i + 1 if m[2] is not None else i + 2
        end = next(
            (j for j in range(start, len(lines))
             if lines[j].strip() in ("}", "};") and len(lines[j]) - len(lines[j].lstrip()) <= indent),
            None,
        )  # fmt: skip
        if end is None:
            break
        bodies[m[1]], spans[m[1]] = lines[start:end], (i, end)
        i = end + 1

    def call(line: str) -> str | None:
        words = _without_comment(line.strip()).split()
        name = words[0] if words else ""
        plain = name in bodies and (len(words) == 1 or not any(_FUNCTION_ARGS.search(b) for b in bodies[name]))
        return name if plain else None

    inside = {j for a, b in spans.values() for j in range(a, b + 1)}
    called = {name for j, line in enumerate(lines) if j not in inside and (name := call(line))}
    if not called:
        return text
    lines = [line for j, line in enumerate(lines) if not any(a <= j <= b for f, (a, b) in spans.items() if f in called)]
    for _ in range(3):
        out: list[str] = []
        size = 0
        for line in lines:
            name = call(line)
            added = bodies[name] if name in called else [line]
            out += added
            size += sum(map(len, added))
            check_size(size, "shell script")  # (a function calling itself grows the text each round: bounded)
        if out == lines:
            break
        lines = out
    return "\n".join(lines)


_WHILE: Final = re.compile(r"while\s+(.+?)(?:\s*;\s*do)?")
_LOOP_ROUNDS: Final = 64


def _loop_line(line: str, n: int, arms: list[_Arms], loops: list[_Loop], variables: dict[str, str]) -> int | None:
    """Follow ``while TEST; do`` / ``done`` lines: the body runs while the test holds (the argument loop ``while
    [[ "$1" != "" ]]; do case $1 in -m) shift; MODEL=$1 ;; esac; shift; done`` reads every option given); a test the
    variables cannot tell runs the body once, as may-run. Returns the line to go on after (None: not such a line)."""
    if m := _WHILE.fullmatch(line):
        truth = _expanded_truth(m[1], variables)
        outer = all(a.live is not False for a in arms)
        arms.append(_Arms(truth if outer else False, True))
        loops.append(_Loop(n, m[1], len(arms)))
        return n
    if line not in ("done", "done;") or not loops or loops[-1].depth != len(arms):
        return None
    loop, body = loops[-1], arms.pop()
    if body.live is True and loop.rounds < _LOOP_ROUNDS:
        truth = _expanded_truth(loop.test, variables)
        if truth is True:
            loop.rounds += 1
            arms.append(_Arms(True, True))
            return loop.start
    loops.pop()
    return n


def follow_shell_script(ws: Workspace, launch: Launch, depth: int = 0) -> Launch:
    """For ``bash run.sh …``: the launch of the first training command in the script (variables expanded); a script
    that runs another of the job's scripts (VAN's ``train.sh`` → ``bash distributed_train.sh 8 …``) is followed into
    it, two levels deep."""
    if launch.launcher != "bash" or not launch.script:
        return launch
    text = ws.read_text_or_none(launch.script) or ""
    joined = _inline_functions(re.sub(r"\\\n", " ", text))
    positional = list(launch.args)
    variables: dict[str, str] = {k: v for k, v in launch.env.items() if _ASSIGN.match(f"{k}=")}  # `CONFIG=x ./run.sh`
    variables.update(_positional_variables(positional))
    arms: list[_Arms] = []  # the `if` blocks around the line: which arm runs, where the variables can tell
    loops: list[_Loop] = []  # the `while` loops around the line
    copies: dict[str, str] = {}  # a path the script's `cp` writes → the file it copied there
    arrays: dict[int, tuple[str, str]] = {}  # `ARGS=(` ... `)` over several lines (Megatron's launch scripts)
    fallback: Launch | None = None  # the first python command, where none trains in its own text
    here = "."  # the folder the script's `cd` lines moved to (relative to where it was started)
    folders: dict[str, Workspace] = {}  # each such folder's workspace, made once
    pushed: list[str] = []  # `pushd` … `popd`
    exported: dict[str, str] = {}  # `export CUDA_VISIBLE_DEVICES=0,1,2,3`: in the environment of what runs next
    script_dir = posixpath.dirname(launch.script) or "."
    slurm = allocation(text, launch.batch_options) if launch.scheduler == "sbatch" else None
    if slurm is not None:  # a Slurm batch job: the variables Slurm sets, and the GPUs each node's tasks see
        given = slurm.environment()
        variables = {**given, **variables}
        if "CUDA_VISIBLE_DEVICES" in given and "CUDA_VISIBLE_DEVICES" not in launch.env:
            exported["CUDA_VISIBLE_DEVICES"] = given["CUDA_VISIBLE_DEVICES"]
    inside: set[int] = set()
    for arr in _ARRAY.finditer(joined):
        body = " ".join(part.split("#", 1)[0] for part in arr.group(2).splitlines())
        first = joined.count("\n", 0, arr.start())
        arrays[first] = (arr.group(1), " ".join(body.split()))
        inside.update(range(first, first + arr.group(0).count("\n") + 1))
    for doc in _HEREDOC_READ.finditer(joined):  # `read -r -d '' cmd <<EOF` … `EOF`: the lines between, as one value
        first = joined.count("\n", 0, doc.start())
        arrays[first] = (doc.group(1), " ".join(doc.group(3).split()))
        inside.update(range(first, first + doc.group(0).count("\n") + 1))
    lines = joined.splitlines()
    _multiline_values(lines, arrays, inside)
    n = -1
    while n + 1 < len(lines):
        n += 1
        line = lines[n]
        charge_nodes()
        if n in arrays:
            name, body = arrays[n]
            variables[name] = _VAR.sub(functools.partial(_expand, variables, len(body)), body)
        if n in inside:
            continue
        s = _without_comment(line.strip())
        if not s or s.startswith("#"):
            continue
        s = _PWD.sub(functools.partial(_literal, here), s)  # `DIR=\`pwd\``: the folder the script is in now
        s = _SCRIPT_DIR.sub(lambda _: script_dir, s)  # `cd "$(dirname "${BASH_SOURCE[0]}")/../sft/"`: its folder
        if (back := _loop_line(s, n, arms, loops, variables)) is not None:
            n = back  # a `while`/`done` line: `done` goes back to the body's start while the test holds
            continue
        if _conditional(s, arms, variables) or not all(a.live is not False for a in arms):
            continue  # an `if`/`elif`/`else`/`fi` line, or a line in an arm that does not run
        if _PARSE_OPTIONS.fullmatch(s):  # Kaldi's `. tools/parse_options.sh`: `--name value` set variable `name`
            positional = _options_as_variables(positional, variables)
            variables = {k: v for k, v in variables.items() if not k.isdigit()}
            variables.update(_positional_variables(positional))
            continue
        if m := re.fullmatch(r"shift(?:\s+(\d{1,2}))?", s):  # `NUM_PROC=$1; shift`: the rest is handed on
            positional = positional[int(m.group(1) or 1) :]
            variables = {k: v for k, v in variables.items() if not k.isdigit()}
            variables.update(_positional_variables(positional))
            continue
        if m := _ARGS_ASSIGN.fullmatch(s):  # `PY_ARGS=${@:1}`, `ARGS="$@"`: the arguments as one string
            variables[m[1]] = _args_from(positional, m[2])
            continue
        if (m := re.match(r"(?:export\s+)?(\w+)=", s)) and m[1] not in variables and re.search(rf"\$\{{?{m[1]}\b", s):
            variables[m[1]] = ""  # `EXTRA_ARGS="$EXTRA_ARGS $1"` with EXTRA_ARGS unset: it starts empty
        if m := re.fullmatch(r"""let\s+["']?(\w+)\s*=\s*([^"';]+?)["']?""", s):  # `let BATCH_SIZE=ALL/NUM_GPU/ACCUM`:
            s = f"{m[1]}=$(({m[2]}))"  # bash integer arithmetic over the script's variables, as `$((…))` is
        s = s.replace("$#", str(len(positional)))
        s = re.sub(r"\$\{(\w+)\[[@*]\]\}", r"${\1}", s)  # `${ARGS[@]}`: the array's words
        s = _POSITIONAL.sub(functools.partial(_positional_from, positional), s)  # `"$@"`, `${@:2}` (from the 2nd on)
        s = _ARITH.sub(functools.partial(_arithmetic, variables), s)  # `$((GPU_ID*10+1))`, before `$VAR`s
        s = _VAR.sub(functools.partial(_expand, variables, len(s)), s)
        if m := re.fullmatch(r"(?:export\s+)?(\w+)=(\S*)", s):
            variables[m.group(1)] = m.group(2).strip("'\"")
            if s.startswith("export") or m.group(1) in exported:
                exported[m.group(1)] = variables[m.group(1)]
            continue
        if m := re.fullmatch(r"""(?:export\s+)?(\w+)=(?:"([^"]*)"|'([^']*)')""", s):
            variables[m.group(1)] = " ".join((m.group(2) if m.group(2) is not None else m.group(3)).split())
            continue  # `parameters=" --num_train_epochs 3 --fp16 True "`: several words, handed on as one
        if m := re.fullmatch(r"eval\s+(.+)", s):  # `cmd="torchrun … $model_args …"`, then `eval $cmd`: the string
            s = m[1].strip()  # the variable holds (expanded above) is the command line that runs
            s = s[1:-1] if len(s) > 1 and s[0] == s[-1] and s[0] in "\"'" else s
        if m := re.fullmatch(r"cp\s+(.+)", s):  # `cp tool/train.py ${exp_dir}`, then `python ${exp_dir}/train.py`
            _note_copies(m[1].split(), copies)
            continue
        if m := re.fullmatch(r"(pushd|popd)\b\s*(\S*?)\s*(?:>\s*/dev/null\s*(?:2>&1)?)?", s):
            if m[1] == "pushd" and m[2]:
                pushed.append(here)
                here = _joined(here, m[2].strip("'\""))
            elif m[1] == "popd" and pushed:
                here = pushed.pop()
            continue
        inner = parse_command(s)
        if slurm is not None and inner.launcher == "srun" and inner.world_size is None and inner.nproc_per_node is None:
            inner.world_size = slurm.tasks  # `srun python …` in the batch job: a task per task slot of the allocation
            inner.nnodes = inner.nnodes or slurm.nodes
        if inner.cwd != ".":  # `cd ../sft/` (a line of its own, or `cd x && python …`): it stays for what follows
            here = inner.cwd = _joined(here, inner.cwd)
            if not (inner.launcher or inner.script or inner.module):
                continue
        else:
            inner.cwd = here
        at = folders[here] if here in folders else folders.setdefault(here, _folder(ws, here))  # (once per folder)
        inner.env = {**exported, **inner.env}
        if (
            inner.launcher == "bash" and inner.script and depth < 2 and inner.script != launch.script
            and at.exists(inner.script)
        ):  # fmt: skip
            inner.env = {**launch.env, **inner.env}
            followed = follow_shell_script(at, inner, depth + 1)
            if followed is not inner and _steps_itself(_folder(at, followed.cwd), followed):
                followed.cwd = _joined(here, followed.cwd)
                return followed
        if inner.launcher in (
            "python",
            "torchrun",
            "deepspeed",
            "accelerate",
            "llamafactory-cli",
            "mpirun",
            "srun",
            "fabric",
            "composer",
            "axolotl",
        ):
            inner.env = {**inner.env, **launch.env}
            copied = copies.get(posixpath.normpath(inner.script)) if inner.script else None
            if inner.script and copied and not at.exists(inner.script) and at.exists(copied):
                inner.script = copied  # the copy is made when the job runs: the job's own file is what runs
            if _steps_itself(at, inner):
                return inner
            fallback = fallback or inner  # (`python init.py …` then `python train.py …`: a preparation step first)
        elif (
            inner.launcher and _COMMAND_NAME.fullmatch(inner.launcher) and inner.launcher not in _NOT_TRAINING
            and _trains_by_its_flags(inner.args)
        ):  # fmt: skip
            inner.env = {**inner.env, **launch.env}  # an installed package's training CLI (`fairseq-train --arch …
            return inner  # --batch-size 64 --lr 2e-4 --max-epoch 100`): its flags are the job's settings
    return fallback or launch


# `$(dirname "${BASH_SOURCE[0]}")`, `$(dirname $0)`, `` `dirname $0` ``, `$(cd "$(dirname "$0")" && pwd)`: the folder
# of the script itself
_SCRIPT_DIR: Final = re.compile(
    r"""\$\(\s*cd\s+["']?\$\(\s*dirname\s+(?:--\s+)?["']?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|0|\{0\})["']?\s*\)"""
    r"""["']?\s*(?:>\s*/dev/null\s*(?:2>&1\s*)?)?&&\s*pwd(?:\s+-P)?\s*\)"""
    r"""|\$\(\s*dirname\s+(?:--\s+)?["']?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|0|\{0\})["']?\s*\)"""
    r"""|`\s*dirname\s+["']?\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\})["']?\s*`"""
)


# Kaldi's option parser that speech toolkits' recipes source (ESPnet, WeNet, icefall): `run.sh --stage 4 --dir exp/x`
_PARSE_OPTIONS: Final = re.compile(r"""(?:\.|source)\s+["']?(?:\S*/)?parse_options\.sh["']?(?:\s*\|\|.*)?""")


def _options_as_variables(positional: list[str], variables: dict[str, str]) -> list[str]:
    """What Kaldi's ``parse_options.sh`` does: each leading ``--name value`` (``--name=value``) sets the script's
    variable ``name`` (dashes as underscores) where the script set it before; the arguments after them stay."""
    rest = list(positional)
    while rest and rest[0].startswith("--") and len(rest[0]) > 2:
        name, eq, value = rest[0][2:].partition("=")
        name = name.replace("-", "_")
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or name not in variables:
            break  # (the real parser stops with an error on an option the script has no variable for)
        if not eq:
            if len(rest) < 2:
                break
            value = rest[1]
            rest = rest[1:]
        variables[name] = value
        rest = rest[1:]
    return rest


def _literal(text: str, _match: re.Match[str]) -> str:
    """``text`` in place of a match (a path is no replacement pattern: its characters are taken as written)."""
    return text


def _joined(here: str, to: str) -> str:
    """The folder ``cd to`` moves to from ``here`` (both relative to where the script started)."""
    return posixpath.normpath(posixpath.join(here, to.strip("'\"")))


def _folder(ws: Workspace, rel: str) -> Workspace:
    """The workspace of a folder the script moved to (the script's own where that folder cannot be read)."""
    if rel in (".", ""):
        return ws
    try:
        return ws.sub(rel)
    except WorkspaceError:
        return ws


_COMMAND_NAME: Final = re.compile(r"[A-Za-z][\w.+-]{0,63}")  # an executable's name (not `--lr` or `"key"`)
_PWD: Final = re.compile(r"`\s*pwd\s*`|\$\(\s*pwd\s*\)|\$\{PWD\}|\$PWD\b")
# a variable assigned a double-quoted value whose closing quote comes on a later line
_QUOTE_OPENS: Final = re.compile(r'[ \t]*(?:export\s+)?(\w+)="')
_QUOTE_CLOSES: Final = re.compile(r'(.*)"[ \t]*')  # (the line's last quote closes the value)
# a here-document's start (`cat <<EOT > ds_config.json`, `<<-'EOF'`; not `<<<` nor `$((1 << 4))`)
_HEREDOC_START: Final = re.compile(r"""(?<![<$(])<<-?[ \t]*['"]?([A-Za-z_]\w*)['"]?""")
_MAX_QUOTED_LINES: Final = 400
_MAX_HEREDOC_LINES: Final = 500  # (a script of unterminated `<<X` lines costs a bounded scan per line)


def _multiline_values(lines: list[str], arrays: dict[int, tuple[str, str]], inside: set[int]) -> None:
    """Lines that are not commands of the script, in one pass over it: a double-quoted value over several lines
    (``options=" --lr $LR`` … ``"``), recorded as one value at its first line like ``VAR=( … )``; a here-document's
    body (``cat <<EOT > ds_config.json`` … ``EOT``: text fed to a command)."""
    n = 0
    while n < len(lines):
        line = lines[n]
        if n in inside:
            n += 1
            continue
        if (m := _QUOTE_OPENS.match(line)) is not None and n not in arrays and line.count('"') % 2 == 1:
            # the value's quote is left open at the end of its line (`opts=" --save "./ckpt" --lr 1e-4`: quoted
            # pieces inside it join the value, as the shell joins them)
            body = [line[m.end() :].replace('"', "")]
            for k in range(n + 1, min(len(lines), n + _MAX_QUOTED_LINES)):
                if lines[k].count('"') % 2 == 0:
                    body.append(lines[k].replace('"', ""))
                    continue
                if (end := _QUOTE_CLOSES.fullmatch(lines[k])) is not None:
                    body.append(end[1].replace('"', ""))
                    arrays[n] = (m[1], " ".join(" ".join(body).split()))
                    inside.update(range(n, k + 1))
                    n = k
                break
        elif (h := _HEREDOC_START.search(line)) is not None and not line.lstrip().startswith("read"):
            for k in range(n + 1, min(len(lines), n + _MAX_HEREDOC_LINES)):
                if lines[k].strip() == h[1]:
                    inside.update(range(n + 1, k + 1))
                    n = k
                    break
        n += 1


# a shell's own commands and common tools: their words may name training flags (`echo $cmd`), they train nothing
_NOT_TRAINING: Final = frozenset(
    {"bash", "exec", "echo", "printf", "print", "cat", "tee", "logger", "read", "set", "test", "[", "[[", "true",
     "false", "printenv", "sleep", "wait", "mkdir", "rm", "cp", "mv", "ln", "touch", "chmod", "ls", "find", "grep",
     "sed", "awk", "wget", "curl", "git", "pip", "pip3", "conda", "tar", "unzip", "rsync", "scp", "ssh", "nvidia-smi",
     "date", "exit", "return", "trap", "ulimit", "source", ".", "declare", "local", "unset", "kill", "pkill", "xargs",
     "parallel", "yq", "jq", "sbatch", "qsub", "docker", "singularity", "apptainer"}
)  # fmt: skip
_FLAG_NAME: Final = re.compile(r"--?([A-Za-z][\w.-]*)")
# what a training CLI's flags are named for the batch, the rate, and the length of training
_TRAINING_FLAGS: Final = {
    "batch": re.compile(r"(?:\w+_)?batch(?:_size)?(?:_per_\w+)?|bs"),
    "rate": re.compile(r"(?:base_|max_)?(?:lr|learning_rate)\d?"),
    "length": re.compile(r"(?:max_|num_|n_|train_|total_)?(?:epochs?|update|updates|steps|iters?|iterations)"),
}


def _trains_by_its_flags(args: list[str]) -> bool:
    """Whether a command's flags set at least two of the batch, the learning rate and the length of training: an
    installed training CLI, not a preparation step (``mkdir``, ``wget``, ``pip install``)."""
    names = {m[1].replace("-", "_").lower() for a in args if (m := _FLAG_NAME.match(a))}
    return sum(any(p.fullmatch(n) for n in names) for p in _TRAINING_FLAGS.values()) >= 2


_HEREDOC_READ: Final = re.compile(
    r"""^[ \t]*read\s+(?:-[a-z]+\s+(?:(?:''|"")\s+)?)*(\w+)\s*<<-?\s*['"]?(\w+)['"]?[ \t]*\n(.*?)\n[ \t]*\2[ \t]*$""",
    re.M | re.S,
)
_ARITH: Final = re.compile(r"\$\(\(([^()]{0,200})\)\)|\$\(expr\s+([^()`;|&]{1,200})\)")  # (and `$(expr 16 / $n)`)


def _arithmetic(variables: dict[str, str], m: re.Match[str]) -> str:
    """A shell arithmetic expansion ``$((GPU_ID*10+1))`` over integers the script set: its value; anything else (an
    unknown variable, a non-integer) stays as written."""
    written = m[1] if m[1] is not None else m[2].replace("\\*", "*")  # (expr's operands are words: `\*` multiplies)
    expr = re.sub(r"\$?\{?([A-Za-z_]\w*)\}?", lambda v: variables.get(v[1], v[0]), written)
    if not re.fullmatch(r"[\d\s+\-*/%()]+", expr):
        return m[0]
    try:
        tree = ast.parse(expr.replace("/", "//"), mode="eval")
    except SyntaxError:
        return m[0]
    value = _integer(tree.body)
    return str(value) if value is not None else m[0]


def _integer(node: ast.expr) -> int | None:
    """The value of integer arithmetic (``+ - * // %``, small operands), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) < 10**12:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _integer(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv | ast.Mod):
        a, b = _integer(node.left), _integer(node.right)
        if a is None or b is None or (isinstance(node.op, ast.FloorDiv | ast.Mod) and b == 0):
            return None
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b if abs(a * b) < 10**15 else None
        return a // b if isinstance(node.op, ast.FloorDiv) else a % b
    return None


def _without_comment(s: str) -> str:
    """A shell line without its trailing comment: a ``#`` that begins a word, outside quotes
    (``CLASS='edges2shoes'  # facades, day2night, ...`` → ``CLASS='edges2shoes'``)."""
    quote = ""
    for i, ch in enumerate(s):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and s[i - 1].isspace():
            return s[:i].rstrip()
    return s


# What a training entry calls: a backward pass, an optimizer step, Keras' fit, TF1's minimize, a Trainer
_TRAINS: Final = re.compile(
    r"\bbackward\(|\.step\(\)|\.fit\(|\bfit_generator\(|\btrain_on_batch\(|\.minimize\(|\bTrainer\(|"
    r"\.train\(\s*[\w*]"
)


def _steps_itself(ws: Workspace, launch: Launch) -> bool:
    """Whether a command's entry script trains where it can be seen (a call of :data:`_TRAINS` in its text), or
    cannot be read (a module, an unknown file: taken as the training command)."""
    if not launch.script or not launch.script.endswith(".py"):
        return True
    text = ws.read_text_or_none(launch.script)
    return text is None or _TRAINS.search(text) is not None


def _note_copies(words: list[str], copies: dict[str, str]) -> None:
    """Where ``cp [flags] SRC... DEST`` puts each source: into DEST if it copies several or DEST is a folder name
    (no suffix), else as DEST."""
    paths = [w for w in words if not w.startswith("-")]
    if len(paths) < 2:
        return
    *sources, dest = paths
    into = len(sources) > 1 or dest.endswith("/") or not posixpath.splitext(dest)[1]
    for src in sources:
        target = posixpath.join(dest, posixpath.basename(src)) if into else dest
        copies[posixpath.normpath(target)] = posixpath.normpath(src)
