"""Static workload metadata from a job's code, configs and command (no LLM).

Reads — never runs — the job's working directory through :class:`Workspace`: the launch
command (:func:`parse_command`, following a shell script to its training command), every
setting in override order (:func:`collect_settings`: entry script, argparse, config files,
Hydra, ``key=value`` overrides, DeepSpeed JSON), then maps them onto :class:`WorkloadMetadata`
fields, each with its provenance: training length, GPUs and distribution, batch sizes,
precision, frameworks, and what is trained on what (:func:`identify_workload`).
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from schedmate.agents.advisor.extract.budget import Budget, spending
from schedmate.agents.advisor.extract.collect import Extraction, collect_settings
from schedmate.agents.advisor.extract.config_sources import Value
from schedmate.agents.advisor.extract.entry import follow_entry, follow_process_launcher
from schedmate.agents.advisor.extract.hydra import hydra_entry
from schedmate.agents.advisor.extract.launch import (
    DORA_FIND_PACKAGE,
    Launch,
    follow_shell_script,
    parse_command,
    small_count,
)
from schedmate.agents.advisor.extract.spawn import spawned_command
from schedmate.agents.advisor.extract.syntax import parse, walk
from schedmate.agents.advisor.extract.workload import WorkloadIdentity, identify_workload
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError
from schedmate.infra.redact import redact
from schedmate.schemas.jobs_metadata import FieldSource, WorkloadMetadata

__all__ = ["extract_metadata"]

_LR_KEYS = (
    "learning_rate",
    "lr",
    "optimizer.lr",
    "optim.lr",
    "model.optimizer.lr",
    "train.learning_rate",
    "optimizer.params.lr",
    "optimizer.init_args.lr",
    "SOLVER.BASE_LR",
    "base_lr",
    "BASE_LR",
)
_BATCH_KEYS = (
    "per_device_train_batch_size",
    "micro_batch_size",
    "batch_size_per_gpu",
    "batch_size",
    "train_batch_size",
    "train.batch_size",
    "data.batch_size",
    "batch_size_training",
    "batch_size_train",
    "batch_size_per_device",
    "train_micro_batch_size_per_gpu",
    "batch",
    "batchSize",
    "data.samples_per_gpu",
    "samples_per_gpu",
    "imgs_per_gpu",
    "train_dataloader.batch_size",
    "device_train_microbatch_size",
    "local_batch_size",
    "data.videos_per_gpu",
    "videos_per_gpu",
)  # fmt: skip  (MMAction's clips per GPU)
# Names the community gives these settings (matched as a dotted key, then as a key's last part, any case).
_EPOCH_KEYS = (
    "num_train_epochs",
    "epochs",
    "max_epochs",
    "trainer.max_epochs",
    "train.epochs",
    "num_epochs",
    "n_epochs",
    "nepochs",
    "max_epoch",
    "total_epochs",
    "train_epochs",
    "num_epoch",
    "max_train_epochs",
    "training_epochs",
    "number_of_epochs",
    "epoches",
)  # fmt: skip  (RT-DETR's spelling)
_STEP_KEYS = ("max_steps", "max_iters", "train_iters", "num_steps", "total_steps", "train_steps", "steps", "MAX_ITER",
              "total_iter", "total_iters", "n_iters", "num_iters", "max_iter", "niter", "num_train_steps",
              "max_train_steps", "training_steps", "num_training_steps", "iterations", "max_step",
              "num_iterations", "train_iters_total")  # fmt: skip
_TRAINING_LAUNCHERS = ("python", "llamafactory-cli")
_HF_TRAINER = re.compile(
    r"\b(?:transformers\.)?\w*Trainer\(\s*(?:model|args)\s*=|\b(?:SFT|DPO|ORPO|KTO|PPO|GRPO|Reward|CPO)Trainer\("
)


class _Taker:
    """Reads settings into fields, recording where each value came from."""

    def __init__(self, ex: Extraction) -> None:
        self.ex = ex
        self.prov: dict[str, FieldSource] = {}
        self.keys: dict[str, str] = {}  # the setting each field was read from, when one was

    def take(self, fieldname: str, *keys: str, use: str | None = None, deepspeed: tuple[str, ...] = ()) -> Any:
        """A field's value: a DeepSpeed config's setting, else what its consumer API receives (``use``), else the
        first setting named by ``keys``. A consumer whose argument the code reassigns in a way that cannot be
        followed makes the field unknown rather than a stale default."""
        for key in deepspeed:  # a DeepSpeed JSON value overrides the command line
            v = self.ex.values.get(f"deepspeed.{key}") or self.ex.values.get(key)
            if v is not None and isinstance(v.value, int | float) and not isinstance(v.value, bool):
                self.prov[fieldname] = FieldSource(file=v.source, line=v.line, path="static")
                return v.value
        u = self.ex.uses.get(use) if use else None
        if u is not None:
            if u.value is None:
                return None
            self.prov[fieldname] = FieldSource(file=u.file, line=u.line, path="use")
            return u.value
        found = self.ex.find(*keys)
        if found is None:
            return None
        if _read_scaled_only(self.ex.code, found[0]):
            return None  # `batch_id > opt.max_iters * 1000`: the setting counts thousands, not the field's unit
        self.keys[fieldname], v = found
        self.prov[fieldname] = FieldSource(
            file=v.source, line=v.line, path="command" if v.source == "command" else "static"
        )
        return v.value


def _read_scaled_only(code: str, key: str) -> bool:
    """Whether the entry script reads setting ``key`` (``opt.max_iters``, ``cfg["max_iters"]``) and every read is
    scaled by a number (``opt.max_iters * 1000``): the setting is in other units than the field it is named like."""
    leaf = re.escape(key.rsplit(".", 1)[-1])
    reads = list(re.finditer(rf"(?:\.|\[['\"]){leaf}\b(?:['\"]\])?", code))
    if not reads:
        return False

    def scaled_before(before: str) -> bool:  # `1000 * opt.max_iters`, not `len(train_data) * args.epochs` (the
        return re.search(r"[\d)]\s*\*\s*[\w.\[\]'\"]*$", before) is not None and not re.search(
            r"\blen\([^()]*\)\s*\*\s*[\w.\[\]'\"]*$", before
        )  # samples of that many epochs)

    return all(
        re.match(r"\s*[*/]\s*[\d(]", code[m.end() :]) or scaled_before(code[max(0, m.start() - 40) : m.start()])
        for m in reads
    )


@dataclass
class _Setup:
    num_gpus: int | None
    distributed: str
    zero_stage: Value | None


_SHEBANG_PYTHON: Final = re.compile(r"#!\s*\S*(?:python|/env\s+(?:-\S+\s+)*python)[\d.]*\b")
_SHEBANG_SHELL: Final = re.compile(r"#!\s*\S*(?:bash|/sh|/env\s+(?:bash|sh))\b")


def _run_by_shebang(ws: Workspace, launch: Launch) -> None:
    """``./train --dataroot …``: an executable file without an extension runs under the interpreter its first line
    names; a Python one is analysed as ``train.py`` (an alias of the same file), a shell one as a shell script."""
    if launch.launcher != "exec" or not launch.script:
        return
    head = (ws.read_text_or_none(launch.script) or "")[:200]
    if _SHEBANG_PYTHON.match(head):
        alias = f"{launch.script}.py"
        if not ws.exists(alias):
            ws.alias(alias, launch.script)
            launch.launcher, launch.script = "python", alias
    elif _SHEBANG_SHELL.match(head):
        launch.launcher = "bash"


def _resolve_launch(root: Workspace, launch: Launch) -> tuple[Workspace, Launch]:
    ws = root.sub(launch.cwd) if launch.cwd != "." else root
    _run_by_shebang(ws, launch)
    followed = follow_shell_script(ws, launch)
    if followed is not launch and followed.cwd != ".":  # the script's `cd` moved to where its command runs
        with contextlib.suppress(WorkspaceError):
            ws = ws.sub(followed.cwd)
        followed.cwd = "."
    launch = follow_process_launcher(ws, followed)
    spawned = spawned_command(ws, launch)  # `python run_seqgan.py 0`: a script that starts `python main.py …` in `../`
    if spawned is not None:
        with contextlib.suppress(WorkspaceError):
            ws = root.sub(spawned.cwd) if spawned.cwd != "." else root
            launch = follow_shell_script(ws, spawned)
    if (
        launch.script
        and re.fullmatch(r"[\w.]+", launch.script)
        and any(a in ("-m", "--module") for a in launch.launcher_args[-1:])
    ):  # fmt: skip  (`deepspeed --module openrlhf.cli.train_sft`)
        launch.module, launch.script = launch.script, None  # `torchrun --nproc_per_node 2 -m pkg.main`
    if launch.launcher == "dora" and launch.module and launch.module.startswith(f"{DORA_FIND_PACKAGE}."):
        main = launch.module.partition(".")[2]  # `dora run …` without -P: the first package here holding train.py
        package = next(
            (d for d in ws.child_dirs() if ws.exists(f"{d}/__init__.py") and ws.exists(f"{d}/{main}.py")), None
        )
        launch.module = f"{package}.{main}" if package else None
    if not launch.script and launch.module:  # `python -m pkg.train`, `torchrun -m pkg.train`: the module's file
        base = launch.module.replace(".", "/")
        for cand in (
            f"{base}.py",
            f"{base}/__main__.py",
            *_package_dir_files(ws, launch.module),
            *_own_folder_files(ws, launch.module),
            *(  # the job's repository installs its own package (`pip install -e .`): run from an examples folder,
                f"{up}/{base}{tail}"  # `torchrun -m FlagEmbedding.finetune…base` runs the package's module there
                for up in ((ws.up, ws.up / "src") if ws.up is not None else ())
                for tail in (".py", "/__main__.py")
            ),
        ):
            if ws.exists(cand):
                launch.script = cand
                break
    launch = follow_entry(ws, launch)
    _deepspeed_hostfile(ws, launch)
    if launch.script and Path(launch.script).is_absolute():  # `python /abs/path/train.py`: fine if it is inside
        with contextlib.suppress(ValueError, OSError):
            launch.script = Path(launch.script).resolve().relative_to(ws.root).as_posix()
    return ws, launch


_HOST_LINE: Final = re.compile(r"\s*(\S.{0,200}?)\s+slots\s*=\s*(\d{1,4})\s*")  # (`[worker address] slots=8`)


def _deepspeed_hostfile(ws: Workspace, launch: Launch) -> None:
    """``deepspeed --hostfile config/hostfile train.py``: one process per slot of every host the file lists (the
    first ``--num_nodes`` hosts, at most ``--num_gpus`` slots each), where the file is the job's own; a host filter
    (``--include``/``--exclude``) or an unreadable line leaves the count unknown."""
    args = launch.launcher_args
    if launch.launcher != "deepspeed" or launch.world_size is not None:
        return
    named = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("--hostfile", "-H")]
    named += [a.partition("=")[2] for a in args if a.startswith(("--hostfile=", "-H="))]
    if not named or any(a.split("=", 1)[0] in ("--include", "-i", "--exclude", "-e") for a in args):
        return
    text = ws.read_text_or_none(named[-1])
    if text is None:
        return
    slots: list[int] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0]
        if not line.strip():
            continue
        m = _HOST_LINE.fullmatch(line)
        if m is None:
            return  # not a hostfile line: the count is not the file's
        slots.append(int(m[2]))
    slots = slots[: launch.nnodes] if launch.nnodes else slots
    if slots:
        per_node = launch.nproc_per_node
        launch.world_size = sum(min(n, per_node) if per_node else n for n in slots)
        launch.nnodes = len(slots)


def _own_folder_files(ws: Workspace, module: str) -> list[str]:
    """``python -m albert.run_pretraining`` given in the clone ``albert/`` itself: a README that runs the module
    from the clone's parent names the working folder as the package."""
    package, _, rest = module.partition(".")
    if not rest or package != ws.root.name:
        return []
    rest = rest.replace(".", "/")
    return [f"{rest}.py", f"{rest}/__main__.py"]


_PACKAGE_DIR_PAIR: Final = re.compile(r"""["']([A-Za-z_][\w.]*)["']\s*:\s*["']([\w./-]+)["']""")


def _package_dir_files(ws: Workspace, module: str) -> list[str]:
    """Where an installed package maps a module's package (``setup(package_dir={"yolox.tools": "tools"})``, or
    ``[options.package_dir]`` in setup.cfg): ``python -m yolox.tools.train`` runs ``tools/train.py``."""
    out: list[str] = []
    for setup in ("setup.py", "setup.cfg"):
        text = ws.read_text_or_none(setup) if ws.exists(setup) else None
        if not text or "package_dir" not in text:
            continue
        pairs = _PACKAGE_DIR_PAIR.findall(text)
        if setup == "setup.cfg":
            pairs += re.findall(r"^\s*([A-Za-z_][\w.]*)\s*=\s*([\w./-]+)\s*$", text, re.M)
        for package, folder in pairs:
            if module.startswith(package + "."):
                rest = module[len(package) + 1 :].replace(".", "/")
                out += [f"{folder.rstrip('/')}/{rest}.py", f"{folder.rstrip('/')}/{rest}/__main__.py"]
    return out


_CONFIG_FILES: Final = (".yaml", ".yml", ".json", ".toml")  # a data file states the job, a .py default may not


_DEVICE_COUNT: Final = r"(?:torch\.)?(?:cuda\.)?device_count\(\)"
_COUNT_KEYWORDS: Final = r"(?:gpus|devices|nprocs|nproc|num_gpus|n_gpus?|world_size|num_processes)"


_DP_GUARD: Final = re.compile(
    r"\bif\b[^\n:]*(?:gpu|device)[^\n:]*>\s*1\s*:[ \t]*\n[ \t]+[^\n]*DataParallel", re.I
)  # a DataParallel wrap under a several-GPUs test
_RANK_GATE: Final = re.compile(r"\bif\s+[\w.]*(?:local_rank|rank)\s*(?:!=|>=|>)\s*-?\d")


def _rank_gated(ex: Extraction) -> bool:
    """Whether the code's DDP wrap sits under a rank test (``if args.local_rank != -1:``, ``if rank != -1:``): the
    arm a launcher's environment selects."""
    return _RANK_GATE.search(ex.code) is not None


def _count_handed_on(code: str) -> bool:
    """``Trainer(gpus=torch.cuda.device_count())``, or ``args.gpus = device_count()`` then ``Trainer(gpus=args.gpus)``:
    the visible-GPU count handed to what starts or spreads the work (not a log line or a seeding branch)."""
    if re.search(rf"[(,]\s*(?:\w+\s*=\s*)?{_DEVICE_COUNT}", code):
        return True
    names = {m[1] for m in re.finditer(rf"([\w.]+)\s*=\s*{_DEVICE_COUNT}", code)}
    return any(re.search(rf"[(,]\s*{_COUNT_KEYWORDS}\s*=\s*{re.escape(n)}\s*[,)]", code) for n in names)


_AUTO_DEVICE_MAP: Final = re.compile(r"""device_map\s*=\s*["']auto["']""")  # HF spreads the model over every GPU


def _setup(ex: Extraction) -> _Setup:
    """How many GPUs the job uses and how it spreads over them."""
    launch = ex.launch
    # `device_count()` drives the job only where it is acted on: a live spawn, DataParallel, a batch split. A script
    # whose only spawn sits in a branch its settings rule out (`if args.nodes > 1:`) runs one process.
    spawns_dead = bool(re.search(r"\bspawn\(", ex.code)) and "spawn" not in ex.uses and bool(ex.uses)
    counts = re.search(r"device_count\(\)", ex.code) is not None and ("device_count" in ex.uses or not ex.uses)
    acted_on = (  # something starts, wraps or splits by the count, or hands it on (`Trainer(gpus=device_count())`)
        not ex.uses or bool({"spawn", "dp_wrap", "ddp_wrap"} & ex.uses.keys()) or ex.batch_divided_by_world
        or _count_handed_on(ex.code) or _AUTO_DEVICE_MAP.search(ex.code) is not None
    )  # fmt: skip
    uses_all_visible = (  # (a spawn that cannot run leaves one process, whatever it would divide a batch by)
        counts and acted_on and not (spawns_dead and "dp_wrap" not in ex.uses)
    ) or ("dp_all" in ex.uses and "ddp_wrap" not in ex.uses)  # nn.DataParallel(model) spreads over all it sees
    num_gpus = launch.num_gpus
    devices = ex.get("trainer.devices", "devices")
    handed = ex.uses.get("devices")  # what Lightning's Trainer receives as `devices=` / `gpus=` (-1: all it sees)
    if handed is not None and isinstance(handed.value, int) and not isinstance(handed.value, bool) and handed.value > 0:
        devices = Value(handed.value, handed.file, handed.line)
    if num_gpus is None and devices is not None and isinstance(devices.value, int):
        num_gpus = devices.value
    if (
        num_gpus is None and devices is not None and isinstance(devices.value, list) and len(devices.value) > 1
        and all(isinstance(d, str) and re.fullmatch(r"(?:cuda:)?\d{1,3}", d) for d in devices.value)
    ):  # fmt: skip
        num_gpus = len(devices.value)  # `--devices cuda:0 cuda:1 cuda:2`: one process per listed device
    if num_gpus is None and launch.launcher == "python":
        nodes = ex.get("nodes", "nnodes", "num_nodes")
        per_node = ex.get("ngpus", "gpus_per_node", "num_gpus_per_node", "ntasks_per_node")
        if (
            nodes is not None and per_node is not None
            and (nodes.source == "command" or {nodes.source, per_node.source} <= {"command", *ex.sources})
            and isinstance(nodes.value, int) and isinstance(per_node.value, int) and nodes.value > 0
            and per_node.value > 0 and re.search(r"\bsubmitit\b|\bsubmit_jobs\b|\bAutoExecutor\b", ex.code + "".join(
                t for _, t in ex.modules[:8]))
        ):  # fmt: skip
            num_gpus = nodes.value * per_node.value  # a submitit launcher: nodes x GPUs per node
    if num_gpus is None and launch.visible_gpus:
        num_gpus = launch.visible_gpus
    if num_gpus is None and (visible := _visible_set_by_code(ex)) is not None:
        num_gpus = visible  # `os.environ["CUDA_VISIBLE_DEVICES"] = opts.gpu_id`: the script narrows its own devices
    if num_gpus is None and (narrowed := ex.uses.get("visible_gpus")) is not None and isinstance(narrowed.value, int):
        num_gpus = narrowed.value  # the same, from a value the use-site analysis could tell (`config.GPU`)
    gpus_flag = ex.get("num_gpus", "gpus", "ngpus", "n_gpus", "num_gpu", "n_gpu", "gpu_ids")
    if (
        num_gpus is None and launch.launcher == "python" and gpus_flag is not None
        and (gpus_flag.source == "command" or gpus_flag.source.endswith(_CONFIG_FILES))
        and isinstance(gpus_flag.value, int) and not isinstance(gpus_flag.value, bool) and gpus_flag.value > 0
    ):  # fmt: skip
        num_gpus = gpus_flag.value  # the script starts its own workers (`--num-gpus 8`, a config's `NUM_GPUS: 8`)
    if num_gpus is None and launch.launcher == "python" and gpus_flag is not None and gpus_flag.source == "command":
        ids = gpus_flag.value
        if isinstance(ids, str) and re.fullmatch(
            r"\s*\d{1,3}(?:-\d{1,3})?(?:\s*,\s*\d{1,3}(?:-\d{1,3})?)*\s*,?\s*", ids
        ):
            ids = [  # `--gpus 0,1`, and ranges: `--gpus 0-3` (0, 1, 2, 3)
                i for x in ids.split(",") if x.strip()
                for lo, _, hi in [x.strip().partition("-")] for i in range(int(lo), int(hi or lo) + 1)
            ]  # fmt: skip
        if isinstance(ids, list | tuple) and ids and all(isinstance(x, int) and not isinstance(x, bool) for x in ids):
            num_gpus = len(set(ids))  # Lightning-style device ids (`--gpus 0,1`, `--gpus 0,`): one process per id
    listed = ex.uses.get("dp_devices")  # `DataParallel(model, device_ids=cfg.GPUS)`: the GPUs it lists
    if num_gpus is None and launch.launcher == "python" and listed is not None and isinstance(listed.value, int):
        num_gpus = listed.value
    procs = ex.uses.get("processes")
    if num_gpus is None and launch.launcher == "python" and procs is not None and isinstance(procs.value, int):
        num_gpus = procs.value  # the script starts a process per device it counts (`for d in range(nb_gpu): Process`)
    told = num_gpus is not None  # (a count the command, settings or code state, not the one-GPU default below)
    every_visible = devices is not None and devices.value in ("auto", -1, "-1")  # Lightning's `devices: auto`
    if num_gpus is None and launch.launcher in _TRAINING_LAUNCHERS and not uses_all_visible and not every_visible:
        num_gpus = 1
    stage = ex.get("deepspeed.zero_optimization.stage", "zero_optimization.stage") or next(
        (v for k, v in ex.values.items() if k.endswith(".deepspeed.zero_optimization.stage")), None
    )  # (a DeepSpeed dict nested in a launcher's settings: `accelerator.deepspeed.zero_optimization.stage`)
    strategy = ex.get("trainer.strategy", "strategy", "trainer.strategy._target_", "strategy._target_")  # (Hydra: the
    # class it builds, in the trainer's section or a `strategy` group of its own)
    if (used := ex.uses.get("strategy")) is not None and isinstance(used.value, str):
        strategy = Value(used.value, used.file, used.line)  # what Trainer/Fabric(strategy=) receives
    fsdp = ex.get("fsdp")
    flags = launch.launcher_args if launch.launcher == "accelerate" else []  # `accelerate launch --multi_gpu ...`
    if (
        stage is None and (launch.launcher == "deepspeed" or "deepspeed.initialize(" in ex.code)
        and (zs := ex.get("zero_stage")) is not None and isinstance(zs.value, int) and not isinstance(zs.value, bool)
    ):  # fmt: skip
        stage = zs  # the script builds its DeepSpeed config from its own `--zero_stage N` (DeepSpeed-Chat)
    if stage is None and "--use_deepspeed" in flags:
        zero = _flag_value(flags, "--zero_stage")
        stage = Value(small_count(zero) if zero is not None else "auto", "command", None)
    if stage is None and strategy is not None and isinstance(strategy.value, str):
        named = re.fullmatch(r"(?:DeepSpeedStrategy|deepspeed)(?:_stage_(\d))?(?:_offload\w*)?", strategy.value.strip())
        if named:  # Lightning's `strategy="deepspeed_stage_2_offload"` (or the DeepSpeedStrategy class)
            stage = Value(int(named[1]) if named[1] else "auto", strategy.source, strategy.line)
    if stage is not None:  # "auto" / "${zero}" in a config: DeepSpeed, stage unknown
        n = stage.value
        distributed = f"deepspeed_zero{n}" if isinstance(n, int) and 0 <= n <= 3 else "deepspeed"
    elif (
        (fsdp is not None and fsdp.value)
        or "fsdp_wrap" in ex.uses
        or (strategy is not None and "fsdp" in str(strategy.value).lower())
        or "--use_fsdp" in flags
        or (
            (sh := ex.values.get("fsdp_config.sharding_strategy")) is not None
            and str(sh.value).upper() in ("FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "_HYBRID_SHARD_ZERO2")
        )
        or (
            (tr := ex.get("trainer", "trainer_class", "trainer_cls")) is not None
            and isinstance(tr.value, str)
            and re.search(r"fsdp", tr.value, re.I) is not None
        )  # `trainer=FSDPTrainer`: the class that runs it
    ):
        distributed = "fsdp"  # `--fsdp full_shard`, or the model is wrapped in FSDP where the code runs
    elif (
        launch.launcher == "python" and "dp_wrap" in ex.uses and not re.search(r"\bspawn\(", ex.code)
        and ("ddp_wrap" not in ex.uses or ("processes" not in ex.uses and not launch.world_size and _rank_gated(ex)))
    ):  # fmt: skip
        # one process drives the GPUs it is given through nn.DataParallel (a DDP arm for `rank != -1` needs a
        # launcher that sets the rank: plain `python` starts one process)
        one_id = ex.get("gpu_ids", "gpu_id", "gpu")  # `--gpu_ids 0`: the one GPU it lists
        told = told or (one_id is not None and re.fullmatch(r"\s*\d{1,3}\s*,?\s*", str(one_id.value)) is not None)
        guarded = any(_DP_GUARD.search(text) for text in [ex.code, *(t for _, t in ex.modules[:20])])
        # `if len(gpu_ids) > 1: model = DataParallel(model, ...)` is off on the one GPU the job states
        distributed = "single_gpu" if num_gpus == 1 and told and guarded else "dp"
    elif (
        launch.launcher == "python" and not launch.world_size and (num_gpus or 0) > 1 and "device_map" in ex.uses
        and not {"dp_wrap", "ddp_wrap", "spawn"} & ex.uses.keys()
    ):  # fmt: skip
        distributed = "model_parallel"  # one process, the model's layers spread over the visible GPUs (HF's
        # `device_map="auto"`; its Trainer then keeps one copy and does not split batches over them)
    elif launch.launcher == "python" and strategy is None and _data_parallel_in_modules(ex):
        distributed = "dp"  # one process, and the model wraps its own parts (`self.encoder = nn.DataParallel(...)`)
    elif (
        (num_gpus or 1) > 1
        or (num_gpus is None and launch.count_unknown)  # `torchrun --nproc_per_node=$num_gpus`: set at run time
        or (strategy is not None and "ddp" in str(strategy.value).lower() and not (told and num_gpus == 1))
        or launch.launcher == "relaunch"
        or "--multi_gpu" in flags
    ):
        distributed = "ddp"  # (a relauncher module starts one process per GPU on the script)
    elif (
        launch.launcher == "python"
        and re.search(r"\bspawn\(", ex.code)
        and not spawns_dead
        and not (told and num_gpus == 1)  # (a spawn over the one GPU the command leaves visible: one process)
        and (
            "DistributedDataParallel(" in ex.code
            or _ddp_alias_called(ex.code)
            or "ddp_wrap" in ex.uses
            or (
                uses_all_visible
                and "spawn" in ex.uses
                and any(
                    re.search(r"DistributedDataParallel\(|init_process_group\(", t)
                    for t in [ex.code, *(t for _, t in ex.modules[:40])]
                )
            )
        )  # (MMF's `mmf_run`: a process per visible GPU, each joining the process group its package sets up)
        and (
            "--multiprocessing-distributed" in launch.args
            or not re.search(r"multiprocessing.distributed", ex.code)
            or ((md := ex.get("multiprocessing_distributed")) is not None and md.value is True)
        )  # (the switch set by the config the script reads over its flags: USB's `multiprocessing_distributed: True`)
    ):
        distributed = "ddp"  # the script spawns one DDP process per GPU itself (the wrap in it or in a module it calls)
    elif "dp_wrap" in ex.uses and "ddp_wrap" not in ex.uses and launch.launcher in _TRAINING_LAUNCHERS:
        distributed = "dp"  # one process drives the visible GPUs through nn.DataParallel
    else:
        distributed = "single_gpu"
    return _Setup(num_gpus, distributed, stage)


def _ddp_alias_called(code: str) -> bool:
    """Whether the entry calls DistributedDataParallel under the name it imports it as (apex's or torch's
    ``from apex.parallel import DistributedDataParallel as DDP`` … ``DDP(generator)``)."""
    return any(
        re.search(rf"\b{re.escape(alias)}\(", code)
        for alias in re.findall(r"import\s+DistributedDataParallel\s+as\s+(\w+)", code)
    )


_DATA_PARALLEL: Final = re.compile(r"\bnn\.DataParallel\(|\bDataParallel\(")
_PROCESS_GROUPS: Final = re.compile(
    r"DistributedDataParallel|init_process_group|\bspawn\(|\bdeepspeed\b|\bAccelerator\(|\bFabric\(|\bTrainer\("
)


def _data_parallel_in_modules(ex: Extraction) -> bool:
    """Whether the job's modules (not its entry) wrap in ``nn.DataParallel`` unconditionally (not under an ``if``:
    ``if len(gpu_ids) > 0:`` leaves it to settings) while nothing in the entry or those modules starts or joins
    processes: a single process drives the visible GPUs (CMC's ``self.encoder = nn.DataParallel(self.encoder)``)."""
    texts = [t for _, t in ex.modules[:40]]
    if _PROCESS_GROUPS.search(ex.code) or any(_PROCESS_GROUPS.search(t) for t in texts):
        return False
    for text in texts:
        if not _DATA_PARALLEL.search(text):
            continue
        try:
            tree = parse(text)
        except (SyntaxError, ValueError):
            continue
        guarded = {id(n) for i in walk(tree) if isinstance(i, ast.If | ast.IfExp) for n in walk(i)}
        if any(
            isinstance(n, ast.Call) and id(n) not in guarded
            and (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")) == "DataParallel"
            for n in walk(tree)
        ):  # fmt: skip
            return True
    return False


# A key's last part that names the optimizer's rate under a prefix; bounds and schedule ends are not the rate.
_RATE_LEAF: Final = re.compile(r"(?i)(?:\w+_)?(?:lr|learning_rate)")
_NOT_THE_RATE: Final = re.compile(
    r"(?i)(?:min|end|final|stop|warmup|warm|eta|decay|lower|upper|scale|mult|ratio|base|\bd_)"
)  # (a base rate is scaled by the batch or the GPU count before use: latent-diffusion's base_learning_rate)


def _named_rate(ex: Extraction) -> Value | None:
    """The first numeric setting whose key ends in ``_lr`` (not a minimum, end or warm-up rate, nor a multiplier)."""
    for key, v in ex.values.items():
        leaf = key.rsplit(".", 1)[-1]
        if (
            _RATE_LEAF.fullmatch(leaf) and not _NOT_THE_RATE.search(leaf[: -2] if leaf.lower().endswith("lr") else leaf)
            and isinstance(v.value, int | float) and not isinstance(v.value, bool) and 0 < v.value < 1
        ):  # fmt: skip
            return v
    return None


_BATCH_LEAF: Final = re.compile(r"(?i)\w+_batch_?size")
_NOT_THE_BATCH: Final = re.compile(r"(?i)val|test|eval|infer|predict|global|total|max|min|effective|sample|gen")


def _named_batch(ex: Extraction) -> Value | None:
    """The first positive integer setting whose key ends in ``_batch_size`` under a prefix that is not an
    evaluation's, a global total or a bound."""
    for key, v in ex.values.items():
        leaf = key.rsplit(".", 1)[-1]
        if (
            _BATCH_LEAF.fullmatch(leaf) and not _NOT_THE_BATCH.search(key)
            and isinstance(v.value, int) and not isinstance(v.value, bool) and v.value > 0
        ):  # fmt: skip
            return v
    return None


_SETS_VISIBLE: Final = re.compile(
    r"""os\.environ\[\s*["']CUDA_VISIBLE_DEVICES["']\s*\]\s*=\s*(?:str\(\s*)?(?:\w+\.)?(\w+)"""
)


def _visible_set_by_code(ex: Extraction) -> int | None:
    """Devices the entry script makes visible from one of its settings (``"0"``, ``"0,1"``, ``[0, 1]``)."""
    m = _SETS_VISIBLE.search(ex.code)
    v = ex.get(m.group(1)) if m else None
    ids = v.value if v is not None else None
    if isinstance(ids, int) and not isinstance(ids, bool):
        ids = [ids]
    if isinstance(ids, str) and re.fullmatch(r"\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*,?\s*", ids):
        ids = [x for x in ids.split(",") if x.strip()]
    return len(ids) if isinstance(ids, list | tuple) and ids else None


def _flag_value(args: list[str], name: str) -> str | None:
    """The value of ``name`` among launcher arguments (``--zero_stage 2`` or ``--zero_stage=2``)."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


_GLOBAL_BATCH_KEYS = (
    "global_batch_size", "train.global_batch_size", "total_batch_size", "SOLVER.IMS_PER_BATCH", "IMS_PER_BATCH",
    "global_train_batch_size",
)  # fmt: skip


def _micro_batch(ex: Extraction) -> Value | None:
    """A training micro-batch setting (``device_train_microbatch_size``, ``micro_batch_size``): a positive int."""
    for key, v in ex.values.items():
        leaf = key.rsplit(".", 1)[-1].lower()
        if (
            re.search(r"micro_?batch", leaf) and not re.search(r"eval|valid|test", key, re.I)
            and type(v.value) is int and v.value > 0
        ):  # fmt: skip
            return v
    return None


def _batch_beside_micro(ex: Extraction) -> Value | None:
    """``--train.batch_size 256`` beside ``--train.micro_batch_size 2`` (OpenRLHF, alpaca-lora's ``batch_size`` and
    ``micro_batch_size``): the batch a step takes, over every rank and accumulation, when a micro-batch is set beside
    it (a multiple of it)."""
    for key, v in ex.values.items():
        section, _, leaf = key.rpartition(".")
        if leaf.lower() not in ("micro_batch_size", "micro_train_batch_size") or type(v.value) is not int:
            continue
        whole = ex.values.get(f"{section}.batch_size" if section else "batch_size")
        if whole is not None and type(whole.value) is int and whole.value > v.value > 0 and whole.value % v.value == 0:
            return whole
    return None


_PER_GPU: Final = re.compile(r"per_(?:gpu|device)(?:$|_)", re.I)  # `batch_size_per_gpu`, `samples_per_gpu`, HF's
# `per_device_train_batch_size`


_HF_MODEL_LOAD: Final = re.compile(r"\b(?:Auto|Bert|GPT2|Roberta|T5|Llama)\w*Model\w*\.from_pretrained\(")


def _loads_for_entry(text: str, code: str) -> bool:
    """Whether a module of the job loads a transformers model where the entry uses it: at module level, or in a
    top-level function or class the entry names (OpenNRE's ``BERTEncoder``), not in one it never uses
    (build-nanogpt's ``hellaswag.evaluate``, which the entry does not call)."""
    if not _HF_MODEL_LOAD.search(text):
        return False
    try:
        tree, entry = parse(text), parse(code)
    except SyntaxError:
        return True
    used = (
        {n.id for n in walk(entry) if isinstance(n, ast.Name)}
        | {n.attr for n in walk(entry) if isinstance(n, ast.Attribute)}
        | {a.asname or a.name for n in walk(entry) if isinstance(n, ast.ImportFrom) for a in n.names}
    )
    for top in tree.body:
        segment = ast.get_source_segment(text, top) or ""
        if not _HF_MODEL_LOAD.search(segment):
            continue
        if not isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.If) or (
            not isinstance(top, ast.If) and top.name in used
        ):
            return True
    return False


# Helpers a training library exports beside its models (a schedule, a seed, an optimizer): importing only these does
# not make the job one of that library's (`from transformers import get_scheduler` beside a model of one's own)
_UTILITY_IMPORT: Final = re.compile(r"get_\w*schedule\w*|set_seed|AdamW|Adafactor|SchedulerType|logging")


def _imports_used(code: str, package: str) -> bool:
    """Whether the entry imports ``package`` where it runs: at module level, or in a function the code calls (not in
    a method for another path that nothing calls, build-nanogpt's ``GPT.from_pretrained`` next to its own model)."""
    try:
        tree = parse(code)
    except SyntaxError:
        return re.search(rf"from {package} import|import {package}\b", code) is not None

    read = {n.id for n in walk(tree) if isinstance(n, ast.Name)}  # names the code reads (an import never read, Latte's
    # `from transformers import T5EncoderModel` for a text-to-video path it dropped, loads nothing)

    def imports(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == package
            and any(not _UTILITY_IMPORT.fullmatch(a.name) and (a.name == "*" or (a.asname or a.name) in read)
                    for a in node.names)
        ) or (
            isinstance(node, ast.Import)
            and any(a.name.split(".")[0] == package and (a.asname or a.name.split(".")[0]) in read for a in node.names)
        )  # fmt: skip

    functions = [f for f in walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    inside = {id(n) for f in functions for n in walk(f)}
    if any(imports(n) and id(n) not in inside for n in walk(tree)):
        return True

    def called_outside(f: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        own = {id(n) for n in walk(f)}
        return any(
            isinstance(c, ast.Call) and id(c) not in own
            and (c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")) == f.name
            for c in walk(tree)
        )  # fmt: skip

    return any(any(map(imports, walk(f))) and called_outside(f) for f in functions)


def _deepspeed_batches(ex: Extraction, num_gpus: int | None) -> tuple[int | None, int] | None:
    """DeepSpeed's ``train_batch_size`` is the global batch (micro-batch x accumulation x ranks), whatever the
    script's own options say: (the micro-batch its config sets, or what the global leaves per rank when the ranks
    are known, else None; the global). None without one in the job's DeepSpeed config."""
    glob = ex.values.get("deepspeed.train_batch_size")
    if glob is None or not isinstance(glob.value, int) or isinstance(glob.value, bool) or glob.value <= 0:
        return None
    micro = ex.values.get("deepspeed.train_micro_batch_size_per_gpu")
    if micro is not None and isinstance(micro.value, int) and not isinstance(micro.value, bool):
        return micro.value, glob.value
    accum = ex.values.get("deepspeed.gradient_accumulation_steps")
    steps = accum.value if accum is not None and isinstance(accum.value, int) and accum.value > 0 else 1
    if num_gpus and glob.value % (steps * num_gpus) == 0:
        return glob.value // (steps * num_gpus), glob.value
    return None, glob.value


def _batch_sizes(
    ex: Extraction, bs: Any, num_gpus: int | None, distributed: str = "single_gpu", *, per_gpu: bool = False
) -> tuple[int | None, int | None]:
    """(micro-batch per device, global batch = micro-batch * accumulation * data-parallel ranks; under DataParallel
    the loader's batch is split over the GPUs, unless the setting is named per GPU: ``batch_size_per_gpu``).

    A config that states the global batch (litgpt ``global_batch_size``, yacs ``IMS_PER_BATCH``) is taken at its
    word; the per-device batch is then what it leaves per rank when no micro-batch is set."""
    glob = ex.get(*_GLOBAL_BATCH_KEYS) or _batch_beside_micro(ex)
    seq = ex.get("sequence_length", "seq_len", "seq_length", "block_size", "max_seq_len", "context_length")
    if (
        glob is not None and seq is not None and isinstance(glob.value, int) and isinstance(seq.value, int)
        and not isinstance(glob.value, bool) and seq.value > 1 and glob.value >= 32768
        and glob.value % seq.value == 0 and glob.value // seq.value >= (bs if isinstance(bs, int) else 1)
    ):  # fmt: skip
        glob = Value(glob.value // seq.value, glob.source, glob.line)  # a total counted in tokens (llm.c, nanoGPT)
    if glob is None and bs is None and (split := ex.uses.get("global_batch")) is not None:
        whole = split.value  # `args.batch_size = int(args.batch_size / ngpus)`: each rank's share where the GPUs are
        ranks = num_gpus or 1  # (told: more than the one GPU assumed where the command says nothing)
        each = whole // ranks if isinstance(whole, int) and ranks > 1 and whole % ranks == 0 else None
        return each, whole
    if (
        glob is not None and isinstance(glob.value, int) and isinstance(bs, int) and not isinstance(bs, bool)
        and glob.value < bs
    ):  # fmt: skip
        glob = None  # a "global" batch below the loader's own is some other count (a default of 1 image per batch)
    if glob is not None and isinstance(glob.value, int) and not isinstance(glob.value, bool) and glob.value > 0:
        if isinstance(bs, int) and not isinstance(bs, bool):
            return bs, glob.value
        ranks = num_gpus or 1
        return (glob.value // ranks if glob.value % ranks == 0 else None), glob.value
    if not isinstance(bs, int):
        return None, None
    if ex.batch_divided_by_world and num_gpus and not per_gpu:  # (a setting named per device is never split)
        bs = bs // num_gpus
    accum = ex.values.get("deepspeed.gradient_accumulation_steps") or ex.uses.get("grad_accum")  # type: ignore[assignment]
    if accum is None or not isinstance(accum.value, int | float) or isinstance(accum.value, bool):
        accum = ex.get(
            "gradient_accumulation_steps",
            "accum_iter",
            "accumulate_grad_batches",
            "grad_accum_steps",
            "gradient_accumulate_every",
            "accumulation_steps",
            "grad_accum",
            "accum_steps",
            "update_freq",
            "accum_freq",
            "accumulate",
            "optimizer_config.update_interval",
            "optimizer_config.cumulative_iters",
        )  # fmt: skip  (mmcv's accumulating optimizer hooks)
    acc = int(accum.value) if accum is not None and isinstance(accum.value, (int, float)) else 1
    acc = max(acc, 1)  # `ACCUMULATION_STEPS = 0`: accumulation off, one step per batch
    if ex.per_rank_accum_divided:
        return bs, bs * acc
    if num_gpus is None and distributed not in ("single_gpu", "dp") and _SPLIT_BATCHES.search(ex.code):
        return None, bs * acc  # `Accelerator(split_batches=True)`: the loader's batch is the total, split over the
        # processes (how many the command does not say: each one's share is unknown)
    if num_gpus is None and distributed not in ("single_gpu", "dp") and not ex.batch_split_in_code:
        return bs, None  # one process per visible GPU, how many the command does not say: the total is unknown
    if (distributed == "dp" and not per_gpu) or distributed == "model_parallel":
        return bs, bs * acc  # one process: DataParallel splits the loader's batch over the GPUs (or one model
        # spread over them takes each batch whole)
    return bs, bs * acc * (num_gpus or 1)


_SPLIT_BATCHES: Final = re.compile(r"\bAccelerator\([^)]*\bsplit_batches\s*=\s*True")


def _precision(ex: Extraction) -> str:
    for key in ("bf16.enabled", "deepspeed.bf16.enabled", "deepspeed.bfloat16.enabled"):  # DeepSpeed's schema
        if (v := ex.values.get(key)) is not None and v.value is True:
            return "bf16"
    if (v := ex.values.get("SOLVER.AMP.ENABLED")) is not None and v.value is True:
        return "fp16"  # detectron2's AMPTrainer (CUDA autocast, float16)
    for key in ("fp16.enabled", "deepspeed.fp16.enabled"):
        if (v := ex.values.get(key)) is not None and v.value is True:
            return "fp16"
    uses = ex.uses
    if (u := uses.get("bf16")) is not None and u.value is True:
        return "bf16"
    if (u := uses.get("fp16")) is not None and u.value is True:
        return "fp16"
    if (u := uses.get("cast")) is not None and isinstance(u.value, str):
        return u.value  # the model itself cast to half precision (`model.to(torch.bfloat16)`, `.half()`)
    if (u := uses.get("param_dtype")) is not None and u.value in ("bfloat16", "float16"):
        return "bf16" if u.value == "bfloat16" else "fp16"  # the trained weights computed in half precision
    if (u := uses.get("apex_amp")) is not None and isinstance(u.value, str) and u.value.upper() != "O0":
        return "fp16"
    enabled = uses.get("amp_enabled")
    if enabled is not None and enabled.value is False:
        return "fp32"  # autocast(enabled=False): the setting turns mixed precision off
    if (u := uses.get("amp_dtype")) is not None and isinstance(u.value, str):
        return "bf16" if "bf" in u.value else "fp16"
    if enabled is not None and enabled.value is True and enabled.how.endswith("autocast(enabled=)"):
        return "fp16"  # autocast(enabled=True) without a dtype: CUDA autocast is float16
    if (u := uses.get("precision")) is not None:
        text = str(u.value)
        return "bf16" if "bf16" in text else ("fp16" if "16" in text else "fp32")
    if (v := ex.get("bf16")) is not None and (
        v.value is True or (v.value == "auto" and ex.launch.launcher == "axolotl")
    ):
        return "bf16"  # (axolotl's `bf16: auto`: bf16 wherever the GPU has it)
    if (v := ex.get("fp16", "fp16_run", "amp", "use_fp16", "use_amp")) is not None and v.value is True:
        return "fp16"
    if (v := ex.get("amp", "use_amp", "amp_dtype")) is not None and isinstance(v.value, str):
        said = v.value.strip().lower()  # `--amp bf16` (a choice of fp32 / fp16 / bf16), apex's `--amp O1`
        if said in ("bf16", "bfloat16"):
            return "bf16"
        if said in ("fp16", "float16", "half", "o1", "o2", "o3"):
            return "fp16"
    if (
        v := ex.get("mixed_precision", "use_mixed_precision", "autocast", "use_autocast")
    ) is not None and v.value is True:
        kind = ex.get("mixed_precision_dtype", "amp_dtype", "autocast_dtype")  # `common.mixed_precision: true`,
        # audiocraft's `autocast: true`: AMP, float16 unless its dtype says bf16
        return "bf16" if kind is not None and "bf" in str(kind.value).lower() else "fp16"
    if (u := uses.get("load_dtype")) is not None and u.value in ("bfloat16", "float16"):
        return "bf16" if u.value == "bfloat16" else "fp16"  # the trained model's weights loaded in half precision
    for key, v in ex.values.items():  # the model's own compute dtype (gin `network.T5Config.dtype = 'bfloat16'`)
        if (
            key.lower().endswith(".dtype")
            and re.search(r"model|network|net\b|transformer|config", key, re.I)
            and (re.search(r"checkpoint|save|export|eval|infer", key, re.I) is None)
            and str(v.value).lower() in ("bfloat16", "bf16", "float16", "fp16")
        ):
            return "bf16" if "b" in str(v.value).lower() else "fp16"
    if (v := ex.get("trainer.precision", "precision", "dtype", "mixed_precision", "prec")) is not None:
        s = str(v.value).lower()  # (Dassl trainers' `TRAINER.COOP.PREC: fp16 | fp32 | amp`)
        return "bf16" if "bf16" in s or "bfloat16" in s else ("fp16" if "16" in s or s == "amp" else "fp32")
    for key, v in ex.values.items():  # a mixed-precision policy under its own name (`model.fsdp_policy_mp: bfloat16`),
        leaf = key.rsplit(".", 1)[-1].lower()  # or the trained parameters' dtype (`--ds.param_dtype bf16`)
        if (leaf.endswith("_mp") or "mixed_precision" in leaf or leaf in ("param_dtype", "model_dtype")) and isinstance(
            v.value, str
        ):  # fmt: skip  (lingua's `distributed.model_dtype: bf16`: FSDP's parameter dtype)
            if v.value.lower() in ("bf16", "bfloat16"):
                return "bf16"
            if v.value.lower() in ("fp16", "float16", "half"):
                return "fp16"
    return "fp32"  # autocast/GradScaler with no setting enabling them: full precision


def _frameworks(ex: Extraction, zero_stage: Value | None) -> list[str]:
    """The frameworks the job trains with, primary first."""
    code = ex.code
    fw: list[str] = []
    if ex.launch.launcher == "trl":  # TRL's CLI: one of its scripts, an HF Trainer subclass
        fw += ["HF Trainer", "TRL"]
        if (peft := ex.get("use_peft")) is not None and peft.value is True:
            fw.append("PEFT")
        if zero_stage is not None:
            fw.append("DeepSpeed")
    elif ex.launch.launcher == "axolotl":  # axolotl builds an HF Trainer (TRL's for preference tuning) from its YAML
        fw.append("HF Trainer")
        if (rl := ex.get("rl")) is not None and rl.value:
            fw.append("TRL")
        if str((ex.get("adapter") or Value(None, "")).value) in ("lora", "qlora"):
            fw.append("PEFT")
        if zero_stage is not None:
            fw.append("DeepSpeed")
    elif ex.launch.launcher == "swift":  # ms-swift runs transformers' Trainer (its subclass); DeepSpeed is added below
        fw += ["PyTorch", "HF Trainer"]
        if str((ex.get("finetuning_type") or Value(None, "")).value) in ("lora", "qlora", "longlora", "adalora"):
            fw.append("PEFT")
    elif ex.launch.launcher == "llamafactory-cli":
        fw += ["LLaMA-Factory", "HF Trainer"]
        if zero_stage is not None:
            fw.append("DeepSpeed")
        if str((ex.get("finetuning_type") or Value(None, "")).value) == "lora":
            fw.append("PEFT")
        if str((ex.get("stage") or Value(None, "")).value) in ("dpo", "kto", "orpo", "ppo"):
            fw.insert(2, "TRL")
    elif re.search(r"^\s*(?:import|from) (?:lightning|pytorch_lightning)", code, re.M) or (
        (t := ex.get("trainer._target_")) is not None and re.search(r"lightning|\bpl\.", str(t.value), re.I)
    ):  # (a Hydra `trainer._target_` that is Lightning's; SAM 2's `training.trainer.Trainer` is its own loop)
        fw += ["Lightning"]
        if hydra_entry(code):
            fw.append("Hydra")
    elif _HF_TRAINER.search(code) and re.search(
        r"^\s*(?:from|import) (?:transformers|trl|sentence_transformers)\b", code, re.M
    ):
        fw.append("HF Trainer")  # (sentence-transformers' trainers are HF Trainer subclasses)
        built = ex.uses.get("trainer_built")  # transformers' own Trainer built where the code runs: TRL's trainers
        plain = built is not None and built.value in ("Trainer", "Seq2SeqTrainer")  # (in arms ruled out) do not run
        if re.search(r"^\s*(?:from trl\b|import trl\b)", code, re.M) and not plain:
            fw.append("TRL")
        if re.search(r"^\s*(?:from|import) sentence_transformers\b", code, re.M):
            fw.append("Sentence Transformers")
    elif _trainer_in_own_modules(ex):
        fw.append("HF Trainer")  # the job's package subclasses transformers' Trainer and builds it (a runner the
        # entry calls: FlagEmbedding's, LMFlow's pipelines)
    elif (other := _non_torch(ex)) and not _imports_torch(ex):
        fw += other  # a TensorFlow / JAX job: neither the entry script nor the modules it reaches import torch
    else:
        fw.append("PyTorch")
        if re.search(r"^\s*from diffusers\b[^\n]*\bimport\b(?:[^\n]*|\s*\([^)]*?)\bUNet\w*Model\b", code, re.M):
            fw.append("Diffusers")  # it trains a diffusers U-Net (a text encoder from transformers stays frozen)
        elif (
            not _only_frozen_transformers(ex)
            and (
                _imports_used(code, "transformers")
                or any(
                    re.search(r"^(?:from transformers import|import transformers)", text, re.M)  # at module level (a
                    # method's own import for an optional path, nanoGPT's `from_pretrained('gpt2')`, does not count)
                    and _loads_for_entry(text, code)
                    for _, text in ex.modules[:20]
                )
            )
        ):  # (the job's own package loads a transformers model: OpenNRE's BERTEncoder)
            fw.append("HF Transformers")
        if re.search(r"^\s*(?:from|import) megatron\b", code, re.M):
            fw.append("Megatron")  # Megatron(-Core) builds and runs the model (tensor/pipeline parallel)
    if hydra_entry(code) and "Hydra" not in fw:
        fw.append("Hydra")  # the entry is composed by Hydra, whatever trains
    if fw[0] != "LLaMA-Factory":
        peft_flag = ex.get("use_peft", "use_peft_lora")  # TRL's ModelConfig (or a script's own switch): the LoRA
        # adapters are built from the settings
        peft_on = peft_flag is not None and peft_flag.value is True
        peft_use = ex.uses.get("peft")  # (whether the adapters are built where the code runs, where that is seen)
        if peft_use is not None:
            builds = bool(peft_use.value)
        elif peft_flag is not None and isinstance(peft_flag.value, bool):
            builds = peft_flag.value  # `use_peft: false` (its default): importing peft builds no adapters
        else:
            builds = re.search(r"^(?:from peft\b|import peft\b)", code, re.M) is not None  # (at module level: an
            # import under `if TYPE_CHECKING or _peft_available:` only makes an optional path possible)
        if (builds or peft_on) and "PEFT" not in fw:
            fw.append("PEFT")
        if "apex_amp" in ex.uses or "apex_use" in ex.uses:  # an apex API called where the code runs
            fw.append("apex")
        named = ex.get("deepspeed")  # `--deepspeed configs/ds.json` handed to the HF Trainer: DeepSpeed runs it
        handed = named is not None and isinstance(named.value, str) and named.value.endswith(".json")
        if "DeepSpeed" not in fw and (
            zero_stage is not None or "deepspeed.initialize(" in code or (handed and "HF Trainer" in fw)
        ):
            fw.append("DeepSpeed")  # (its config may not be readable: the stage is then unknown, not the engine)
        if ((f := ex.get("fsdp")) is not None and f.value) or (
            re.search(r"\bFullyShardedDataParallel\(|\bFSDP\(", code) and ("fsdp_wrap" in ex.uses or not ex.uses)
        ):  # wrapped where the code runs (not in the arm of `if cfg.distributed_strategy == "fsdp"` it rules out)
            fw.append("PyTorch FSDP")
    return fw


def _only_frozen_transformers(ex: Extraction) -> bool:
    """Whether the job's transformers checkpoints are loaded frozen (a text encoder feeding the trained network,
    never handed to the optimizer) while the model it trains is built some other way: transformers runs, nothing of
    it trains."""
    frozen, model = ex.uses.get("frozen_pretrained"), ex.uses.get("model")
    return frozen is not None and (model is None or not model.how.endswith("from_pretrained()"))


_TRAINER_SUBCLASS: Final = re.compile(r"^class \w+\([^)]*\b(?:Seq2Seq)?Trainer\)", re.M)
_IMPORTS_HF_TRAINER: Final = re.compile(
    r"^\s*from transformers(?:\.trainer)?\s+import\s+(?:\([^)]*|[^\n]*)\b(?:Seq2Seq)?Trainer\b", re.M
)


def _trainer_in_own_modules(ex: Extraction) -> bool:
    """Whether the modules the entry reaches define a subclass of transformers' ``Trainer`` and build a trainer
    (``EncoderOnlyEmbedderTrainer(model=…, args=…)`` in a runner the entry runs)."""
    texts = [t for _, t in ex.modules[:30]]
    subclassed = any(_IMPORTS_HF_TRAINER.search(t) and _TRAINER_SUBCLASS.search(t) for t in texts)
    return subclassed and any(_HF_TRAINER.search(t) for t in texts)


_NON_TORCH: Final = (
    ("Keras", r"^\s*(?:import|from) keras\b"),  # multi-backend Keras, imported on its own
    ("TensorFlow", r"^\s*(?:import|from) tensorflow\b"),
    ("JAX", r"^\s*(?:import|from) jax\b"),
    ("Flax", r"^\s*(?:import|from) flax\b"),
)


def _non_torch(ex: Extraction) -> list[str]:
    """The other frameworks the entry script imports, else those the modules it reaches import (`from model import *`
    where model.py imports keras)."""
    for text in (ex.code, *(t for _, t in ex.modules)):
        if found := [name for name, pattern in _NON_TORCH if re.search(pattern, text, re.M)]:
            return found
    return []


def _imports_torch(ex: Extraction) -> bool:
    pattern = re.compile(r"^\s*(?:import|from) (?:torch|lightning|pytorch_lightning)\b", re.M)
    return bool(pattern.search(ex.code)) or any(pattern.search(t) for _, t in ex.modules)


class _Stages:
    """Runs extraction steps; a step that fails or runs out of budget is skipped, what others found stands."""

    def __init__(self, cuts: list[str]) -> None:
        self.cuts = cuts

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        try:
            yield
        except WorkspaceError:
            raise  # the working directory itself is unusable: nothing to extract
        except Exception as exc:  # noqa: BLE001 -- hostile input may break any step; the others still count
            self.cuts.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")


def extract_metadata(
    workdir: Path,
    command: str,
    reads: dict[str, str] | None = None,
    budget: Budget | None = None,
    cuts: list[str] | None = None,
    repo: Path | None = None,
) -> WorkloadMetadata:
    """The static pass over ``workdir`` for ``command``; ``reads`` collects real path → sha1 of every file read;
    ``repo``: the root of the job's repository around ``workdir`` (its own package there is read too), or None.

    Runs under ``budget`` (default: :class:`Budget`'s). A step that fails on the job's files or runs out of
    budget is skipped and noted in ``cuts``; the metadata holds what the other steps found.
    """
    cuts = cuts if cuts is not None else []
    st = _Stages(cuts)
    with spending(budget or Budget()):
        root = Workspace(workdir, reads=reads, boundary=repo)
        ws, launch = root, Launch()
        with st.step("command"):
            launch = parse_command(command)
        with st.step("launch"):
            ws, launch = _resolve_launch(root, launch)
        ex = Extraction(launch=launch)
        with st.step("settings"):
            collect_settings(ws, launch, ex)
        return _fields(ws, ex, st, command)


def _fields(ws: Workspace, ex: Extraction, st: _Stages, command: str = "") -> WorkloadMetadata:
    t = _Taker(ex)
    default = ex.uses.get("lr_default")
    if default is not None and "lr" not in ex.uses and ex.get("deepspeed") is None:
        # the optimizer the job builds takes no rate (crnn's `optim.Adadelta(params)` under `--adadelta`): a setting
        # merely named lr (`--lr`, "not used by adadelta") does not reach it; the library's default is in effect
        lr: Any = default.value
        t.prov["learning_rate"] = FieldSource(file=default.file, line=default.line, path="use")
    else:
        lr = t.take("learning_rate", *_LR_KEYS, use="lr", deepspeed=("optimizer.params.lr",))
        lr_key = t.keys.get("learning_rate")
        if isinstance(lr, list | dict) and lr_key is not None:  # `optim.options.lr: [{scheduler: …}]`: a schedule
            leaf = lr_key.rsplit(".", 1)[-1]  # per parameter group, not a rate; a plainer rate setting (`base_lr`)
            t.prov.pop("learning_rate", None)
            lr = t.take("learning_rate", *(k for k in _LR_KEYS if k not in (lr_key, leaf)))
    if lr is None and "learning_rate" not in t.prov and (named := _named_rate(ex)) is not None:
        lr = named.value  # a setting named as a rate of the optimizer (`G_optimizer_lr`, `init_lr`, `peak_lr`)
        t.prov["learning_rate"] = FieldSource(file=named.source, line=named.line, path="static")
    if lr is None and "learning_rate" not in t.prov and (default := ex.uses.get("lr_default")) is not None:
        lr = default.value  # `torch.optim.Adam(model.parameters())`: the library's default rate
        t.prov["learning_rate"] = FieldSource(file=default.file, line=default.line, path="use")
    bs = t.take("batch_size_per_device", *_BATCH_KEYS, use="batch", deepspeed=("train_micro_batch_size_per_gpu",))
    if (micro := _micro_batch(ex)) is not None and isinstance(bs, int) and micro.value < bs and bs % micro.value == 0:
        bs = micro.value  # the loader hands a device's batch that the trainer splits into micro-batches (OLMo)
        t.prov["batch_size_per_device"] = FieldSource(file=micro.source, line=micro.line, path="static")
    if bs is None and "batch_size_per_device" not in t.prov and (named := _named_batch(ex)) is not None:
        bs = named.value  # a setting named as a loader's batch under a prefix (`dataloader_batch_size`)
        t.prov["batch_size_per_device"] = FieldSource(file=named.source, line=named.line, path="static")
    epochs = t.take("epochs", *_EPOCH_KEYS, use="epochs")
    max_steps = t.take("max_steps", *_STEP_KEYS, use="max_steps")
    used_dur = ex.uses.get("max_duration")  # (Composer's `Trainer(max_duration="3ep")` where the code runs)
    dur = Value(used_dur.value, used_dur.file, used_dur.line) if used_dur is not None else ex.get("max_duration")
    if epochs is None and max_steps is None and dur is not None:
        m = re.fullmatch(r"\s*(\d+)\s*(ba|ep)\s*", str(dur.value))  # Composer's time strings: batches or epochs
        if m is not None:
            key = "max_steps" if m.group(2) == "ba" else "epochs"
            t.prov[key] = FieldSource(file=dur.source, line=dur.line, path="use" if used_dur else "static")
            max_steps, epochs = (int(m.group(1)), None) if key == "max_steps" else (None, int(m.group(1)))
    if (
        epochs is not None and max_steps is not None
        and re.match(r"(?:lr_)?sched(?:ule|uler)?\.", t.keys.get("max_steps", "")) is not None
    ):  # fmt: skip
        max_steps = None  # (`scheduler.num_training_steps`: how long the rate schedule runs, not when training stops)
        t.prov.pop("max_steps", None)
    by_loop, by_name = t.prov.get("epochs"), t.prov.get("max_steps")
    if by_loop is not None and by_loop.path == "use" and by_name is not None and by_name.path != "use":
        max_steps = None  # the loop the code runs counts epochs; a setting merely named like a step count does not win
        t.prov.pop("max_steps")
    if not isinstance(max_steps, int | float) or isinstance(max_steps, bool) or max_steps <= 0:
        max_steps = None  # a schedule's milestones (`SOLVER.STEPS: [30, 60]`) are no step budget
        t.prov.pop("max_steps", None)
    if isinstance(epochs, int | float) and not isinstance(epochs, bool) and epochs <= 0:
        epochs = None  # Lightning's `max_epochs=-1`: no limit, not an epoch count
        t.prov.pop("epochs", None)
    setup = _Setup(None, "single_gpu", None)
    with st.step("gpus"):
        setup = _setup(ex)
    per_device, global_bs = None, None
    with st.step("batch"):
        per_gpu = _PER_GPU.search(t.keys.get("batch_size_per_device", "")) is not None or (
            (used := ex.uses.get("batch")) is not None and used.how.endswith("a per-GPU batch times the GPUs")
        )
        per_device, global_bs = _batch_sizes(ex, bs, setup.num_gpus, setup.distributed, per_gpu=per_gpu)
        if (ds := _deepspeed_batches(ex, setup.num_gpus)) is not None:
            per_device, global_bs = ds
            told = ex.values["deepspeed.train_batch_size"]
            t.prov["global_batch_size"] = FieldSource(file=told.source, line=told.line, path="static")
            if per_device is None:
                t.prov.pop("batch_size_per_device", None)
        if isinstance(per_device, int) and per_device <= 0:  # `batch_size: int = 0  # [automatically set]`: a slot
            per_device, global_bs = None, None  # the code fills at run time, no batch of its own
            t.prov.pop("batch_size_per_device", None)
    frameworks: list[str] = []
    with st.step("frameworks"):
        frameworks = _frameworks(ex, setup.zero_stage)
        if setup.distributed == "fsdp" and "Lightning" not in frameworks and "PyTorch FSDP" not in frameworks:
            frameworks.append("PyTorch FSDP")  # the job's own code wraps the model in torch's FSDP
    ident = WorkloadIdentity()
    with st.step("workload"):
        ident = identify_workload(ws, ex, t.prov, st.cuts, command)
    precision = "fp32"
    with st.step("precision"):
        precision = _precision(ex)
    return WorkloadMetadata(
        model_name=_text(ident.model_name),
        model_type=_text(ident.model_type),
        task=_text(ident.task),
        params_millions=_number(ident.params_millions, 1e9),
        dataset=_text(ident.dataset),
        batch_size_per_device=_count(per_device),
        global_batch_size=_count(global_bs),
        epochs=_number(epochs, 1e9) if max_steps is None else None,
        max_steps=_count(max_steps),
        learning_rate=_number(lr, 1e6),
        precision=precision,
        framework=frameworks,
        distributed=setup.distributed,
        num_gpus=_count(setup.num_gpus, 1 << 20),
        provenance=t.prov,
    )


def _number(v: Any, limit: float) -> float | None:
    """A finite float within ±``limit`` (a 401-digit literal or ``inf`` in a config is no value)."""
    if not isinstance(v, int | float) or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) and abs(f) <= limit else None


def _count(v: Any, limit: int = 1 << 40) -> int | None:
    """A non-negative whole number up to ``limit``."""
    f = _number(v, float(limit))
    return int(f) if f is not None and f >= 0 else None


def _text(v: str | None) -> str | None:
    return redact(v[:256]) if isinstance(v, str) else None
