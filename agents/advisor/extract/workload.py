"""What a job trains and on what: the model (name, type, parameter count), the task and the dataset.

Evidence, strongest first: a pretrained checkpoint id (``model_name_or_path``, ``init_from``,
``from_pretrained("…")``); the model class the entry script builds (a Hydra ``_target_``, or
``model = UNet(…)``) followed through local imports, its parameters counted from its ``torch.nn``
constructors; GPT shape settings; the dataset settings and the README's title.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import posixpath
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final

import yaml

from schedmate.agents.advisor.extract.collect import Extraction
from schedmate.agents.advisor.extract.config_sources import Value, load_yaml, nest_flat
from schedmate.agents.advisor.extract.dict_parsers import FunctionResolver as _FunctionResolver
from schedmate.agents.advisor.extract.evaluator import is_module_value
from schedmate.agents.advisor.extract.identity import (
    ModelClass,
    canonical_dataset,
    char_level_dataset,
    dataset_task,
    find_class,
    inline_model,
    layer_census,
    model_type_of,
    readme_command_dataset,
    readme_datasets,
    readme_lead,
    readme_title,
    specific_family,
    task_of,
)
from schedmate.agents.advisor.extract.known import handle_name, known_model
from schedmate.agents.advisor.extract.library_modules import is_library_builder
from schedmate.agents.advisor.extract.param_count import UNKNOWN, ParamCounter, namespace
from schedmate.agents.advisor.extract.syntax import callee_name, parse, walk
from schedmate.agents.advisor.extract.usesites import (
    NOT_WEIGHTS_LOADERS,
    OPTIMIZERS,
    data_parallel_subclass,
    live_text,
    passed_for,
)
from schedmate.agents.advisor.extract.values import Obj
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.schemas.jobs_metadata import FieldSource

__all__ = ["WorkloadIdentity", "identify_workload"]

_RL_ENVIRONMENTS: Final = re.compile(
    r"^\s*(?:import|from)\s+(?:gym|gymnasium|dmc2gym|dm_control|procgen|minigrid|metaworld|mujoco_py)\b", re.M
)  # a job that imports an environment library learns in one; its `env` setting names which
_DATA_FILE: Final = re.compile(r"\.(?:jsonl?|csv|tsv|parquet|txt|arrow|tar|zip|gz|pkl|h5|hdf5|npy|npz|lmdb)$", re.I)
_DATASET_KEYS: Final = ("dataset", "dataset_name", "data.dataset", "data_name", "data.name", "data._target_", "datadir",
                        "dataroot", "data_root", "dataset_root", "dataset_dir", "dataset_path",
                        "data.training_files", "training_files", "train_files", "data_path", "data_dir",
                        "datasets.train.name", "data.train.type", "dataset.name", "dataset.repo_id", "train.dataset",
                        "train_data",
                        "train_file", "train_path", "train_dir", "train_file_dir", "train_data_path", "train_data_dir",
                        "train_ann",
                        "data_folder", "train_filename", "train_data_file", "training_file", "training_data",
                        "env_name", "env_id", "game", "atari_game", "gym_env", "data", "dataroot_gt", "dataroot_lq",
                        "train_ann_file", "data.train.dataset.type", "train_dataloader.dataset.type",
                        "train_dataloader.dataset.dataset.type", "MIXTURE_OR_TASK_NAME",
                        "mixture_or_task_name", "input_file", "instance_data_dir")  # fmt: skip
# Dataset wrappers of OpenMMLab configs: the dataset they wrap is the one trained on.
_DATASET_WRAPPERS: Final = re.compile(  # (and a library's generic loaders: `dataset_type = 'VideoDataset'`)
    r"(?:Repeat|Concat|ClassBalanced|MultiImageMix)Dataset|(?:Video|Rawframe|RawFrame|Image|Audio|Base|Custom)Dataset"
)


@dataclass
class WorkloadIdentity:
    """What is trained, on what (None where the code does not say)."""

    model_name: str | None = None
    model_type: str | None = None
    task: str | None = None
    params_millions: float | None = None
    dataset: str | None = None


@dataclass
class _Model:
    """The model class the entry script builds, and its parameter count if it could be counted."""

    name: str | None = None
    cls: ModelClass | None = None
    count: int | None = None
    kinds: dict[str, int] | None = None  # parameters of the layers the counted model holds, by family
    part: bool = False  # named by a setting of one part's section (`model_params.decoder.type`), not the whole
    file: str | None = None  # the module defining the built object's class, where no class was looked up
    from_config: bool = False  # named by the config file a generic class is built from (`Model("gelan-c.yaml")`)


def _source(v: Value) -> FieldSource:
    return FieldSource(file=v.source, line=v.line, path="command" if v.source == "command" else "static")


_SIZE_TOKEN: Final = re.compile(r"(\d+(?:\.\d+)?)([BM])(?![a-z])")
_SIZE_TOKEN_LOWER: Final = re.compile(r"(?:^|[-_/ ])(\d+(?:\.\d+)?)([bm])(?![A-Za-z0-9])")


def _params_from_name(name: str, pattern: re.Pattern[str] = _SIZE_TOKEN) -> float | None:
    """The size a checkpoint id states: ``Qwen3-4B``; with the lower-case pattern ``pythia-2.8b``,
    ``vicuna-13b-v1.5``, ``bloom-560m``."""
    m = pattern.search(name)
    if not m:
        return None
    n = float(m.group(1))
    return n * 1000 if m.group(2).upper() == "B" else n


# A vocabulary of the characters of all the texts: `set(''.join(words))`.
_CHAR_VOCAB: Final = re.compile(r"""\bset\(\s*(?:''|"")\.join\(""")


_TOKENIZER: Final = re.compile(r"\w*Tokenizer\w*\.from_pretrained|\btiktoken\b|\bsentencepiece\b|\bBPE\b")


def _tokenized(ex: Extraction) -> bool:
    """Whether the job reads its text through a subword tokenizer: a vocabulary or merges file or tokenizer among
    its settings, or a tokenizer library in its entry script."""
    return _TOKENIZER.search(ex.code) is not None or any(
        re.search(r"vocab_file|merge_file|tokenizer", k, re.I) and v.value for k, v in ex.values.items()
    )


def _gpt_params(ex: Extraction, *, char_level: bool = False) -> float | None:
    n_layer = ex.get("n_layer", "num_layers", "num_hidden_layers", "n_layers")  # nanoGPT / Megatron / HF names
    d = ex.get("n_embd", "hidden_size", "d_model", "dim", "embed_dim")
    if n_layer is None or d is None or not isinstance(n_layer.value, int) or not isinstance(d.value, int):
        return None
    given = _int_setting(ex, "vocab_size", "padded_vocab_size", "n_vocab")
    vocab = 256 if char_level else given or 50304  # a character vocabulary is built from the text (< 256 symbols)
    layers, width = int(n_layer.value), int(d.value)
    heads = _int_setting(ex, "num_attention_heads", "n_head", "num_heads")
    kv_heads = _int_setting(ex, "num_key_value_heads", "n_kv_heads", "num_kv_heads", "num_query_groups")
    attention = 4 * width * width
    if heads and kv_heads and kv_heads < heads and width % heads == 0:  # grouped-query attention: smaller K and V
        attention = 2 * width * width + 2 * width * kv_heads * (width // heads)
    inner = _int_setting(ex, "intermediate_size", "ffn_hidden_size", "ffn_dim", "d_inner", "d_ff")
    act = ex.get("hidden_act", "activation", "activation_function")
    gated = act is not None and str(act.value).lower() in ("silu", "swiglu", "swish", "geglu")  # LLaMA's SwiGLU MLP
    mlp = (3 if gated else 2) * width * inner if inner else 8 * width * width
    rotary = gated or any(re.search(r"rope|rotary", k) for k in ex.values)  # (no learned position table)
    block = ex.get("block_size", "seq_length", "max_position_embeddings")
    pos = int(block.value) * width if block is not None and not rotary and isinstance(block.value, int) else 0
    untied = (t := ex.get("tie_word_embeddings")) is not None and t.value is False
    count = layers * (attention + mlp) + vocab * width * (2 if untied else 1) + pos
    return _millions(count) if count > 0 else None


def _int_setting(ex: Extraction, *keys: str) -> int | None:
    """A positive integer setting under the first of ``keys`` that is set, else None."""
    v = ex.get(*keys)
    return (
        v.value
        if v is not None and isinstance(v.value, int) and not isinstance(v.value, bool) and v.value > 0
        else None
    )


def _millions(count: int) -> float:
    """A parameter count in millions: three significant digits below a million (a toy model's 6,528 is 0.00653, not
    0.0), one decimal above."""
    return float(f"{count / 1e6:.3g}") if count < 1e6 else round(count / 1e6, 1)


_ACTIVATIONS: Final = frozenset({"ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "Softmax", "LeakyReLU"})
_SCRATCH: Final = ("scratch", "resume", "none", "")
_MODEL_VAR: Final = re.compile(  # (not a random-number generator: `generator = torch.Generator()`)
    r"^\s*(?P<var>\w*(?i:model|net|generator|_g)\w*)\s*=\s*(?!(?:torch|torch\.cuda|np\.random|numpy\.random)\.Generator\()"
    r"(?:\w+\.)*(?P<cls>[A-Z]\w*)\(",
    re.M,
)
_MODEL_VAR_LOWER: Final = re.compile(r"^\s*(?P<var>\w*(?i:model|net)\w*)\s*=\s*(?P<cls>[a-z]\w*)\(", re.M)


def _pretrained(ex: Extraction) -> tuple[str, Value] | None:
    u = ex.uses.get("model")  # what from_pretrained / create_model receives is authoritative
    if u is not None and isinstance(u.value, str) and u.value in ex.config_classes:
        u = None  # `getattr(module, config_name)()` built the settings class the command names, not a network
    used = u.value if u is not None and isinstance(u.value, str) and u.value.strip().lower() not in _SCRATCH else None
    named = _pretrained_by_name(ex)
    if used is not None and u is not None and (named is None or named[1].value != used):
        return "from_pretrained", Value(used, u.file, u.line)
    return named


def _pretrained_by_name(ex: Extraction) -> tuple[str, Value] | None:
    for key in ("model_name_or_path", "pretrained_model_name_or_path", "model_name", "base_model", "init_from",
                "model.pretrained_model_name_or_path"):  # fmt: skip
        found = ex.find(key)
        if found is not None and isinstance(found[1].value, str) and found[1].value.strip().lower() not in _SCRATCH:
            if key == "model_name" and _only_names_a_folder(ex, key):
                continue  # `--model_name mono_model` read only into `os.path.join(log_dir, model_name)`: the run's name
            if key == "base_model" and "/" not in found[1].value and _keys_a_table(ex, found[1].value):
                continue  # `llama.base_model: llama_7b` keys the code's table of standard shapes: built from scratch
            return found
    for key, v in ex.values.items():  # Hydra: `model: {_target_: pkg.BaseTransformer.from_pretrained, path: ckpts/x}`
        if key.endswith("._target_") and isinstance(v.value, str) and v.value.endswith(".from_pretrained"):
            section = key.removesuffix("._target_")
            for arg in ("path", "pretrained_model_name_or_path", "model_name_or_path", "checkpoint", "name"):
                held = ex.values.get(f"{section}.{arg}")
                if held is not None and isinstance(held.value, str) and "${" not in held.value and held.value.strip():
                    return f"{section}.{arg}", held
    for m in re.finditer(r"^(?![ \t]*#).*?(\w*)\.from_pretrained\(\s*['\"]([\w./-]+)['\"]", ex.code, re.M):
        # (not on a commented-out line: `# model = GPT.from_pretrained("gpt2")` loads nothing)
        if any(s in m.group(1) for s in NOT_WEIGHTS_LOADERS):
            continue  # `BertTokenizer.from_pretrained('bert-base-cased')` loads a vocabulary, not the model trained
        return "from_pretrained", Value(m.group(2), ex.launch.script or "", ex.code[: m.start()].count("\n") + 1)
    return None


def _keys_a_table(ex: Extraction, name: str) -> bool:
    """Whether ``name`` is a key of a dict literal in the job's code (``'llama_7b': dict(hidden_size=4096, …)``): an
    architecture the code spells out, not a checkpoint to load."""
    entry = re.compile(rf"""['"]{re.escape(name)}['"]\s*:\s*(?:dict\(|\{{)""")
    return any(entry.search(text) for text in [ex.code, *(t for _, t in ex.modules[:20])])


_FOLDER_USE: Final = re.compile(
    r"os\.path\.join\(|\bmakedirs\(|\bmkdir\(|_dir\b|\blog_path\b|\bPath\(|\bprint\(|\blog(?:ger|ging)?\.\w+\("
)  # (a line that prints or logs the name loads nothing either)


def _only_names_a_folder(ex: Extraction, key: str) -> bool:
    """Whether the job's code reads setting ``key`` (``opt.model_name``, ``cfg["model_name"]``) and every line that
    reads it builds a path (a log or checkpoint folder named after the run) or prints it."""
    read = re.compile(rf"\.{key}\b|\[['\"]{key}['\"]\]")
    lines = [
        line for text in [ex.code, *(t for _, t in ex.modules[:20])] for line in text.splitlines()
        if read.search(line) and not re.search(rf"add_argument\(|\b{key}\s*=(?!=)", line)
    ]  # fmt: skip
    return bool(lines) and all(_FOLDER_USE.search(line) for line in lines)


def _known_size(name: str) -> float | None:
    hit = known_model(name)
    return hit[0] if hit else None


_NOT_MODELS: Final = frozenset(
    {
        "OrderedDict",
        "ModelCheckpoint",
        "EarlyStopping",
        "SummaryWriter",
        "Path",
        "Namespace",
        "Munch",
        "DotMap",
        "EasyDict",
        "AttrDict",
        "SimpleNamespace",
        "ConfigDict",
    }  # (attribute-dict containers:
)  # StyleTTS2's `build_model` returns `Munch(bert=…, decoder=…)`, a dict of networks)
_NOT_MODEL_SUFFIXES: Final = ("Trainer", "Runner", "Engine", "Logger", "Dataset", "DataModule", "Loader", "Config",
                              "Args", "Arguments", "Parser", "Scheduler", "Optimizer", "Meter", "Writer", "Sampler",
                              "Callback", "Checkpoint", "Tokenizer", "Augmenter")  # fmt: skip
_WRAPPERS: Final = frozenset(
    {"DistributedDataParallel", "DataParallel", "DDP", "FSDP", "FullyShardedDataParallel", "ModelEma", "ModelEmaV2",
     "ModelEmaV3", "EMA", "ExponentialMovingAverage", "AveragedModel", "SyncBatchNorm", "Accelerator",
     "DistributedModelParallel"}
)  # fmt: skip


def _is_wrapper(name: str, aliases: Collection[str] = _WRAPPERS) -> bool:
    """A data-parallel or EMA wrapper (``aliases``: those names and the module's own aliases of them), or a
    project's data-parallel subclass by its telling name: it wraps a model, it does not build one."""
    return name in aliases or data_parallel_subclass(name) is not None or _EMA_CLASS.fullmatch(name) is not None


_EMA_CLASS: Final = re.compile(r"(?i)(?:model)?_?ema(?:_?model)?(?:v\d)?")  # ModelEMA, EMAModel, EmaModel


def _optimized_module(
    tree: ast.Module, ruled_out: Collection[int] = (), passed: Collection[str] = ()
) -> tuple[str, ast.Call] | None:
    """``optim.Adam(transformer.parameters(), ...)``: the constructor call that built ``transformer``. ``passed``:
    variables the script hands to a function that trains their parameters (see :func:`_passed_owners`)."""
    owners: list[str] = []
    for node in walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Call):
            inner = node.args[0]
            if (
                isinstance(inner.func, ast.Attribute) and _PARAMETERS_METHOD.fullmatch(inner.func.attr)
                and isinstance(inner.func.value, ast.Name)
            ):  # fmt: skip
                owners.append(inner.func.value.id)
    owners += [o for o in _grouped_owners(tree) if o not in owners]
    owners += [o for o in _engine_owners(tree) if o not in owners]
    owners += [o for o in passed if o not in owners]
    owners = [m for o in owners for m in _contained(tree, o)]
    methods = _class_lines(tree)
    wrappers = _WRAPPERS | _wrapper_aliases(tree)
    critic: tuple[str, ast.Call] | None = None  # a GAN's discriminator: the model only when nothing else is trained
    judges = _judges(tree, owners)
    classes = {c.name for c in walk(tree) if isinstance(c, ast.ClassDef)}  # `class generator(nn.Module)`: lower case
    chosen = _imported_by_setting(tree)
    for name in owners:
        found: list[tuple[bool, str, ast.Call]] = []
        for node in walk(tree):
            if (
                isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and (built := _either_arm(node.value, wrappers)) is not None
            ):  # fmt: skip
                call = _unwrapped(built, wrappers)  # `nn.DataParallel(RAFT(args)).to(device)`: RAFT(args)
                func = call.func
                cls = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                rewraps = bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == name
                if (
                    cls
                    and (
                        cls[0].isupper()
                        or cls in classes
                        or _torchvision_builder(call, tree)  # `models.resnet18()`
                        or (
                            isinstance(func, ast.Attribute)
                            and isinstance(func.value, ast.Name)
                            and func.value.id in chosen
                            and func.attr not in _SAME_MODULE  # (not `classifier = model.eval()` elsewhere)
                        )
                    )  # (`MODEL.get_model(…)` of the module `importlib.import_module(args.model)` returned)
                    and not _is_wrapper(cls, wrappers)
                    and not rewraps
                    and id(node) not in ruled_out
                ):  # not `model = Full(model, loss)`, nor one built in an arm the settings rule out
                    found.append((any(a <= node.lineno <= b for a, b in methods), cls, call))
        if found:
            _, cls, call = min(found, key=lambda f: f[0])  # the first outside any class, else the first
            if not _CRITIC.search(cls) and name not in judges:
                return cls, call
            critic = critic or (cls, call)
    return critic or _optimized_attribute(tree, wrappers)


def _imported_by_setting(tree: ast.Module) -> set[str]:
    """Names bound to a module imported by name at run time (``MODEL = importlib.import_module(args.model)``):
    what such a module defines is the job's own code, chosen by a setting."""
    return {
        t.id for node in walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) in ("importlib.import_module", "import_module")
        for t in node.targets if isinstance(t, ast.Name)
    }  # fmt: skip


def _either_arm(value: ast.expr, wrappers: Collection[str] = _WRAPPERS) -> ast.Call | None:
    """The call an assignment builds: itself, or the first arm of ``Net(p).cuda() if p.cuda else Net(p)`` when both
    arms build the same class (where they differ, the settings choose and neither is sure)."""
    if isinstance(value, ast.Call):
        return value
    if isinstance(value, ast.IfExp) and isinstance(value.body, ast.Call) and isinstance(value.orelse, ast.Call):
        a, b = _unwrapped(value.body, wrappers), _unwrapped(value.orelse, wrappers)
        if _callee_name(a) and _callee_name(a) == _callee_name(b):
            return value.body
    return None


def _passed_owners(tree: ast.Module, ws: Workspace, script: str) -> list[str]:
    """Variables of the entry script handed to a function (of the script or of the job's modules) that builds an
    optimizer over that parameter's ``.parameters()``: ``train.train(train_iter, dev_iter, cnn, args)`` where
    ``def train(train_iter, dev_iter, model, args)`` builds ``Adadelta(model.parameters(), …)`` hands over ``cnn``."""
    resolver = _FunctionResolver(ws, script, tree)
    out: list[str] = []
    for node in walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            found = resolver.imported_function(func.id, script)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            found = resolver.module_function(func.value.id, func.attr, script)
        else:
            continue
        if found is None:
            continue
        fn = found[0]
        params = [p.arg for p in [*fn.args.posonlyargs, *fn.args.args]]
        for inner in walk(fn):
            if not (isinstance(inner, ast.Call) and inner.args and _builds_optimizer(inner)):
                continue
            first = inner.args[0]
            handed = first.func if isinstance(first, ast.Call) else None
            if not (
                isinstance(handed, ast.Attribute) and _PARAMETERS_METHOD.fullmatch(handed.attr)
                and isinstance(handed.value, ast.Name) and handed.value.id in params
            ):  # fmt: skip
                continue
            arg = passed_for(node, handed.value.id, params)
            if isinstance(arg, ast.Name) and arg.id not in out:
                out.append(arg.id)
    return out


def _judges(tree: ast.Module, owners: list[str]) -> set[str]:
    """Trained modules that are handed another trained module's output in one call and data of their own in
    another, and whose own output that module is never handed: ``errD_real = netD(real)``, ``fake = netG(noise);
    errD_fake = netD(fake)``. A GAN's critic judges the model, it is not the model (WGAN's ``DCGAN_D``, whose
    optimizer is built first). A decoder handed an encoder's output with its captions in the same call judges
    nothing: both are the model."""
    owned = set(owners)
    if len(owned) < 2:
        return set()
    assigned: dict[str, list[tuple[int, ast.expr]]] = {}  # a variable → (line, value) of each assignment
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for n in walk(t):
                    if isinstance(n, ast.Name):
                        assigned.setdefault(n.id, []).append((node.lineno, node.value))

    def producers(expr: ast.AST, line: int, depth: int = 0) -> set[str]:
        """The trained modules whose output ``expr`` may hold at ``line`` (the latest assignment before it)."""
        out: set[str] = set()
        for n in walk(expr):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in owned:
                out.add(n.func.id)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and depth < 3:
                before = [(ln, v) for ln, v in assigned.get(n.id, []) if ln < line]
                if before:
                    ln, value = max(before, key=lambda a: a[0])
                    out |= producers(value, ln, depth + 1)
        return out

    fed: dict[str, set[str]] = {}  # a trained module → the trained modules whose output it is handed
    own_data: set[str] = set()  # trained modules also handed data no trained module made
    for node in walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in owned and node.args:
            got: set[str] = set()
            for a in [*node.args, *(k.value for k in node.keywords)]:
                got |= producers(a, node.lineno) - {node.func.id}
            fed.setdefault(node.func.id, set()).update(got)
            if not got:
                own_data.add(node.func.id)
    return {
        j for j, sources in fed.items()
        if j in own_data and any(j not in fed.get(g, set()) for g in sources)
    }  # fmt: skip


def _optimized_attribute(tree: ast.Module, wrappers: frozenset[str]) -> tuple[str, ast.Call] | None:
    """``self.g_optimizer = torch.optim.Adam(self.G.parameters(), ...)`` in a solver class that builds its networks
    as attributes (``self.G = Generator(...)``): the first optimizer's module that is not a GAN's discriminator."""
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and node.args and _builds_optimizer(node)):
            continue
        first = node.args[0]
        if not (
            isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "parameters"
            and isinstance(owner := first.func.value, ast.Attribute) and isinstance(owner.value, ast.Name)
            and owner.value.id == "self"
        ):  # fmt: skip
            continue
        for other in walk(tree):
            if not (isinstance(other, ast.Assign) and isinstance(other.value, ast.Call)):
                continue
            if any(
                isinstance(t, ast.Attribute) and t.attr == owner.attr and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                for t in other.targets
            ):  # fmt: skip
                cls = _callee_name(other.value)
                if (
                    cls[:1].isupper()
                    and not _is_wrapper(cls, wrappers)
                    and cls not in _CONTAINERS
                    and not _CRITIC.search(cls)
                ):
                    return cls, other.value
    return None


_PARAMETERS_METHOD: Final = re.compile(r"(?:\w+_)?param(?:eter)?s")  # `.parameters()`, `.learnable_parameters()`
_CRITIC: Final = re.compile(r"Discriminator|Critic")  # a GAN's judge is trained beside the model, it is not it


_CONTAINERS: Final = frozenset({"ModuleList", "ModuleDict", "ParameterList", "Sequential"})


def _contained(tree: ast.Module, name: str) -> list[str]:
    """``trainable = nn.ModuleList([]); trainable.append(model_s)``: an empty container trains the module appended
    to it first; any other name stands for itself."""
    built = [n.value for n in walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
             and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]  # fmt: skip
    empty = built and all(
        _callee_name(c) in _CONTAINERS and not c.keywords
        and all(isinstance(a, ast.List | ast.Tuple) and not a.elts for a in c.args)
        for c in built
    )  # fmt: skip
    if not empty:
        return [name]
    added = [
        n.args[0].id for n in walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
        and isinstance(n.func.value, ast.Name) and n.func.value.id == name and n.args
        and isinstance(n.args[0], ast.Name)
    ]  # fmt: skip
    return added[:1] or [name]  # (what is appended later are heads and adapters trained beside it)


def _torchvision_builder(call: ast.Call, tree: ast.Module) -> bool:
    """Whether ``call`` calls one of torchvision's model builders through a name the module imports from torchvision
    (``models.resnet18(…)`` after ``from torchvision import models``, ``torchvision.models.vgg16(…)``), not a job's
    module's function of the same name (``wideresnet.resnet50(…)``)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not is_library_builder(name):
        return False
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    return any(
        (a.asname or a.name.split(".")[0]) == root.id
        for node in walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
        if (a.name if isinstance(node, ast.Import) else node.module or "").startswith("torchvision")
    )


def _wrapper_aliases(tree: ast.Module) -> set[str]:
    """Names a module binds to a data-parallel or EMA wrapper under another name
    (``from apex.parallel import DistributedDataParallel as ApexDDP``)."""
    return {
        a.asname for node in walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names if a.asname and a.name.rsplit(".", 1)[-1] in _WRAPPERS
    }  # fmt: skip


def _parameter_owners(expr: ast.AST) -> list[str]:
    """Names whose parameters ``expr`` hands over: ``model.parameters()``, ``model.head.parameters()``,
    ``[{"params": model.encoder.parameters(), "lr": lr}]``, ``filter(f, model.parameters())``."""
    out: list[str] = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PARAMETERS:
            base = node.func.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in out and base.id != "self":
                out.append(base.id)
    return out


_PARAMETERS: Final = frozenset({"parameters", "named_parameters"})


def _engine_owners(tree: ast.Module) -> list[str]:
    """The module a training engine takes over: ``deepspeed.initialize(model=rf, ...)`` (its optimizer is built from
    that module's parameters, however the script groups them)."""
    return [
        k.value.id for n in walk(tree)
        if isinstance(n, ast.Call) and _dotted_name(n.func).endswith("deepspeed.initialize")
        for k in n.keywords if k.arg == "model" and isinstance(k.value, ast.Name)
    ]  # fmt: skip


def _grouped_owners(tree: ast.Module) -> list[str]:
    """The modules an optimizer trains when its parameters come in groups or through a variable: ``parameters =
    dlrm.parameters() if one_rank else [{"params": dlrm.bot_l.parameters()}, ...]`` then
    ``optimizer = opts[args.optimizer](parameters, lr=...)`` — the first argument (or ``params=``) of a call that
    builds an optimizer, followed through a name assigned once in the same file."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    out: list[str] = []
    for node in walk(tree):
        if not isinstance(node, ast.Call) or not _builds_optimizer(node):
            continue
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), None)
        if isinstance(first, ast.Name) and len(assigned.get(first.id, ())) == 1:
            first = assigned[first.id][0]
        if isinstance(first, ast.List | ast.Tuple | ast.IfExp | ast.Call | ast.ListComp):
            out += [o for o in _parameter_owners(first) if o not in out]
    return out


def _builds_optimizer(call: ast.Call) -> bool:
    """``torch.optim.SGD(...)``, ``build_optimizer(...)``, or a constructor picked from a table
    (``opts[args.optimizer](...)``)."""
    if isinstance(call.func, ast.Subscript):
        return True
    name = _callee_name(call)
    return name in OPTIMIZERS or "optim" in name.lower()


def _class_lines(tree: ast.Module) -> list[tuple[int, int]]:
    """Line ranges of the module's classes: a method's ``model = GPT(config)`` (a ``from_pretrained`` classmethod)
    is not the job's own construction of its model."""
    return [(c.lineno, c.end_lineno or c.lineno) for c in walk(tree) if isinstance(c, ast.ClassDef)]


def _model_call(ex: Extraction, ws: Workspace | None = None) -> tuple[str, ast.Call] | None:
    """The constructor call that builds the model in the entry script (``model = UNet(...)``)."""
    try:
        tree = parse(ex.code)
    except SyntaxError:
        return None
    ruled_out = _entry_arms_ruled_out(tree, ex)  # `if args.sparse: model = SpGAT(...) else: model = GAT(...)`
    owner = _optimized_module(tree, ruled_out)
    if owner is None and ws is not None and ex.launch.script:
        owner = _optimized_module(tree, ruled_out, _passed_owners(tree, ws, ex.launch.script))
    if owner is not None:  # the module whose parameters the optimizer trains: its constructor names the model
        return owner
    for node in walk(tree):  # `model = MODELS[args.model](...)`: a registry of constructors, keyed by a setting
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and re.search(r"model|net", node.targets[0].id, re.I) and isinstance(node.value, ast.Call)
            and isinstance((inner := _unwrapped(node.value)).func, ast.Subscript)
            and (u := ex.uses.get("registry_key")) is not None and u.line == inner.lineno and isinstance(u.value, str)
        ):  # fmt: skip
            call = inner
            known = ex.uses.get("registry_kwargs")
            if known is not None and known.line == node.lineno and isinstance(known.value, dict):
                call = ast.Call(
                    func=call.func, args=call.args,
                    keywords=[ast.keyword(arg=k.arg, value=ast.Constant(known.value[k.arg]))
                              if k.arg in known.value else k for k in call.keywords],
                )  # fmt: skip
                ast.copy_location(call, node.value)
            return u.value, call
    in_classes = _class_lines(tree)
    found: list[tuple[bool, str, ast.Call, str]] = []
    wrappers = _WRAPPERS | _wrapper_aliases(tree)
    lower = [  # `model = ft_net(...)`: a class of the job's named in lower case (not a factory function)
        m for m in _MODEL_VAR_LOWER.finditer(ex.code)
        if re.search(rf"^class {re.escape(m.group('cls'))}\(", ex.code, re.M)
        or any(re.search(rf"^class {re.escape(m.group('cls'))}\(", t, re.M) for _, t in ex.modules[:20])
    ]  # fmt: skip
    for m in sorted([*_MODEL_VAR.finditer(ex.code), *lower], key=lambda m: m.start()):
        if (
            _is_wrapper(m.group("cls"), wrappers) or m.group("cls") in _NOT_MODELS or m.group("cls") in OPTIMIZERS
            or m.group("cls").endswith(_NOT_MODEL_SUFFIXES) or "self." in m.group(0) or "loss" in m.group("cls").lower()
        ):  # fmt: skip
            continue  # `model = DistributedDataParallel(model)` wraps the model; `x_G = self.MSE_loss(...)` calls one
        line = ex.code[: m.start("cls")].count("\n") + 1
        for node in walk(tree):
            if not isinstance(node, ast.Call) or node.lineno != line:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name == m.group("cls") and id(node) in ruled_out:
                break  # built in an arm the settings rule out
            if name == m.group("cls"):
                handed = [*node.args, *(k.value for k in node.keywords)]
                if not any(isinstance(a, ast.Name) and a.id == m.group("var") for a in handed):
                    found.append((any(a <= line <= b for a, b in in_classes), m.group("cls"), node, m.group("var")))
                break  # (the variable itself handed in wraps it, does not build it: `model = FullModel(model,
                # loss)`, detectron2's `model = SemanticSegmentorWithTTA(cfg, model)`)
    held = {  # `network_dict = nn.ModuleDict({...})` then `net = SpeedyConvNet(network_dict)`: a part of the model
        var for _, cls, _, var in found
        if cls in ("Sequential", "ModuleList", "ModuleDict") and any(
            isinstance(n, ast.Name) and n.id == var
            for *_, other, o_var in found if o_var != var
            for a in [*other.args, *(k.value for k in other.keywords)] for n in walk(a)
        )
    }  # fmt: skip
    found = [f for f in found if f[3] not in held] or found
    if found:
        _, cls, node, _ = min(found, key=lambda f: f[0])  # the first outside any class, else the first
        return cls, node
    cli = next((n for n in walk(tree) if isinstance(n, ast.Call) and _callee_name(n) == "LightningCLI"), None)
    cli_model = next(  # (its first argument, or `model_class=`)
        iter([*(cli.args[:1]), *(k.value for k in cli.keywords if k.arg == "model_class")]), None
    ) if cli is not None else None  # fmt: skip
    if isinstance(cli_model, ast.Name) and cli_model.id[:1].isupper():  # `LightningCLI(LitClassifier, MyDataModule)`:
        bare = ast.Call(func=ast.Name(id=cli_model.id, ctx=ast.Load()), args=[], keywords=[])
        return cli_model.id, ast.copy_location(bare, cli_model)  # the CLI builds the model class from its defaults
    if (fitted := _fitted_module(tree)) is not None:
        return fitted
    if (minimized := _minimized_owner(tree)) is not None:
        return minimized
    return _factory_call(ex, tree, ws, ruled_out) if ws is not None else None


def _embeds_tokens(ws: Workspace | None, model: _Model) -> bool:
    """Whether the model's input is tokens looked up in an embedding table (``nn.Embedding``, Keras' ``Embedding``,
    TF1's ``tf.nn.embedding_lookup``) rather than pixels."""
    if model.cls is None:
        return False
    if "embedding" in model.cls.layers:
        return True
    text = ws.read_text_or_none(model.cls.file) if ws is not None and model.cls.file else None
    return bool(text and re.search(r"\bembedding_lookup\(", text))


def _minimized_owner(tree: ast.Module) -> tuple[str, ast.Call] | None:
    """TensorFlow 1: the object whose loss an optimizer minimizes is the model (``cnn = TextCNN(...)`` then
    ``optimizer.compute_gradients(cnn.loss)``, or ``loss = net.loss(batch)`` then ``optimizer.minimize(loss)``);
    its constructor names it."""
    built: dict[str, ast.Call] = {}
    values: dict[str, ast.expr] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, node.value)
            if isinstance(node.value, ast.Call) and _callee_name(node.value)[:1].isupper():
                built.setdefault(node.targets[0].id, node.value)
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and _callee_name(node) in ("minimize", "compute_gradients")):
            continue
        loss = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "loss"), None)
        if isinstance(loss, ast.Name):
            loss = values.get(loss.id)  # `loss = net.loss(...)` before `optimizer.minimize(loss)`
        if isinstance(loss, ast.Call):
            loss = loss.func
        owner = loss.value if isinstance(loss, ast.Attribute) else None
        if isinstance(owner, ast.Name) and (call := built.get(owner.id)) is not None:
            cls = _callee_name(call)
            if cls not in OPTIMIZERS and not cls.endswith(_NOT_MODEL_SUFFIXES) and cls not in _NOT_MODELS:
                return cls, call
    return None


def _moved(call: ast.Call) -> ast.Call:
    """The call under device and mode moves: ``create_model(cfg).cpu()`` → ``create_model(cfg)``."""
    while (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in _SAME_MODULE
        and isinstance(call.func.value, ast.Call)
    ):
        call = call.func.value
    return call


def _unwrapped(call: ast.Call, wrappers: Collection[str] = _WRAPPERS) -> ast.Call:
    """The call that builds the module inside wrappers and device moves: ``DataParallel(MODELS[a]()).cuda()``."""
    call = _moved(call)
    while _is_wrapper(_callee_name(call), wrappers) and call.args and isinstance(call.args[0], ast.Call):
        call = _moved(call.args[0])
    return call


def _fitted_module(tree: ast.Module) -> tuple[str, ast.Call] | None:
    """``trainer.fit(system, ...)`` (Lightning) or ``XTrainer(model, ...)``: the module a trainer fits or is built
    around is the model; its constructor names it."""
    for node in walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _callee_name(node) in ("fit", "train") and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            trainer = (
                _callee_name(owner) == "Trainer" if isinstance(owner, ast.Call) else "trainer" in _dotted_name(owner)
            ) or (isinstance(owner, ast.Name) and _built_by_trainer(tree, owner.id))
            # (`t = SupervisedTrainer(...)` then `t.train(seq2seq, data)`: a trainer object's train() takes the model)
        else:  # `FasterRCNNTrainer(faster_rcnn)`: the module a trainer class is built around
            trainer = _callee_name(node).endswith("Trainer") and _callee_name(node)[:1].isupper()
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "model"), None)
        if not trainer or not isinstance(first, ast.Name):
            continue
        for value in _assigned_values(tree, first.id):
            if (
                isinstance(value, ast.Call)
                and _callee_name(value)[:1].isupper()
                and not _is_wrapper(_callee_name(value))
                and _callee_name(value) not in _NOT_MODELS
                and not _callee_name(value).endswith(_NOT_MODEL_SUFFIXES)
            ):  # fmt: skip  (`Trainer(args, cfg)` after `args = argparse.Namespace(...)` is no model)
                return _callee_name(value), value
    return None


def _assigned_values(tree: ast.AST, name: str) -> list[ast.expr]:
    """What the code assigns to the plain name ``name`` (``x = …`` and ``a = x = …``), in the order of the tree."""
    return [
        n.value for n in walk(tree)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
    ]  # fmt: skip


def _built_by_trainer(tree: ast.Module, name: str) -> bool:
    """Whether ``name`` is assigned an instance of a class named ``…Trainer``."""
    return any(
        isinstance(v, ast.Call) and _callee_name(v).endswith("Trainer") and _callee_name(v)[:1].isupper()
        for v in _assigned_values(tree, name)
    )


_callee_name = callee_name


def _dotted_name(node: ast.expr) -> str:
    return (ast.unparse(node) if isinstance(node, ast.Name | ast.Attribute) else "").lower()


_MODEL_FACTORY: Final = re.compile(
    r"^\s*(?P<var>[\w ,()]*?\w*(?i:model|net)\w*[\w ,()]*?)\s*=\s*(?:(?P<mod>[a-z_]\w*)\.)?(?P<fn>[a-z_]\w*)\(", re.M
)


def _factory_call(
    ex: Extraction, tree: ast.Module, ws: Workspace, ruled_out: Collection[int] = ()
) -> tuple[str, ast.Call] | None:
    """``model, diffusion = create_model_and_diffusion(**opts)``: a function of the job's own modules that builds
    the model; the class it returns (followed through the factories it calls, three deep) names it, and the call
    itself is what the parameter interpreter evaluates. Calls in ``ruled_out`` (an ``if`` arm the settings rule out:
    ``if args.baseline: model = resnet20()`` without ``--baseline``) build nothing."""
    script = ex.launch.script or ""
    resolver = _FunctionResolver(ws, script, tree)
    for m in _MODEL_FACTORY.finditer(ex.code):
        mod, fn = m.group("mod"), m.group("fn")
        found = resolver.module_function(mod, fn, script) if mod else resolver.imported_function(fn, script)
        if found is None:
            continue
        cls = _built_class(resolver, *found, depth=0)
        if cls is None:
            continue
        line = ex.code[: m.start("fn")].count("\n") + 1
        for node in walk(tree):
            if not (isinstance(node, ast.Call) and node.lineno == line) or id(node) in ruled_out:
                continue
            func = node.func
            if (mod is None and getattr(func, "id", None) == fn) or (
                isinstance(func, ast.Attribute) and func.attr == fn and getattr(func.value, "id", None) == mod
            ):  # `model.resnet50(num_classes=80)`: a factory of the job's module `model`
                return cls, node
    return None


def _built_class(resolver: _FunctionResolver, fn: ast.FunctionDef, file: str, depth: int) -> str | None:
    """The class a factory function returns an instance of (a capitalised constructor), or None."""
    if depth > 2:
        return None
    bound: dict[str, ast.expr] = {}
    for stmt in walk(fn):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
    # What every call builds outranks what an `if` arm rebinds (`if args.masks: model = Seg(model)`).
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
    returned = {_callee_name(r.value) for r in walk(fn) if isinstance(r, ast.Return) and isinstance(r.value, ast.Call)}
    if len(returned) > 1:
        return None  # `if conf["type"] == "wide": return Wide(...) elif …: return Plain(...)`: the settings choose
    for stmt in walk(fn):
        if not isinstance(stmt, ast.Return) or stmt.value is None:
            continue
        value = stmt.value.elts[0] if isinstance(stmt.value, ast.Tuple) and stmt.value.elts else stmt.value
        if isinstance(value, ast.Name):
            arms = {
                _callee_name(n.value) for n in walk(fn)
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and any(isinstance(t, ast.Name) and t.id == value.id for t in n.targets)
            }  # fmt: skip
            always = any(
                isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in n.targets)
                for n in fn.body
            )
            if len(arms) > 1 and not always:
                return None  # `if model_type == 'swin': model = SwinTransformer(...) elif ...`: the settings choose
            value = bound.get(value.id, value)
        if not isinstance(value, ast.Call):
            continue
        callee = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
        named = next((k.value for k in value.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)), None)
        if callee in ("Model", "Sequential") and isinstance(named, ast.Constant) and isinstance(named.value, str):
            return named.value  # Keras' functional API: `keras.Model(inputs, outputs, name="unet")` names the model
        if callee in ("Sequential", "ModuleList", "ModuleDict", "Model"):
            return None  # a registry builder's `nn.Sequential(*modules)` fallback (mmcv's build), Keras' unnamed
            # `Model(inputs, outputs)`: no model's name
        if callee[:1].isupper() and not _is_wrapper(callee) and callee not in _NOT_MODELS:
            return str(callee)
        if isinstance(value.func, ast.Name) and (inner := resolver.imported_function(callee, file)) is not None:
            return _built_class(resolver, *inner, depth=depth + 1)
    return None


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _gpt_shape(ex: Extraction) -> str | None:
    parts = [(ex.get(k), s) for k, s in (("n_layer", "L"), ("n_head", "H"), ("n_embd", "d"))]
    if all(v is not None for v, _ in parts):
        return "/".join(f"{v.value}{s}" for v, s in parts if v is not None)
    return None


def _hydra_target(ex: Extraction) -> tuple[str, Value] | None:
    chosen = next(((k, v) for k, v in ex.values.items() if k.endswith("._model_class")), None)
    if chosen is not None:
        return chosen  # the model class declaring the config a `--policy.type=act` choice picked (draccus registry)
    found = ex.find(
        "model.net._target_",
        "model._target_",
        "net._target_",
        "model.target",
        "model.class",
        "agent._target_",
        "agent.class",
    )  # (LDM: target/params; Hydra 0.11: class/params; an RL job's learner is its agent)
    if found is not None and isinstance(found[1].value, str) and "." in found[1].value:
        return found
    return None


def _model_from_target(
    ws: Workspace, ex: Extraction, counter: ParamCounter, found: tuple[str, Value], prov: dict[str, FieldSource]
) -> _Model:
    """A Hydra ``_target_`` class, built with the settings beside it."""
    key, target = found
    module, _, cls = str(target.value).rpartition(".")
    file = f"{module.replace('.', '/')}.py"
    if not ws.exists(file):  # a library's class (`!new:speechbrain.lobes.models.CRDNN.CRDNN`): its name says it
        prov["model_name"] = FieldSource(file=target.source, line=target.line)
        return _Model(cls) if cls[:1].isupper() else _Model()
    mc = find_class(ws, cls, ws.read_text(file), file)
    prefix = key.rsplit(".", 1)[0] if "." in key else ""
    if key.endswith(".class"):
        prefix += ".params"  # Hydra 0.11's `class: agent.sac.SACAgent` with its arguments under `params:`
    kwargs = {
        k[len(prefix) + 1 :]: v.value
        for k, v in ex.values.items()
        if prefix and k.startswith(prefix + ".") and "." not in k[len(prefix) + 1 :] and not k.endswith("_target_")
    }
    count = counter.count_class(file, cls, kwargs)
    sizes = [  # (an agent's integers are its schedule and batch, not its shape)
        str(v) for k, v in kwargs.items() if isinstance(v, int) and not isinstance(v, bool) and key[:6] != "agent."
    ]  # fmt: skip
    prov["model_name"] = FieldSource(file=target.source, line=target.line)
    return _Model(f"{cls} ({'-'.join(sizes)})" if sizes else cls, mc, count)


_DEPTH_ARGS: Final = ("depth", "model_depth", "resnet_depth", "num_layers", "n_layers", "layers")


def _with_depth(cls: str, arguments: dict[str, object]) -> str:
    """``ResNet`` built with ``depth=50`` is ResNet-50 when that is a known architecture (``resnet50``, ``vgg16``,
    ``densenet121``): the family's name and the depth its constructor received."""
    if any(c.isdigit() for c in cls):
        return cls
    for key in _DEPTH_ARGS:
        depth = arguments.get(key)
        if isinstance(depth, int) and not isinstance(depth, bool) and 8 <= depth <= 1001:
            return f"{cls}-{depth}" if known_model(f"{cls.lower()}{depth}") is not None else cls
    return cls


_PARSES_ARGS: Final = re.compile(r"\.parse_(?:known_)?args\(")


def _counted(
    ws: Workspace, ex: Extraction, counter: ParamCounter, node: ast.Call, script: str
) -> tuple[dict[str, Any], int | None, Any]:
    """Count the parameters ``node`` (a call in the entry script) builds, with the values that reach it: (the names'
    values, the count, the value built)."""
    ns = namespace({k: v.value for k, v in ex.values.items()})
    given = (  # module globals the command line sets (nanoGPT's configurator `exec`); with a parser of its own the
        {k: v.value for k, v in ex.values.items() if v.source != script and "." not in k}  # command line sets only
        if not _PARSES_ARGS.search(ex.code)  # the parser's namespace, never a global (`model = models.__dict__[…]`)
        else {}
    )
    counter.bind_settings(script, ns, given)  # `opt = parser.parse_args()` at module level, read by its classes
    env = counter.values_at(node, script, ns)  # `num_classes = 1000 if args.dataset == "imagenet" else 100`
    counter.bind_main_block(script, node, env)  # `d_model = 512` in the `__main__` block, read by the classes
    for name in {n.id for n in walk(node) if isinstance(n, ast.Name)} - set(dir(builtins)):
        held = env.get(name, UNKNOWN)
        if held is UNKNOWN or (isinstance(held, tuple) and held[:1] == ("ext",) and str(held[-1]).endswith(".FLAGS")):
            env[name] = ns  # `args.classes`, `hps.data.hop_length`, `cfg.model`, absl's `FLAGS.ch`: the settings
    try:
        after = _changes_after(parse(ex.code), node.lineno)
    except SyntaxError:
        after = None
    count = counter.count_call_or_defaults(node, env, script, after)
    return env, count, counter.built


def _changes_after(tree: ast.Module, line: int) -> tuple[str, list[ast.stmt]] | None:
    """The name the model is bound to at ``line`` (``model = models.resnet18(weights=…)``) and the statements after
    it in the same block, where a job changes what it built (``model.fc = nn.Linear(model.fc.in_features, 2)``)."""
    for node in walk(tree):
        for body in (getattr(node, field, None) for field in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if (
                    isinstance(stmt, ast.Assign) and stmt.lineno == line and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                ):  # fmt: skip
                    return stmt.targets[0].id, body[i + 1 : i + 201]
    return None


def _model_from_call(
    ws: Workspace, ex: Extraction, counter: ParamCounter, call: tuple[str, ast.Call], prov: dict[str, FieldSource]
) -> _Model:
    """``model = Cls(...)`` in the entry script, its arguments read from the merged settings."""
    script = ex.launch.script or ""
    cls, node = call
    mc = find_class(ws, cls, ex.code, script)
    if mc is None:  # a factory the entry imports returns it: the class is defined in one of the job's modules
        mc = next((find_class(ws, cls, text, path) for path, text in ex.modules
                   if re.search(rf"^class {re.escape(cls)}\b", text, re.M)), None)  # fmt: skip
    if mc is None and cls in ("Sequential", "ModuleList", "ModuleDict"):  # a model built inline
        mc = inline_model(node, script)
        cls = f"{cls} ({', '.join(dict.fromkeys(c for c in mc.layer_calls if c not in _ACTIVATIONS))})"
    _, count, built = _counted(ws, ex, counter, node, script)
    if mc is not None and count is not None and counter.library_builders:
        chosen = counter.library_builders[0]  # the backbone the count built (TSM's `getattr(models, arch)` arm), not
        mc.backbones.sort(key=lambda b: b[0] != chosen)  # the first one its source mentions (a MobileNet arm)
        if not any(b[0] == chosen for b in mc.backbones) and (hit := known_model(chosen)) is not None:
            mc.backbones.insert(0, (chosen, hit[1]))
    if count is not None:
        for other in _co_trained(ex, node):  # `Adam(list(encoder.parameters()) + list(decoder.parameters()))`
            more = _counted(ws, ex, counter, other, script)[1]
            if more is None:
                break
            count += more
    prov["model_name"] = FieldSource(file=script, line=node.lineno)
    inner = counter.dominant_part(built) if _is_lightning_module(built) or _is_plain_class(built) else None
    kinds = _layer_kinds(counter, built) if count is not None else None  # (attention built by hand: a marker)
    handed = {_callee_name(a) for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Call)}
    if inner is None and handed and (part := counter.dominant_part(built)) in handed:  # `RF(MMDiT(...))`: a training
        return _Model(f"{part} ({cls})", mc, count, kinds)  # wrapper handed the network it trains, which it names
    if inner is not None:  # a LightningModule that trains a model of the job's: that model names it, or the setting
        named = next(  # that chose that model (`--classifier resnet18` keys `all_classifiers`: a variant of ResNet)
            (v.value for v in ex.values.values() if isinstance(v.value, str)
             and re.fullmatch(r"[A-Za-z][\w-]{1,30}", v.value) and re.search(r"\d", v.value)
             and _variant_of(v.value, inner)), None)  # fmt: skip
        return _Model(named or inner, mc, count, kinds)
    key = ex.uses.get("registry_key")
    if key is not None and key.line == node.lineno and isinstance(key.value, str) and _variant_of(key.value, cls):
        return _Model(key.value, mc, count, kinds)  # `create_by_name("RepVGG-A0")` builds a RepVGG: the key says which
    if (stem := _config_stem(cls, built, counter)) is not None:
        return _Model(stem, mc, count, kinds, from_config=True)
    if _GENERIC_CLASS.fullmatch(cls) and mc is not None and (wrapped := _wrapped_network(ws, mc)) is not None:
        return _Model(wrapped, mc, count, kinds)  # `class Model(LightningModule): self.gnn = GraphSAGE(...)`
    return _Model(_with_depth(cls, counter.arguments.get(cls, {})), mc, count, kinds)


# What a training wrapper builds beside the network it trains: heads, normalisation, metrics
_HEAD_LAYERS: Final = frozenset({"Linear", "MLP", "Dropout", "BatchNorm1d", "LayerNorm", "Identity", "Sequential",
                                 "ModuleList", "ModuleDict", "Embedding", "ReLU", "GELU", "Softmax"})  # fmt: skip
_NOT_NETWORK_PACKAGES: Final = re.compile(r"^(?:torch\.nn|torch|torchmetrics|torch\.nn\.functional)(?:\.|$)")


def _wrapped_network(ws: Workspace, mc: ModelClass) -> str | None:
    """The one imported network a job class of a generic name (``Model``, ``Net``) builds and holds besides heads,
    normalisation and metrics (PyG's ``class Model(pl.LightningModule): self.gnn = GraphSAGE(...)``; ``self.classifier
    = MLP(...)``, ``self.train_acc = Accuracy(...)``): that network names what is trained; None when the class builds
    its own layers or holds several imported networks."""
    text = ws.read_text_or_none(mc.file) if mc.file else None
    try:
        tree = parse(text) if text else None
    except (SyntaxError, ValueError):
        return None
    if tree is None:
        return None
    holder = next((c for c in walk(tree) if isinstance(c, ast.ClassDef) and c.lineno == mc.line), None)
    if holder is None:
        return None
    imported = {
        alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) and node.module
        and not _NOT_NETWORK_PACKAGES.match(node.module) for alias in node.names
    }  # fmt: skip
    init = next((f for f in holder.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    networks: list[str] = []
    for stmt in walk(init) if init is not None else ():
        if not (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _self_owner(stmt.targets[0]) is not None
            and isinstance(stmt.value, ast.Call)
        ):  # fmt: skip
            continue
        name = _callee_name(stmt.value)
        if not name[:1].isupper() or name in _HEAD_LAYERS or name.endswith(("Loss", "Accuracy", "Metric", "Score")):
            continue
        if name not in imported or isinstance(stmt.value.func, ast.Attribute):
            return None  # a layer of torch.nn (`nn.Conv2d`) or a class of this module: the wrapper builds its own
        networks.append(name)
    return networks[0] if len(networks) == 1 else None


_GENERIC_CLASS: Final = re.compile(r"(?i)(?:detection|base)?(?:model|net|network)")
_GENERIC_STEM: Final = re.compile(r"(?i)config|default|model|base|train|hyp.*")


def _config_stem(cls: str, built: Any, counter: ParamCounter) -> str | None:
    """The name of the model config file a class of a generic name is built from (YOLO's ``Model(cfg)`` with
    ``models/detect/gelan-c.yaml``: "gelan-c"): its first argument, a YAML file the constructor read."""
    if not _GENERIC_CLASS.fullmatch(cls) or not isinstance(built, Obj):
        return None
    given = counter.arguments.get(built.cls, {})
    first = next(iter(given.values()), None)
    if not (isinstance(first, str) and first.endswith((".yaml", ".yml"))):
        return None
    stem = posixpath.splitext(posixpath.basename(first))[0]
    return stem if stem and not _GENERIC_STEM.fullmatch(stem) else None


def _co_trained(ex: Extraction, node: ast.Call) -> list[ast.Call]:
    """The constructor calls of the other modules one optimizer trains together with the module ``node`` builds
    (NRI's ``optim.Adam(list(encoder.parameters()) + list(decoder.parameters()))``, SfMLearner's parameter groups):
    each bound to a name once in the entry (in the arms the settings leave), by a class of the job's (capitalised),
    not a wrapper or a container."""
    try:
        tree = parse(ex.code)
    except SyntaxError:
        return []
    ruled_out = _entry_arms_ruled_out(tree, ex)  # `if args.decoder == 'mlp': decoder = MLPDecoder(...) elif ...`
    assigned: dict[str, list[ast.expr]] = {}
    for stmt in walk(tree):
        if (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and id(stmt) not in ruled_out
        ):  # fmt: skip
            assigned.setdefault(stmt.targets[0].id, []).append(stmt.value)
    var = next(
        (n for n, values in assigned.items()
         if any(v is node or (isinstance(v, ast.Call) and _unwrapped(v) is node) for v in values)),
        None,
    )  # fmt: skip
    if var is None:
        return []
    for call in walk(tree):
        if not (isinstance(call, ast.Call) and _builds_optimizer(call)):
            continue
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "params"), None)
        if isinstance(first, ast.Name) and len(assigned.get(first.id, ())) == 1:
            first = assigned[first.id][0]
        owners = _parameter_owners(first) if first is not None else []
        if var not in owners:
            continue
        others = []
        for name in (o for o in owners if o != var):
            built = [
                _unwrapped(v)
                for v in assigned.get(name, [])
                if isinstance(v, ast.Call)
                and not any(isinstance(a, ast.Name) and a.id == name for a in _unwrapped(v).args)
            ]  # (`disp_net = DataParallel(disp_net)` wraps the module built before, `.to(device)` moves it)
            if len(built) != 1:
                return []
            cls = _callee_name(built[0])
            if not cls[:1].isupper() or _is_wrapper(cls) or cls in _CONTAINERS:
                return []
            others.append(built[0])
        return others[:4]
    return []


def _variant_of(key: str, cls: str) -> bool:
    """Whether a registry key names a variant of the class (``RepVGG-A0`` of ``RepVGG``, ``resnet50`` of ``ResNet``)."""
    k, c = (re.sub(r"[^a-z0-9]", "", x.lower()) for x in (key, cls))
    return len(c) >= 3 and k.startswith(c) and len(k) > len(c)


def _model_in_training_callee(
    ws: Workspace, ex: Extraction, counter: ParamCounter, prov: dict[str, FieldSource]
) -> _Model:
    """The model a thin entry's training function builds (`@hydra.main def main(cfg): train(cfg)`, with
    ``model = DeepSpeech(...)`` and ``trainer.fit(model, ...)`` in the job module that defines ``train``)."""
    for module in ex.training_modules:  # (found once, where the settings were collected)
        text = ws.read_text_or_none(module)
        if not text:
            continue
        sub = dataclasses.replace(ex, code=text, launch=dataclasses.replace(ex.launch, script=module))
        call = _model_call(sub, ws)
        if call is not None:
            model = _model_from_call(ws, sub, counter, call, prov)
            if model.count is None and (size := _size_through_holder(ws, ex, counter, text, call[1])) is not None:
                model = _Model(model.name, model.cls, size, model.kinds)
            return model
        built = _model_from_factory(ws, sub, counter, prov)  # `model = model_utils.load(opt)`: a job function builds it
        if built.name is not None:
            return built
    return _Model()


def _size_through_holder(ws: Workspace, ex: Extraction, counter: ParamCounter, text: str, node: ast.Call) -> int | None:
    """``self.G = Generator(self.batch_size, self.imsize, ...)`` in a method of a class of the job's (a ``Trainer``
    that keeps its settings: ``self.imsize = config.imsize``), which the entry builds (``Trainer(loader, config)``):
    the parameters of that attribute once the class is built as the entry builds it, or None."""
    try:
        tree = parse(text)
        entry = parse(ex.code)
    except (SyntaxError, ValueError):
        return None
    holder = next((c for c in walk(tree) if isinstance(c, ast.ClassDef)
                   and c.lineno <= node.lineno <= (c.end_lineno or c.lineno)), None)  # fmt: skip
    owner = next((_self_owner(a.targets[0]) for a in walk(holder) if isinstance(a, ast.Assign) and len(a.targets) == 1
                  and isinstance(a.value, ast.Call) and _moved(a.value) is node), None) if holder else None  # fmt: skip
    if holder is None or owner is None or "[" in owner:
        return None
    for built_here in walk(entry):
        if (
            isinstance(built_here, ast.Assign)
            and isinstance(built_here.value, ast.Call)
            and (_callee_name(built_here.value) == holder.name)
        ):
            return _part_of_holder(ws, ex, counter, built_here.value, owner)
    return None


def _part_of_holder(ws: Workspace, ex: Extraction, counter: ParamCounter, holder: ast.Call, owner: str) -> int | None:
    """The parameters of attribute ``owner`` of the object the entry's call ``holder`` builds (``Trainer(loader,
    config)`` keeps its settings and builds ``self.G`` from them), built as the entry builds it; None if unknown."""
    built = _counted(ws, ex, counter, holder, ex.launch.script or "")[2]
    return counter.size_of(built.attrs.get(owner)) if isinstance(built, Obj) else None


def _self_owner(expr: ast.AST) -> str | None:
    """``self.online_net`` or ``self.models["encoder"]``: the attribute (and key) of ``self`` an expression reads."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        inner = _self_owner(expr.value)
        return f"{inner}[{expr.slice.value}]" if inner else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _trained_attributes(cls: ast.ClassDef) -> list[str]:
    """The attributes of ``self`` whose parameters an optimizer built in the class's methods trains: ``Adam(self.
    online_net.parameters())``, or a list of parameters the class gathers (``self.params += list(self.models["enc"].
    parameters())`` then ``Adam(self.params, lr)``)."""
    gathered: dict[str, list[ast.AST]] = {}
    for node in walk(cls):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (name := _self_owner(t)) is not None:
                    gathered.setdefault(name, []).append(node.value)
    out: list[str] = []
    for node in walk(cls):
        if not (isinstance(node, ast.Call) and _builds_optimizer(node)):
            continue
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), None)
        sources: list[ast.AST] = [first] if first is not None else []
        if first is not None and (held := _self_owner(first)) is not None:
            sources = gathered.get(held, [])
        for src in sources:
            for call in walk(src):
                if (
                    isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in _PARAMETERS and (owner := _self_owner(call.func.value)) is not None
                    and owner not in out
                ):  # fmt: skip
                    out.append(owner)
    return out


def _model_in_job_class(ws: Workspace, ex: Extraction, counter: ParamCounter, prov: dict[str, FieldSource]) -> _Model:
    """The network a class of the job's builds and trains, when the entry only builds that class (an RL ``Agent``, a
    ``Trainer`` holding ``self.models``): the class of the first attribute its optimizer trains."""
    try:
        tree = parse(ex.code)
    except (SyntaxError, ValueError):
        return _Model()
    for built_by, found, holder, text in _built_job_classes(ws, ex, tree):
        if found.file is None:
            continue
        ruled_out = _arms_ruled_out(holder, ex)
        for owner in _trained_attributes(holder):
            for stmt in walk(holder):
                if (
                    isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _self_owner(stmt.targets[0]) == owner
                    and isinstance(stmt.value, ast.Call) and (built := _callee_name(_moved(stmt.value)))[:1].isupper()
                    and not _is_wrapper(built) and id(stmt) not in ruled_out
                ):  # fmt: skip
                    prov["model_name"] = FieldSource(file=found.file, line=stmt.lineno)
                    cls = find_class(ws, built, text or "", found.file) or _class_anywhere(ws, built)
                    count = counter.count_call(_moved(stmt.value), {}, found.file)  # literal arguments can be counted
                    if count is None and "." not in owner and "[" not in owner:
                        # arguments from the settings the holder keeps (`self.imsize = config.imsize`): build the
                        # holder as the entry does and take the part its optimizer trains
                        count = _part_of_holder(ws, ex, counter, built_by, owner)
                    return _Model(built, cls, count)
    return _Model()


def _built_job_classes(
    ws: Workspace, ex: Extraction, tree: ast.Module, aliases: dict[str, str] | None = None
) -> Iterator[tuple[ast.Call, ModelClass, ast.ClassDef, str | None]]:
    """The entry's ``x = C(...)`` of a class of the job's (``aliases``: names bound to classes, ``Exp = Exp_Main``):
    the call, the class found, its definition and its module's text."""
    script = ex.launch.script or ""
    for node in walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        name = _callee_name(node.value)
        name = (aliases or {}).get(name, name)
        if not name[:1].isupper() or name in _NOT_MODELS:
            continue
        found = find_class(ws, name, ex.code, script)
        text = ws.read_text_or_none(found.file) if found is not None and found.file else None
        try:
            module = parse(text) if text else None
        except (SyntaxError, ValueError):
            module = None
        holder = next(
            (c for c in walk(module) if isinstance(c, ast.ClassDef) and found and c.lineno == found.line), None
        ) if module is not None else None  # fmt: skip
        if holder is not None and found is not None:
            yield node.value, found, holder, text


def _count_in_holder(ws: Workspace, ex: Extraction, counter: ParamCounter) -> tuple[int, dict[str, int]] | None:
    """The parameters of the network a harness object of the job's trains, when the entry only builds the harness
    with the settings (``Exp = Exp_Informer; exp = Exp(args); exp.train(setting)``, the time-series libraries'
    ``Exp_*`` whose base class sets ``self.model = self._build_model()`` from ``model_dict[self.args.model]``): the
    harness is built as the entry builds it and the attribute its optimizer trains is counted; None where it cannot
    be. (Count, that network's parameters by layer family.)"""
    script = ex.launch.script or ""
    try:
        tree = parse(ex.code)
    except (SyntaxError, ValueError):
        return None
    aliases = {  # `Exp = Exp_Informer`: a name bound to a class, then called
        stmt.targets[0].id: stmt.value.id for stmt in walk(tree)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Name) and stmt.value.id[:1].isupper()
    }  # fmt: skip
    for built_by, _, holder, _ in _built_job_classes(ws, ex, tree, aliases):
        owners = [o for o in _trained_attributes(holder) if "." not in o and "[" not in o]
        if not owners:
            continue
        built = _counted(ws, ex, counter, built_by, script)[2]
        part = built.attrs.get(owners[0]) if isinstance(built, Obj) else None
        size = counter.size_of(part) if part is not None else None
        if size:
            kinds = dict(counter.kinds(part))
            if _attends(part):
                kinds["attention"] = kinds.get("attention", 0) + 1  # attention built by hand from linear layers
            return size, kinds
    return None


def _layer_kinds(counter: ParamCounter, built: Any = None) -> dict[str, int]:
    """The layer families of ``built`` (by default what :meth:`ParamCounter.count_class` built last), with attention
    marked where a module of a class named for attention holds linear layers (see :func:`_attends`)."""
    built = counter.last_built if built is None else built
    kinds = counter.kinds(built)
    if kinds and _attends(built):
        kinds["attention"] = kinds.get("attention", 0) + 1
    return kinds


def _attends(built: Any, budget: int = 5000) -> bool:
    """Whether an object the counter built holds, at any depth, a module of a class named for attention
    (Informer's `ProbAttention`, PatchTST's `_MultiheadAttention`): linear layers that are a transformer's."""
    seen: set[int] = set()
    stack = [built]
    while stack and len(seen) < budget:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Obj):
            if re.search(r"Attention|Attn", obj.cls):
                return True
            stack.extend(obj.attrs.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
    return False


def _entry_arms_ruled_out(tree: ast.Module, ex: Extraction) -> set[int]:
    """Nodes of the entry script in an ``if`` arm its settings rule out: ``if args.sparse:`` with ``--sparse`` off,
    ``if not args.x:``, ``if args.model == "gat":`` (a test on a command-line setting whose value is known)."""
    out: set[int] = set()
    bound: dict[str, list[ast.expr]] = {}  # `CIFAR = args.cifar` then `if CIFAR:`: the name stands for the setting
    for node in walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    for node in walk(tree):
        if not isinstance(node, ast.If):
            continue
        test, negate = node.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negate = test.operand, True
        if (
            isinstance(test, ast.Name)
            and len(held := bound.get(test.id, [])) == 1
            and isinstance(held[0], ast.Attribute)
        ):
            test = held[0]
        truth: bool | None = None
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
            v = ex.get(test.attr)
            truth = bool(v.value) if v is not None and isinstance(v.value, bool | int | str) else None
        elif (
            isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.NotEq)
            and isinstance(test.left, ast.Attribute) and isinstance(test.left.value, ast.Name)
            and isinstance(test.comparators[0], ast.Constant)
        ):  # fmt: skip
            v = ex.get(test.left.attr)
            if v is not None and isinstance(v.value, bool | int | str):
                truth = (v.value == test.comparators[0].value) is isinstance(test.ops[0], ast.Eq)
        if truth is None:
            continue
        dead = node.orelse if (truth is not negate) else node.body
        out |= {id(n) for stmt in dead for n in walk(stmt)}
    for node in walk(tree):  # and an arm the use-site pass found dead (`if args.imb_algorithm is not None:` with the
        if not isinstance(node, ast.If):  # setting unset) where the live arm builds the same name anew; a live arm
            continue  # that loads it (`if checkpoint is None: model = Transformer(...) else: model = ckpt["model"]`)
        for dead, live in ((node.body, node.orelse), (node.orelse, node.body)):  # says nothing of its class
            if dead and all(_on_dead_line(ex, s.lineno) for s in dead) and _built_names(dead) & _built_names(live):
                out |= {id(n) for stmt in dead for n in walk(stmt)}
    return out


def _built_names(stmts: list[ast.stmt]) -> set[str]:
    """Names the statements bind to a call's result (``model = get_algorithm(args)``)."""
    return {
        t.id for stmt in stmts for n in walk(stmt)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) for t in n.targets if isinstance(t, ast.Name)
    }  # fmt: skip


def _arms_ruled_out(cls: ast.ClassDef, ex: Extraction) -> set[int]:
    """Statements of a class in ``if self.model_type == "U_Net": … elif …`` arms the settings rule out: the class
    copies the setting in (``self.model_type = config.model_type``) and the command or its defaults give its value."""
    copied: dict[str, str] = {}  # self attribute → the setting it copies
    for node in walk(cls):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and (attr := _self_owner(node.targets[0]))
            and isinstance(node.value, ast.Attribute)
        ):  # fmt: skip
            copied.setdefault(attr, node.value.attr)
    out: set[int] = set()
    for node in walk(cls):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
            continue
        attr, const = _self_owner(node.test.left), node.test.comparators[0]
        if attr not in copied or not isinstance(const, ast.Constant) or not isinstance(node.test.ops[0], ast.Eq):
            continue
        setting = ex.get(copied[attr])
        if setting is None or not isinstance(setting.value, str | int):
            continue
        dead = node.body if setting.value != const.value else []  # the arm for another value cannot run
        out |= {id(n) for stmt in dead for n in walk(stmt)}
    return out


_VIT_BLOCKS: Final = re.compile(
    r"^\s*from\s+timm\.models\.(?:vision_transformer|vit|deit|swin_transformer)\w*\s+import", re.M
)


def _origin_file(built: Obj) -> str | None:
    """The file of the job's class an object was built from (``("def", ClassDef, file)``)."""
    origin = built.origin
    return origin[2] if isinstance(origin, tuple) and len(origin) == 3 and isinstance(origin[2], str) else None


def _type_by_blocks(ws: Workspace | None, model: _Model, ex: Extraction) -> str | None:
    """A model whose module builds it from a vision transformer's blocks (``from timm.models.vision_transformer
    import Block``): a vision transformer, whatever else it adds (MAR's diffusion head). The module is the class's, or
    (a registry's builder function, ``mar.__dict__[args.model]``) the job module defining the builder."""
    file = model.cls.file if model.cls is not None else model.file
    text = ws.read_text_or_none(file) if ws is not None and file else None
    if text is None and model.cls is None and model.name and re.fullmatch(r"\w+", model.name):
        builder = re.compile(rf"^def {re.escape(model.name)}\(", re.M)
        text = next((t for _, t in ex.modules[:40] if builder.search(t)), None)
    return "vision_transformer" if text and _VIT_BLOCKS.search(text) else None


def _attention_over_patches(kinds: dict[str, int]) -> bool:
    """Whether a counted network that has convolutions attends and holds at least 80 % of its parameters in linear
    layers (a ViT with a patch-embedding convolution; a CNN with attention modules keeps most in convolutions)."""
    total = sum(kinds.values())
    return total > 0 and kinds.get("attention", 0) > 0 and kinds.get("linear", 0) >= 0.8 * total


def _patches_through_linear(kinds: dict[str, int]) -> bool:
    """Whether a counted network's only convolutions cut the image into patches and linear layers hold at least
    80 % of its parameters: tokens of patches mixed by linear blocks (GFNet's global filters, MLP-Mixer), the ViT
    family's shape, not a CNN (whose convolutions slide over overlapping windows)."""
    total = sum(kinds.values())
    return total > 0 and kinds.get("patch", 0) > 0 and not kinds.get("conv") and kinds.get("linear", 0) >= 0.8 * total


def _type_by_layers(model: _Model) -> str | None:
    """The family of the counted model by where its parameters are: convolutions and no recurrent layers, or mostly
    convolutions (a CNN, also with attention modules among them), recurrent layers (an RNN), or only linear layers (an
    MLP); None when it is mixed or attention-based (no guess)."""
    kinds = model.kinds or {}
    total = sum(kinds.values())
    if total <= 0:
        return None
    conv = kinds.get("conv", 0) + kinds.get("patch", 0)
    if kinds.get("attention", 0) > 0:  # attention modules among mostly convolutions (VAN's large-kernel attention,
        return "cnn" if conv >= 0.5 * total else None  # SE/CBAM blocks): a CNN; else no guess
    if _patches_through_linear(kinds):
        return "vision_transformer"
    if conv >= 0.5 * total or (conv > 0 and kinds.get("rnn", 0) == 0):
        return "cnn"  # (VGG's and SphereFace's fully connected layers outweigh their convolutions: still CNNs)
    if kinds.get("rnn", 0) >= 0.5 * total:
        return "rnn"
    if kinds.get("linear", 0) + kinds.get("norm", 0) >= 0.95 * total:
        return "mlp"
    return None


def _reached_text(ws: Workspace, ex: Extraction, model: _Model) -> str:
    """Where a classifier's loss may be written besides the entry: the modules it reaches, its settings, the file of
    the model's class and the job's modules its config instantiates by path."""
    parts = [t for _, t in ex.modules[:30]]
    parts += [f"{k}: {v.value}" for k, v in ex.values.items()]
    if model.cls is not None and model.cls.file:
        parts.append(ws.read_text_or_none(model.cls.file) or "")
    return "\n".join([*parts, *_target_texts(ws, ex)])


def _target_texts(ws: Workspace, ex: Extraction, limit: int = 10) -> list[str]:
    """The job's own modules its config instantiates by path (Hydra's ``_target_: src.models.mnist_module.Cls``)."""
    out: list[str] = []
    for key, v in ex.values.items():
        if len(out) >= limit:
            break
        if key.endswith("_target_") and isinstance(v.value, str) and "." in v.value:
            found = ws.module_file(v.value.rsplit(".", 1)[0], 0, ex.launch.script or "")
            if found is not None and (text := ws.read_text_or_none(found)):
                out.append(text)
    return out


def _class_bases(built: object) -> list[str] | None:
    """The bases (as written) of the job's class an evaluated object was built from; None if it is none."""
    origin = built.origin if isinstance(built, Obj) else None
    if not (isinstance(origin, tuple) and len(origin) == 3 and isinstance(origin[1], ast.ClassDef)):
        return None
    return [ast.unparse(b) for b in origin[1].bases]


def _is_plain_class(built: object) -> bool:
    """A class of the job's that is no module (``class Solver(object)`` holding ``self.net = BetaVAE_H(...)``): a
    harness around the model, which is what it holds."""
    bases = _class_bases(built)
    return bases is not None and all(b == "object" for b in bases)


def _is_lightning_class(ex: Extraction, name: str) -> bool:
    """Whether ``name`` is a class of the job's that subclasses Lightning's ``LightningModule`` (a training harness
    that builds the network, not the network)."""
    pattern = re.compile(rf"^class {re.escape(name)}\(\s*(?:\w+\.)*LightningModule\b", re.M)
    return any(pattern.search(text) for text in [ex.code, *(t for _, t in ex.modules[:40])])


_NAME_KEYS: Final = ("model._name_", "model.name", "model._target_name")


def registered_source(ex: Extraction) -> FieldSource:
    """Where the setting that chose a path-registered model is (for provenance)."""
    v = next((ex.values[k] for k in _NAME_KEYS if k in ex.values), None)
    return _source(v) if v is not None else FieldSource(file=ex.launch.script or "")


def _path_registered_model(ws: Workspace, ex: Extraction, counter: ParamCounter) -> _Model | None:
    """The network a model section's name selects from a registry of import paths in the job's code (safari's
    ``model = {"lm": "src.models.sequence.long_conv_lm.ConvLMHeadModel", …}`` with ``model._name_: lm``): the class
    at that path, counted with the section's settings as its arguments."""
    chosen = next((ex.values[k] for k in _NAME_KEYS if k in ex.values), None)
    if chosen is None or not isinstance(chosen.value, str) or not re.fullmatch(r"[\w.-]{1,64}", chosen.value):
        return None
    entry = re.compile(rf"""['"]{re.escape(chosen.value)}['"]\s*:\s*['"]((?:\w+\.)+)(\w+)['"]""")
    texts = [*ex.modules[:60]]
    for n, file in enumerate(ws.files((".py",))):
        if n >= 800 or len(texts) >= 80:
            break
        if re.search(r"(?:^|/)regist\w*\.py$", file) and (text := ws.read_text_or_none(file)):
            texts.append((file, text))
    for _, text in texts:
        if (m := entry.search(text)) is None:
            continue
        module, cls = m[1].rstrip("."), m[2]
        found = next((f for f in (f"{module.replace('.', '/')}.py", f"{module.replace('.', '/')}/__init__.py")
                      if ws.exists(f)), None)  # fmt: skip
        kwargs: dict[str, Any] = {}
        for key, v in ex.values.items():  # the section's settings, nested (`model.layer.l_max` → layer={l_max: …})
            if key.startswith("model.") and key not in _NAME_KEYS:
                *path, leaf = key[len("model.") :].split(".")
                at = kwargs
                for p in path:
                    at = at.setdefault(p, {}) if isinstance(at.get(p, {}), dict) else {}
                at[leaf] = v.value
        count = counter.count_class(found, cls, kwargs) if found is not None else None
        return _Model(cls, None, count, _layer_kinds(counter) if count else None, file=found)
    return None


def _is_lightning_module(built: object) -> bool:
    return any(b.rsplit(".", 1)[-1] == "LightningModule" for b in _class_bases(built) or [])


_SAME_MODULE: Final = frozenset({"cuda", "cpu", "to", "eval", "train", "half", "float", "double", "bfloat16"})


def _bound_name(target: ast.expr) -> str:
    """The name an assignment binds: ``model`` of ``model = …`` and of a trainer's ``self.model = …``."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target.attr
    return ""


def _on_dead_line(ex: Extraction, line: int) -> bool:
    """Whether ``line`` of the entry script sits in an arm its settings rule out (``dead_lines``)."""
    dead = ex.uses.get("dead_lines")
    return (
        dead is not None and dead.file == ex.launch.script and isinstance(dead.value, tuple)
        and any(first <= line <= last for first, last in dead.value)
    )  # fmt: skip


def _model_from_factory(ws: Workspace, ex: Extraction, counter: ParamCounter, prov: dict[str, FieldSource]) -> _Model:
    """``net = get_network(args)``: a function of the job that builds the model however it likes (imports inside
    it, branches on the settings); the interpreter follows it, and the class of what it returns names the model."""
    script = ex.launch.script or ""
    try:
        tree = parse(ex.code)
    except SyntaxError:
        return _Model()
    module_env = counter.module_env(script)
    ruled_out = _entry_arms_ruled_out(tree, ex)
    for node in walk(tree):
        if id(node) in ruled_out:  # `if args.imb_algorithm is not None: model = …` with the setting unset
            continue
        if not (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
            and re.search(r"model|net", _bound_name(node.targets[0]), re.I)
        ):  # fmt: skip
            continue
        inner = _moved(node.value)  # `create_model(cfg).cpu()`: nn.Module's device and mode methods return the module
        if isinstance(inner.func, ast.Attribute) and isinstance(inner.func.value, ast.Name):
            # `cfg = getattr(models, args.model)` then `cfg.base(...)`: a class attribute of the job's config class a
            # setting chose holds the model's class; `model_utils.load(opt)`: a function of a job module
            assigned = _assigned_values(tree, inner.func.value.id)
            held = module_env.get(inner.func.value.id)
            of_module = isinstance(held, tuple) and len(held) == 2 and held[0] == "module" and bool(held[1])
            fn = counter.module_env(str(held[1])).get(inner.func.attr) if of_module and held else None
            job_function = isinstance(fn, tuple) and fn[0] == "def" and isinstance(fn[1], ast.FunctionDef)
            if not job_function and not any(isinstance(v, ast.Call) and _callee_name(v) == "getattr" for v in assigned):
                continue
        elif (
            isinstance(inner.func, ast.Call) and _callee_name(inner.func) == "getattr" and len(inner.func.args) == 2
            and isinstance(inner.func.args[0], ast.Name)
        ):  # fmt: skip
            held = module_env.get(inner.func.args[0].id)  # `getattr(deeplab, 'resnet101')(...)`: the job's module's
            if not (isinstance(held, tuple) and held and held[0] == "module"):  # function or class, named by a
                continue  # literal or a setting (`getattr(net_sphere, args.net)()`: the interpreter reads which)
        elif not isinstance(inner.func, ast.Name):
            continue
        else:
            fn = module_env.get(inner.func.id)
            if not (isinstance(fn, tuple) and fn[0] == "def" and isinstance(fn[1], ast.FunctionDef)) and not (
                _bound_to_registry(tree, inner.func.id)
            ):
                continue  # (a job function, or `model = models.__dict__[args.model]` then `model = model(**cfg)`:
            # a constructor a setting chose from a registry; a class constructor was already looked for)
        _, count, built = _counted(ws, ex, counter, node.value, script)
        if isinstance(built, Obj) and built.cls and count is not None:
            prov["model_name"] = FieldSource(file=script, line=node.lineno)
            key = ex.uses.get("registry_key")
            if (
                key is not None
                and key.line == node.lineno
                and isinstance(key.value, str)
                and _variant_of(key.value, built.cls)
            ):  # fmt: skip  (`create_by_name("RepVGG-A0")` built a RepVGG: the key says which)
                return _Model(key.value, None, count, _layer_kinds(counter, built), file=_origin_file(built))
            return _Model(built.cls, None, count, _layer_kinds(counter, built), file=_origin_file(built))  # (a known
            # architecture a setting names
            # still names it; where its parameters sit says its family)
    return _Model()


_TYPE_LEAVES: Final = frozenset(
    {"type", "name", "arch", "model", "model_name", "network", "net", "class_name", "which_model", "net_type",
     "meta_architecture"}
)  # fmt: skip
_MODEL_PATH: Final = re.compile(r"model|net|arch|generator|backbone", re.I)
_MODEL_FILE: Final = re.compile(r"model|net|arch|generator|backbone|layers|modules|detector", re.I)


_MM_WRAPPERS: Final = frozenset({"ImageClassifier", "EncoderDecoder", "CascadeEncoderDecoder", "Recognizer2D",
                                  "Recognizer3D", "TopdownPoseEstimator", "TopDown"})  # fmt: skip
_MM_NAME: Final = re.compile(r"[A-Za-z_][\w-]{1,63}")


def _bound_to_registry(tree: ast.Module, name: str) -> bool:
    """Whether ``name`` is assigned an entry of a registry chosen by a setting: ``models.__dict__[args.model]``,
    ``MODELS[args.arch]`` or ``getattr(models, args.arch)`` (a key that is not a literal)."""
    for v in _assigned_values(tree, name):
        if isinstance(v, ast.Subscript) and not isinstance(v.slice, ast.Constant):
            return True
        if isinstance(v, ast.Call) and _callee_name(v) == "getattr" and len(v.args) == 2:
            return not isinstance(v.args[1], ast.Constant)
    return False


def _model_from_openmmlab(ex: Extraction, prov: dict[str, FieldSource]) -> _Model:
    """An OpenMMLab config's model (``model = dict(type=..., backbone=dict(type="ResNet", depth=50), ...)``) whose
    registry classes the job does not define: the backbone with its depth ("ResNet-50"), under the detector or the
    decode head that makes it a named architecture ("FasterRCNN (ResNet-50)", "SegFormer (mit_b2)"). A classifier
    wrapper around a known backbone counts as that backbone (torchvision's table counts its 1000-class head)."""
    backbone, depth = ex.get("model.backbone.type"), ex.get("model.backbone.depth")
    kind = ex.get("model.type")
    if backbone is None or not isinstance(backbone.value, str) or not _MM_NAME.fullmatch(backbone.value):
        return _Model()
    n = depth.value if depth is not None and type(depth.value) is int else None
    name = f"{backbone.value}-{n}" if n else backbone.value
    known = known_model(f"{backbone.value}{n}" if n else backbone.value)
    wrapper = kind is not None and isinstance(kind.value, str) and kind.value in _MM_WRAPPERS
    head = ex.get("model.decode_head.type")
    if wrapper and head is not None and isinstance(head.value, str) and re.fullmatch(r"[A-Za-z]\w+Head", head.value):
        name = f"{head.value.removesuffix('Head')} ({name})"  # `decode_head=dict(type="SegFormerHead")`
    elif kind is not None and isinstance(kind.value, str) and not wrapper and re.fullmatch(r"[A-Za-z]\w+", kind.value):
        name = f"{kind.value} ({name})"  # a detector around its backbone
    prov["model_name"] = _source(backbone)
    count = int(known[0] * 1e6) if known is not None and (kind is None or kind.value in _MM_CLASSIFIERS) else None
    head_in, classes = (
        ex.get("model.cls_head.in_channels", "model.head.in_channels"),
        ex.get("model.cls_head.num_classes", "model.head.num_classes"),
    )
    if (
        count is not None and head_in is not None and classes is not None
        and type(head_in.value) is int and type(classes.value) is int and 0 < classes.value < 1 << 20
    ):  # fmt: skip
        count += (classes.value - 1000) * (head_in.value + 1)  # the table counts a 1000-class head; the config's has
        # its own classes (TSN's 400 Kinetics classes over ResNet-50's 2048 features)
    return _Model(name, None, count)


_MM_CLASSIFIERS: Final = frozenset({"ImageClassifier", "Recognizer2D"})  # a 2-D backbone and a linear head (TSN)


def _registered_builder(
    ws: Workspace, name: str, modules: Sequence[tuple[str, str]] = (), *, plain_functions: bool = False
) -> str | None:
    """The module of the job's own ``@register_model`` function called ``name`` (timm's ``create_model(name)`` builds
    it once the job imports its models package), if there is one among the modules the entry reaches (``import
    levit``) or the job's model modules."""
    if not re.fullmatch(r"[A-Za-z_]\w{1,80}", name):
        return None
    pattern = re.compile(rf"^@(?:\w+\.)*register_model\b[^\n]*\n(?:@[^\n]*\n)*def {re.escape(name)}\(", re.M)
    builder = re.compile(rf"^def {re.escape(name)}\(", re.M)  # `models.__dict__[arch]` extended with the job's own
    for reached, code in modules:  # builders (`models.__dict__[name] = customized_models.__dict__[name]`)
        if name in code and (pattern.search(code) or (plain_functions and builder.search(code))):
            return reached
    reads = 0
    for file in ws.files((".py",)):
        if reads >= 120:
            break
        if not _MODEL_FILE.search(file):
            continue
        reads += 1
        text = ws.read_text_or_none(file)
        if text and name in text and pattern.search(text):
            return file
    return None


def _injected_count(ws: Workspace, ex: Extraction, counter: ParamCounter, name: str) -> int | None:
    """A model a YAML registry builds by its class name with a section of the same name holding its constructor's
    arguments, in which a value naming another class of the job's with a section of its own is that module
    (RT-DETR's `model: RTDETR` / `RTDETR: {backbone: PResNet, ...}` / `PResNet: {depth: 50}`; PaddleDetection's
    `architecture:`): counted by building them so; None when the settings are not laid out so."""
    sections: dict[str, dict[str, Any]] = {}
    for key, v in ex.values.items():
        head, dot, leaf = key.partition(".")
        if dot and re.fullmatch(r"[A-Z]\w{1,63}", head) and "." not in leaf:
            sections.setdefault(head, {})[leaf] = v.value
    if name not in sections:
        return None
    wanted = set(sections) | {
        v for fields in sections.values() for v in fields.values() if isinstance(v, str) and v in sections
    }
    where: dict[str, str] = {}
    pattern = re.compile(r"^class (" + "|".join(map(re.escape, sorted(wanted))) + r")\b", re.M)
    for n, file in enumerate(ws.files((".py",))):
        if n >= 400 or len(where) == len(wanted):
            break
        text = ws.read_text_or_none(file) or ""
        for found in pattern.findall(text):
            where.setdefault(found, file)
    if name not in where or not all(v in where for v in sections[name].values() if isinstance(v, str) and v in wanted):
        return None
    return counter.count_injected(name, sections, where)


def _model_from_type_setting(
    ws: Workspace, ex: Extraction, counter: ParamCounter, prov: dict[str, FieldSource]
) -> _Model:
    """A registry-built model: a setting under a model section names a ``torch.nn`` class of the job's code
    (BasicSR ``network_g.type: MSRResNet``, mmcv ``model.type``, yacs ``MODEL.MODEL_NAME``); the settings beside
    it are its arguments."""
    wanted: dict[str, tuple[str, Value]] = {}
    for key, v in ex.values.items():
        leaf = key.rsplit(".", 1)[-1].lower()
        if (
            leaf in _TYPE_LEAVES and _MODEL_PATH.search(key) and isinstance(v.value, str)
            and re.fullmatch(r"[A-Za-z_]\w{2,63}", v.value) and not _EVAL_KEY.search(key)
        ):  # fmt: skip
            wanted.setdefault(v.value, (key, v))
    if not wanted:
        return _Model()
    # a registry may key a class by its lower-cased name (KAIR `net_type: swinir` builds `SwinIR`)
    folded = {k.lower(): entry for k, entry in wanted.items()}
    pattern = re.compile(r"^class (" + "|".join(map(re.escape, wanted)) + r")\(([^)]*)\)\s*:", re.M | re.I)
    named_module: tuple[str, str, str] | None = None  # a module named after the setting (`models/PatchTST.py`)
    later: list[tuple[str, str, Value, str, str | None]] = []  # classes of auxiliary networks, found first
    bases: dict[str, str] = {}  # every class of the model modules read → its first base's name
    pending: list[tuple[str, str, str, str | None]] = []  # named classes whose base is not plainly a network
    stems = {w.lower() for w in wanted}
    read: list[tuple[str, str]] = []  # the model modules read, with their text
    reads = 0
    for n, file in enumerate(ws.files((".py",))):
        stem = file.rsplit("/", 1)[-1].removesuffix(".py")
        if n >= 800 or reads >= 120:
            break
        if stem.lower() not in stems and not _MODEL_FILE.search(file):
            continue  # model classes live in model/network/arch modules (or one named after the setting)
        reads += 1
        text = ws.read_text_or_none(file)
        read.append((file, text or ""))
        if (
            named_module is None
            and stem in wanted
            and text
            and (mod := re.search(r"^class (\w+)\([^)]*\bModule\b[^)]*\)\s*:", text, re.M))
        ):
            named_module = (stem, mod.group(1), file)
        suffixed = re.fullmatch(r"(\w+?)_(?:model|arch|net|network)", stem)
        if named_module is None and suffixed and suffixed.group(1) in wanted and text:
            # `--model cut` → models/cut_model.py's CUTModel (pix2pix/CycleGAN's find_model_using_name, BasicSR archs)
            target = suffixed.group(1).replace("_", "").lower()
            mod = next((c for c in re.findall(r"^class (\w+)\(", text, re.M) if c.lower().startswith(target)), None)
            if mod is not None:
                named_module = (suffixed.group(1), mod, file)
        bases.update(re.findall(r"^class (\w+)\(\s*(?:\w+\.)*(\w+)", text or "", re.M))
        for m in pattern.finditer(text) if text else ():
            if (
                "Module" not in m.group(2) and not re.search(r"(?:Net|Model|Arch)\b", m.group(2))
                and m.group(2).strip().rsplit(".", 1)[-1].lower() not in folded
            ):  # fmt: skip
                pending.append((m.group(1), m.group(2).strip().rsplit(".", 1)[-1], file, text))
                continue  # (a base class named as a network: `Net`, `BaseModel`, `GANArch`; or another network the
                # config builds: `class CodeFormer(VQAutoEncoder)` beside `network_vqgan.type: VQAutoEncoder`)
            cls = m.group(1)
            key, v = wanted.get(cls) or folded[cls.lower()]
            if (_AUXILIARY_NETWORK.search(key) or _PART_KEY.search(key)) and any(
                not (_AUXILIARY_NETWORK.search(k) or _PART_KEY.search(k)) for k, _ in wanted.values()
            ):  # (a part's type, detectron2's `MODEL.SEM_SEG_HEAD.NAME`, beside the whole model's `META_ARCHITECTURE`)
                later.append((cls, key, v, file, text))  # `network_identity.type: ResNetArcFace`: a frozen helper;
                continue  # the generator (`network_g`) may be defined further on
            return _typed_model(ws, ex, counter, prov, cls, key, v, file, text)
    if later:
        return _typed_model(ws, ex, counter, prov, *later[0])
    for cls, first, file, text in pending:  # `class MiniGPT4(MiniGPTBase)`, `MiniGPTBase(BaseModel)`: a network of
        base: str | None = first  # the job's through its own base classes (read in the model modules above)
        for _ in range(4):
            if base is None:
                break
            if "Module" in base or re.search(r"(?:Net|Model|Arch)$", base):
                key, v = wanted.get(cls) or folded[cls.lower()]
                return _typed_model(ws, ex, counter, prov, cls, key, v, file, text)
            base = bases.get(base)
    if (made := _factory_named(ws, ex, counter, prov, wanted, read)) is not None:
        return made
    if named_module is not None:  # a registry keyed by module name: the setting names the model, its module builds it
        stem, cls, file = named_module
        key, v = wanted[stem]
        prov["model_name"] = FieldSource(file=v.source, line=v.line)
        found = find_class(ws, cls, ws.read_text_or_none(file) or "", file)
        return _Model(stem, found, None, part=_PART_SECTION.search(key) is not None)
    for name, (key, v) in wanted.items():  # a library's registry (fairseq --arch, llm-foundry model.name): its key
        low = key.lower()
        if (
            low in ("arch", "model.name", "model_name", "model.arch", "model.model_name")
            or (low.startswith("model.") and low.endswith((".name", ".arch")) and low.count(".") == 2)
        ) and "_" in name:  # (cvnets' `model.classification.name: mobilevit_v2`)
            prov["model_name"] = FieldSource(file=v.source, line=v.line)
            return _Model(name, None, None)
    for name, (key, v) in wanted.items():  # a registry of the job's, a dict literal from names to classes (WeNet's
        entry = re.compile(rf"""['"]{re.escape(name)}['"]\s*:\s*(?:\w+\.)*([A-Z]\w+)\s*[,}}\n]""")  # `"asr_model":
        for file, text in read:  # ASRModel`): the class that the setting's value keys
            if (keyed := entry.search(text)) is not None and not keyed[1].endswith(_NOT_MODEL_SUFFIXES):
                prov["model_name"] = FieldSource(file=v.source, line=v.line)
                cls = keyed[1]
                return _Model(cls, find_class(ws, cls, text, file), None, part=_PART_KEY.search(key) is not None)
    return _Model()


# A Gym / Gymnasium environment id (`PongNoFrameskip-v4`, `Ant-v3`, `ALE/Breakout-v5`)
_GYM_ID: Final = re.compile(r"(?:[A-Za-z]+/)?[A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*-v\d+")
# A section configuring one part of a model (`model_params.decoder.type: istftnet`): its type names that part
_PART_SECTION: Final = re.compile(r"(?i)\.(?:decoder|encoder|vocoder|text_encoder|style_encoder)\.\w+$")
# A setting naming one part of a model (its head, backbone, neck, decoder) rather than the whole
_PART_KEY: Final = re.compile(r"(?i)(?:^|[._])(?:\w*_)?(?:head|backbone|neck|decoder|encoder)\.\w+$")
# Networks a config builds beside the one it trains: discriminators, frozen identity or perceptual networks
_AUXILIARY_NETWORK: Final = re.compile(r"(?i)(?:^|[._])(?:network|net)_(?:d|disc\w*|identity|perceptual|vgg|\w*_d)\b")


def _factory_named(
    ws: Workspace,
    ex: Extraction,
    counter: ParamCounter,
    prov: dict[str, FieldSource],
    wanted: dict[str, tuple[str, Value]],
    read: list[tuple[str, str]],
) -> _Model | None:
    """A model factory of the job's model modules that the type setting names (USB's ``net: wrn_28_2`` looked up by
    ``getattr(nets, net_name)``: ``def wrn_28_2(pretrained=False, **kwargs): return WideResNet(depth=28, …)``):
    the setting names the model; the factory, called with the job's class count where a setting gives one, sizes
    it. Only a function that builds a network of the job's (a class deriving from a module) counts."""
    for file, text in read:
        for m in re.finditer(r"^def (\w+)\(", text, re.M):
            if (
                m.group(1) not in wanted or _AUXILIARY_NETWORK.search(wanted[m.group(1)][0])
                or known_model(m.group(1)) is not None
            ):  # fmt: skip
                continue  # (`def bert_base_uncased(…)` wraps a downloaded checkpoint: the known size stands)
            key, v = wanted[m.group(1)]
            classes = ex.get("num_classes")
            kwargs = {"num_classes": classes.value} if classes is not None and isinstance(classes.value, int) else {}
            count = counter.count_class(file, m.group(1), kwargs)
            built = counter.last_built if count else None
            if not (isinstance(built, Obj) and built.cls and is_module_value(built)):
                continue
            prov["model_name"] = FieldSource(file=v.source, line=v.line)
            found = find_class(ws, built.cls, text, file)
            return _Model(m.group(1), found, count, _layer_kinds(counter), part=_PART_KEY.search(key) is not None)
    return None


def _typed_model(
    ws: Workspace,
    ex: Extraction,
    counter: ParamCounter,
    prov: dict[str, FieldSource],
    cls: str,
    key: str,
    v: Value,
    file: str,
    text: str | None,
) -> _Model:
    """The class a type setting names, built with the settings beside it."""
    prefix = key.rsplit(".", 1)[0] if "." in key else ""
    kwargs = {
        k[len(prefix) + 1 :]: x.value
        for k, x in ex.values.items()
        if prefix and k.startswith(prefix + ".") and "." not in k[len(prefix) + 1 :] and k != key
    }
    prov["model_name"] = FieldSource(file=v.source, line=v.line)
    whole = _enclosing_type(ex, key)  # `model.type: YOLOv6s` over `model.backbone.type: EfficientRep`: a part
    if whole is not None and whole != cls and not _defines_class(ws, whole):
        return _Model(f"{whole} ({cls})", None, None)  # the whole model is built by a function, not this class
    count = counter.count_class(file, cls, kwargs)
    return _Model(cls, find_class(ws, cls, text or "", file), count, _layer_kinds(counter) if count else None)


_NOT_THE_NETWORK: Final = re.compile(
    r"(?i)(?:^|[._])(?:d|disc\w*|loss|augment\w*|opt\w*|dataset|data|sampler|ema)_?kwargs"
)


_CLASS_PATH_LEAVES: Final = frozenset({"class_name", "model", "model_class", "network", "net", "arch", "model_type"})


def _model_from_class_path(
    ws: Workspace, ex: Extraction, prov: dict[str, FieldSource], counter: ParamCounter | None = None
) -> _Model:
    """A network built from a dotted class path a setting holds (dnnlib ``construct_class_by_name(**G_kwargs)`` with
    ``G_kwargs.class_name = "training.networks_stylegan3.Generator"``, EDM's ``network_kwargs``, st-gcn's YAML
    ``model: net.st_gcn.Model`` built by ``import_class(arg.model)(**arg.model_args)``): the class, when the job's own
    module defines it (not the discriminator's, the loss's or the data's). Its arguments, when a setting beside it
    holds them (``model_args``, ``model_kwargs``), size it."""
    for key, v in ex.values.items():
        path = v.value
        if not (
            key.rsplit(".", 1)[-1] in _CLASS_PATH_LEAVES and isinstance(path, str)
            and re.fullmatch(r"[A-Za-z_][\w.]*\.[A-Z]\w*", path) and not _NOT_THE_NETWORK.search(key)
        ):  # fmt: skip
            continue
        module, _, cls = path.rpartition(".")
        file = module.replace(".", "/") + ".py"
        text = ws.read_text_or_none(file) if ws.exists(file) else None
        if not (text and re.search(rf"^class {re.escape(cls)}\(", text, re.M)):
            continue
        prov["model_name"] = _source(v)
        count = None
        for suffix in ("_args", "_kwargs"):
            prefix = key + suffix + "."
            given = {k[len(prefix) :]: x.value for k, x in ex.values.items() if k.startswith(prefix)}
            if given and counter is not None and key.rsplit(".", 1)[-1] != "class_name":
                count = counter.count_class(file, cls, nest_flat(given))
                break
        return _Model(cls, find_class(ws, cls, text, file), count)
    return _Model()


def _defines_class(ws: Workspace, name: str) -> bool:
    """Whether one of the job's model modules defines class ``name``."""
    return _class_anywhere(ws, name) is not None


def _class_anywhere(ws: Workspace, name: str) -> ModelClass | None:
    """Class ``name`` as one of the job's model modules defines it (``networks/resnet_encoder.py``), if one does."""
    pattern = re.compile(rf"^class {re.escape(name)}\b", re.M)
    for n, file in enumerate(ws.files((".py",))):
        if n >= 800:
            break
        text = ws.read_text_or_none(file) if _MODEL_FILE.search(file) else None
        if text and pattern.search(text):
            return find_class(ws, name, text, file)
    return None


def _enclosing_type(ex: Extraction, key: str) -> str | None:
    """The ``type`` of the section around ``key``'s section (``model.type`` for ``model.backbone.type``): the name of
    the whole model a nested part belongs to."""
    parts = key.split(".")
    if len(parts) < 3:
        return None
    outer = ex.values.get(".".join([*parts[:-2], parts[-1]]))
    name = outer.value if outer is not None else None
    return name if isinstance(name, str) and _MM_NAME.fullmatch(name) and name not in _MM_WRAPPERS else None


def _model_from_library_registry(ex: Extraction, prov: dict[str, FieldSource]) -> _Model:
    """A class an installed library builds from its registry (BasicSR ``network_g.type: RRDBNet``): a CamelCase
    ``type`` directly under a top-level model section, named though its code is not in the workspace."""
    for key, v in ex.values.items():
        section, _, leaf = key.rpartition(".")
        name = v.value
        if (
            leaf == "type" and section and "." not in section and _MODEL_PATH.search(section)
            and not _EVAL_KEY.search(section) and isinstance(name, str)
            and re.fullmatch(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*", name) and name not in _MM_WRAPPERS
        ):  # fmt: skip
            prov["model_name"] = FieldSource(file=v.source, line=v.line)
            return _Model(name, None, None)
    return _Model()


def _model_from_checkpoint_table(ex: Extraction, prov: dict[str, FieldSource]) -> _Model:
    """A released model a setting picks from a table of checkpoints in the job's code: a module-level dict of names
    to weight files (CLIP's `_MODELS = {"RN50": ".../RN50.pt", ...}`), looked up by subscript where the job runs
    (`clip._MODELS[cfg.MODEL.BACKBONE.NAME]`). Named by the table's module and the key; sized by the known table."""
    texts = [ex.code, *(t for _, t in ex.modules)]
    for path, text in ex.modules:
        if not _WEIGHTS_URL.search(text):
            continue
        try:
            tree = parse(text)
        except (SyntaxError, ValueError):
            continue
        for stmt in tree.body:
            if not (
                isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Dict) and len(stmt.value.keys) >= 2
            ):  # fmt: skip
                continue
            table = {
                k.value: v.value for k, v in zip(stmt.value.keys, stmt.value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
                and isinstance(v, ast.Constant) and isinstance(v.value, str) and _WEIGHTS_FILE.search(v.value)
            }  # fmt: skip
            looked_up = re.compile(rf"\b{re.escape(stmt.targets[0].id)}\[")
            if len(table) < 2 or not any(looked_up.search(t) for t in texts):
                continue
            for key, v in ex.values.items():
                if isinstance(v.value, str) and v.value in table and not _EVAL_KEY.search(key):
                    family = PurePosixPath(path).stem
                    prov["model_name"] = FieldSource(file=v.source, line=v.line)
                    known = known_model(f"{family}-{v.value.replace('/', '-')}")
                    count = int(known[0] * 1e6) if known is not None else None
                    return _Model(f"{family.upper() if len(family) <= 4 else family} {v.value}", None, count)
    return _Model()


_WEIGHTS_URL: Final = re.compile(r"[\"'][^\"'\s]+\.(?:pth|pt|ckpt|bin|safetensors)[\"']")
_EVAL_KEY: Final = re.compile(r"(?:^|\.)(?:val|valid|validation|test|eval|teacher|ema)\b", re.I)


_WEIGHTS_FILE: Final = re.compile(r"\.(?:pth|pt|ckpt|bin|h5|pkl|npz|safetensors)$", re.I)


def _decorates(named: Value, model: _Model) -> bool:
    """Whether a setting's architecture name only decorates the job's own counted builder function of a known
    architecture (``model_version: resnet18_distill`` beside ``model = resnet.ResNet18()``), or an OpenMMLab config's
    counted backbone ("ResNet-50" beside ``configs/resnet/resnet50_8xb32_in1k.py``): the builder says it."""
    if model.cls is not None or model.name is None or model.count is None:
        return False
    if known_model(model.name) is None and known_model(model.name.replace("-", "")) is None:
        return False
    own, flag = _squash(model.name), _squash(str(named.value))
    return own in flag and own != flag  # (the same name either way: the flag's path, as before)


def _reads_setting(node: ast.AST, leaf: str) -> bool:
    """Whether an expression reads a setting by its last name (``args.network``, ``cfg["network"]``)."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr == leaf)
        or (isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and n.slice.value == leaf)
        for n in walk(node)
    )


def _builds_another_module(tree: ast.Module, leaf: str, trained: ast.Call) -> bool:
    """Whether the setting ``leaf`` is handed only to constructors of frozen parts beside the module the optimizer
    trains (``encoder = Encoder(args.network)`` beside ``decoder = Decoder(vocab, encoder.dim)`` and
    ``Adam(decoder.parameters())``): each consumer is a class built into a name that the trained module's
    constructor reads only attributes of (never takes whole) and whose parameters nothing trains."""
    consumers = [
        n for n in walk(tree)
        if isinstance(n, ast.Call) and any(_reads_setting(a, leaf) for a in [*n.args, *(k.value for k in n.keywords)])
    ]  # fmt: skip
    if not consumers:
        return False
    bound: dict[int, str] = {
        id(a.value): a.targets[0].id for a in walk(tree)
        if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
    }  # fmt: skip
    trained_args = [*trained.args, *(k.value for k in trained.keywords)]
    for c in consumers:
        name = bound.get(id(c))
        if name is None or not _callee_name(c)[:1].isupper():
            return False
        whole = any(isinstance(x, ast.Name) and x.id == name for x in trained_args)
        trains = any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _PARAMETERS_METHOD.fullmatch(n.func.attr)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == name
            for n in walk(tree)
        )  # fmt: skip
        if whole or trains:
            return False
    return True


def _built_from_checkpoint(code: str, built: ast.Call) -> bool:
    """Whether the model's constructor is handed a part of a loaded checkpoint (``Model(cfg or ckpt["model"].yaml,
    …)`` after ``ckpt = torch.load(weights)``): the weights file holds the whole model, so its name is the model's."""
    try:
        tree = parse(code)
    except SyntaxError:
        return False
    loaded = {
        t.id for n in walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
        and "load" in _callee_name(n.value).lower() for t in n.targets if isinstance(t, ast.Name)
    }  # fmt: skip
    return bool(loaded) and any(
        isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in loaded
        for arg in [*built.args, *(k.value for k in built.keywords)] for n in walk(arg)
    )  # fmt: skip


# a setting of a model that judges the trained one: under an evaluation section, or named for an evaluator, a teacher,
# a judge or a reference model
_JUDGING_SETTING: Final = re.compile(
    r"(?i)(?:^|\.)(?:eval|evaluation|validation|teacher|judge|reference)\.|(?:^|[._])(?:\w+_)?(?:eval|teacher|judge|ref|"
    r"reference)_\w*$"
)


# a model class named for a family of its own: it leads its backbone's name
_LEADING_FAMILY: Final = re.compile(r"(?i)detr|r-?cnn|retina|yolo|fcos|[a-z0-9]det$|segformer|maskformer|deeplab|unet")


# a factory that builds image-text (CLIP-style) models by the image tower's name (open_clip and its copies)
_IMAGE_TEXT_FACTORY: Final = re.compile(r"\bcreate_model_and_transforms\(|\bopen_clip\.create_model\(")


def _builds_image_text(ex: Extraction) -> bool:
    """Whether the entry or a module it reaches builds its model through a CLIP-style factory."""
    return any(_IMAGE_TEXT_FACTORY.search(t) for t in [ex.code, *(t for _, t in ex.modules[:20])])


def _known_flag(
    ex: Extraction,
    *,
    weights_files: bool = True,
    backbones: bool = True,
    trained: ast.Call | None = None,
    checkpoint: bool = False,
) -> tuple[str, Value] | None:
    """A command-line value that names a known architecture (a config file stem or a model id). A weights file
    (``--basenet vgg16_reducedfc.pth``) names only the backbone it initialises when the job's own model class is
    known (``weights_files`` false). A backbone setting names only part of the model, so any other setting's known
    architecture comes first (``MODEL.BACKBONE: resnet50`` under ``--config-file faster_rcnn_R_50_FPN_1x.yaml``);
    without ``backbones``, such settings are not read at all. ``trained``: the constructor of the module the
    optimizer trains; a setting handed only to other constructors names a part that does not train. ``checkpoint``:
    the model is built from a loaded checkpoint, so a ``--weights`` file names it too."""
    backbone = re.compile(r"backbone|basenet|encoder", re.I)
    image_text = _builds_image_text(ex)
    try:
        tree = parse(ex.code) if trained is not None else None
    except SyntaxError:
        tree = None
    for k, v in sorted(ex.values.items(), key=lambda kv: backbone.search(kv[0].rsplit(".", 1)[-1]) is not None):
        if tree is not None and trained is not None and _builds_another_module(tree, k.rsplit(".", 1)[-1], trained):
            continue
        if not re.search(
            r"model|arch|cfg|config|net|backbone|checkpoint|ckpt|pretrained|exp_file|hub_module"
            + ("|weights" if checkpoint else ""),
            k,
            re.I,
        ):
            continue  # a run name that happens to contain "gpt2" names nothing
        if not backbones and backbone.search(k.rsplit(".", 1)[-1]):
            continue
        if _JUDGING_SETTING.search(k):
            continue  # `eval.gen_ppl_eval_model_name_or_path: gpt2-large`: a model that scores the trained one
        if (
            isinstance(v.value, str)
            and _WEIGHTS_FILE.search(v.value)
            and (not weights_files or re.search(r"(?i)(?:^|\.)backbone\.", k))
        ):
            continue  # (`model.backbone.pretrained=swin_tiny….pth` initialises the backbone of the model built)
        if isinstance(v.value, str) and (
            known_model(v.value) is not None or (image_text and known_model(f"clip-{handle_name(v.value)}") is not None)
        ):
            return k, Value(handle_name(v.value).removesuffix(".yaml").removesuffix(".yml"), v.source, v.line)
    return None


def _mentions_lora(ex: Extraction) -> bool:
    """Whether the job reads a flat LoRA setting anywhere: its entry or modules mention LoRA or PEFT, or a Hydra
    ``_target_`` builds a LoRA config. (A shared base config's ``lora_rank = 4`` that nothing reads builds no
    adapters; a CLI tool with no script of the job's, axolotl reading its ``lora_r``, is not asked.)"""
    if any(re.search(r"(?i)lora|peft", t) for t in [ex.code, *(t for _, t in ex.modules[:40])]):
        return True
    return any(k.endswith("_target_") and "lora" in str(v.value).lower() for k, v in ex.values.items())


def _pretrained_name(ex: Extraction, key: str, pretrained: Value) -> str:
    """The checkpoint id's last part, saying how it is trained (LoRA, full fine-tune, nanoGPT ``init_from``)."""
    suffix = ""
    ft = ex.get("finetuning_type")
    peft = ex.uses.get("peft")  # the adapters are built where the code runs (not only under a setting that is off)
    lora_in_code = peft.value is True if peft is not None else re.search(r"\bLoraConfig\(|\bget_peft_model\(", ex.code)
    flat = ex.get("lora_rank", "lora_r") is not None and (not ex.code or peft is not None or _mentions_lora(ex))
    lora_rank = (
        flat or any(re.search(r"(?:^|\.)lora_config\.(?:r|rank)$", k) and v.value for k, v in ex.values.items())
    ) and (peft is None or peft.value is True)  # (`model.lora_config: {r: 8, ...}`: adapters of rank 8, handed to
    # the model with its config)
    if (ft is not None and ft.value == "lora") or lora_rank or lora_in_code:
        suffix = " + LoRA"
    elif ft is not None and ft.value == "full":
        suffix = " (full fine-tune)"
    name = re.sub(r"[-_](?:hf|HF)$", "", _named_part(str(pretrained.value)))  # "-hf": HF format
    name = re.sub(r"\.(?:ya?ml|cfg|json|py|pt|pth|ckpt|h5)$", "", name)  # a config or weights file names the model
    return name + suffix + (" (pretrained)" if key == "init_from" else "")


# path parts that only say what a path is for (`path/to/hf/llama/dir`, `.../or/model_id`): no model's name
_ROLE_PARTS: Final = frozenset({"dir", "path", "to", "or", "and", "model", "models", "model_id", "model_dir",
                                "model_path", "checkpoint", "checkpoints", "ckpt", "ckpts", "hf", "weights",
                                "your", "my", "folder", "here", "local", "merged", "pretrained", "base"})  # fmt: skip


def _named_part(path: str) -> str:
    """The last part of a checkpoint id or path that is not only a role word: ``path/to/hf/llama/dir`` is ``llama``
    (a template the user completes still names the family); the last part itself when every part is one."""
    last = handle_name(path)
    if "/" not in path.rstrip("/") or last.lower() not in _ROLE_PARTS:
        return last
    parts = [p for p in path.rstrip("/").split("/") if p and p.lower() not in _ROLE_PARTS and not p.startswith(".")]
    return parts[-1] if parts else last


def _described(name: str, family: str, ex: Extraction) -> str:
    """A class name with the architecture the README names and the GPT shape, where they add something."""
    details = [name]
    family = re.sub(r"^(?:py)?torch[-_ ]?|[-_ ]?(?:py)?torch$", "", family, flags=re.I)  # "PyTorch-RetinaNet"
    family = re.sub(r"\s+(?:in|for|with|on|using|implementation)$", "", family, flags=re.I)  # "YOLOv2 in PyTorch"
    a, b = _squash(family), _squash(name)
    shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    version = shared >= 6 and b not in a  # `MiniGPT4` of "MiniGPT-V": its own name
    if family and model_type_of([family], None) and _squash(family) not in _squash(name) and not version:
        details.insert(0, family)  # the README names the architecture (VITS, nanoGPT, U-Net, ...), unless the
        # class is a version of the project the README names (`MiniGPT4` under "MiniGPT-V")
    if shape := _gpt_shape(ex):
        details.append(shape)
    return f"{details[0]} ({', '.join(details[1:])})" if len(details) > 1 else name


_HUB_ID: Final = re.compile(r"[A-Za-z0-9][\w.-]{1,63}/[A-Za-z0-9][\w.-]{1,95}(?<!\.json)(?<!\.jsonl)(?<!\.csv)")


def _set_again(code: str, key: str) -> bool:
    """Whether the entry's code assigns the parsed setting ``key`` again (``args.data_path = …``)."""
    leaf = key.rsplit(".", 1)[-1]
    return re.search(rf"^\s*\w+\.{re.escape(leaf)}\s*=(?!=)", code, re.M) is not None


_HORIZON_KEYS: Final = ("prediction_length", "pred_len", "forecast_horizon", "prediction_horizon", "horizon")
_CONTEXT_KEYS: Final = ("context_length", "seq_len", "lookback", "lookback_window", "history_length")


def _forecasts(ex: Extraction) -> bool:
    """Whether the job's settings give both a forecast horizon and the length of the history it reads (positive
    integers): a forecaster's shape, whatever network or data it uses."""

    def positive(keys: tuple[str, ...]) -> bool:
        v = ex.get(*keys)
        return v is not None and isinstance(v.value, int) and not isinstance(v.value, bool) and v.value > 0

    return positive(_HORIZON_KEYS) and positive(_CONTEXT_KEYS)


_SYNTHETIC: Final = frozenset({"synthetic", "dummy", "fake", "random", "synthetic_data", "fakedata"})
# a data file in a data folder: `./shell/data/mix.json`, `datasets/train.jsonl`
_DATA_FOLDER_FILE: Final = re.compile(
    r"(?:^|/)(?:data|datasets?)/(?:[\w.+-]+/)*[\w.+-]+\.(?:jsonl?|csv|tsv|parquet|arrow)$"
)
# a line about normalisation statistics (`normalize_type: Literal['imagenet', 'clip']`, `IMAGENET_MEAN`): it names a
# dataset's mean and deviation, not the data the job trains on
_NORMALISATION_LINE: Final = re.compile(r"^.*(?:normali[sz]|_mean\b|_std\b|\bmean\s*=|\bstd\s*=).*$", re.I | re.M)


def _without_normalisation(code: str) -> str:
    return _NORMALISATION_LINE.sub("", code)


def _data_setting_dataset(ex: Extraction, *, given_only: bool = False) -> tuple[str, Value] | None:
    """A known dataset named by a data setting (``data_local: ./my-copy-c4``), with the setting; ``given_only``: one
    the command or a config file gives (not a parser's default)."""
    for key, v in ex.values.items():
        leaf = key.rsplit(".", 1)[-1].lower()
        if given_only and not (v.source == "command" or v.source.endswith(_CONFIG_FILES)):
            continue
        if (
            (
                "data" in leaf
                or (leaf in ("type", "name", "path") and "data" in key.lower())  # `data_loader.type:
                # MnistLoader`, `train_dataset.huggingface_dataset.path: c4`
                or (leaf.startswith("train") and leaf.endswith(("_file", "_files", "_db", "_dbs")))  # UNITER, ALBEF
            )
            and not _EVAL_KEY.search(key)
            and (c := _known_in(v.value))
        ):
            return c, v
    return None


def _dataset(
    ex: Extraction, title: str, prov: dict[str, FieldSource], ws: Workspace | None = None, command: str = ""
) -> str | None:
    u = ex.uses.get("dataset")
    if (
        u is not None and isinstance(u.value, str) and u.value not in ("json", "csv", "text", "parquet", "arrow")
        and not _PLACEHOLDER_NAME.fullmatch(u.value.strip())
    ):  # fmt: skip
        prov["dataset"] = FieldSource(file=u.file, line=u.line, path="use")
        cu = ex.uses.get("dataset_config")
        conf = cu.value if cu and (cu.file, cu.line) == (u.file, u.line) and isinstance(cu.value, str) else ""
        combined, alone = canonical_dataset(f"{u.value} {conf}"), canonical_dataset(u.value)
        if combined and alone and alone != combined and not combined.lower().startswith(alone.lower()):
            combined = alone  # `load_dataset("glue", "mnli")`: the benchmark, with its configuration ("GLUE (mnli)")
        return _with_config(combined or u.value, conf)
    for key in ("dataset_type", "data_type", "dataset.type", "data.type", "dataset"):
        v = ex.get(key)  # `dataset_type=synthetic`, `--dataset dummy`: generated batches, no data set at all
        if (
            v is not None and isinstance(v.value, str) and v.value.strip().lower() in _SYNTHETIC
            and (v.source == "command" or v.source.endswith(_CONFIG_FILES))
        ):  # fmt: skip
            prov["dataset"] = _source(v)
            return "synthetic data"
    own: Value | None = None
    for key in _DATASET_KEYS:
        v = ex.get(key)
        if (
            v is not None
            and isinstance(v.value, list)
            and v.value
            and all(isinstance(p, str) and not _DATA_FILE.search(p) for p in v.value)
        ):  # fmt: skip  (data folders, `--train_data data/wiki/ data/cc-net/` (nargs="+"); a list of data files
            v = Value(" ".join(v.value), v.source, v.line)  # is read further on, each file's dataset named)
        if v is None or not isinstance(v.value, str) or "${" in v.value or not v.value.strip():
            continue
        if (
            _PLACEHOLDER_NAME.fullmatch(v.value.strip()) or _DATASET_WRAPPERS.fullmatch(v.value.strip())
            or _MODALITY.fullmatch(v.value.strip())
        ):  # fmt: skip
            continue  # "train_dataset", "my_data": a slot's name, not a dataset's (nor a wrapper around one); `dataset:
            # asr` (WeNet): the kind of loader, a modality, not the data
        if v.source != "command" and not v.source.endswith(_CONFIG_FILES) and _set_again(ex.code, key):
            continue  # a parser default the entry replaces after parsing (`args.data_path = data_info['data']`
            # looked up by `--data WTH`): the default is not what the job reads
        canon = canonical_dataset(v.value)
        if (
            canon is None
            and re.search(r"\.(?:jsonl?|csv|tsv|parquet|txt|arrow)$", v.value)
            and (key.endswith(("_path", "_files", "_file", "_data")) or "/" in v.value)
        ):
            default = v.source != "command" and not v.source.endswith(_CONFIG_FILES)
            if default and (named := canonical_dataset(_without_comments(ex.code))) is not None:
                prov["dataset"] = FieldSource(file=ex.launch.script or "")
                return named  # `--train-file train-v1.1.json` by default, read by the script's `SQuAD(args)` loader
            if (beside := _named_beside(ex, next((k for k, x in ex.values.items() if x is v), key))) is not None:
                prov["dataset"] = _source(beside[1])
                return beside[0]  # `train_data: Data/train_list.txt` beside `root_path: /local/LJSpeech-1.1/wavs`
            stem = posixpath.splitext(posixpath.basename(v.value.strip()))[0].lower()
            folder = next(
                (x for k, x in ex.values.items() if x.source == "command" and isinstance(x.value, str)
                 and k.rsplit(".", 1)[-1] in ("data_dir", "data_path", "dataset_dir", "data_root", "dataroot")),
                None,
            ) if stem in _SPLIT_DIRS else None  # fmt: skip
            if folder is not None and (name := _folder_name(str(folder.value))) is not None:
                prov["dataset"] = _source(folder)  # `train_file: train.json` read from `data/AdvertiseGen/` (the
                return name  # folder the command names): a split's file, the folder names the data
            prov["dataset"] = _source(v)
            return _data_file_name(v.value)  # a data file: its name is all the job says
        if canon is None and (key.endswith(("_target_", "_files", "_file", "_path", "_dir")) or "/" in v.value):
            given = v.source == "command" or v.source.endswith(_CONFIG_FILES) or v.source in ex.sources
            if given and own is None and not key.endswith("_target_") and "${" not in v.value:
                own = v  # the job's own data folder, given on the command line or in its config: better than a default
            continue  # a folder or module path that names no known dataset says nothing
        prov["dataset"] = _source(v)
        if canon is None and (mapped := _dataset_registry_entry(ex, v.value.strip())) is not None:
            return mapped  # `--dataset C10` keys `dset_dict = {'C10': dset.CIFAR10, ...}`: the class names it
        cv = ex.get("dataset_config_name") if key == "dataset_name" else None  # HF examples' DataTrainingArguments
        conf = cv.value if cv is not None and isinstance(cv.value, str) else ""
        return _with_config(canonical_dataset(f"{v.value} {conf}") or v.value.replace(",", " + "), conf)
    if (
        (v := ex.get("data.type")) is not None and isinstance(v.value, str)
        and re.fullmatch(r"[A-Z][\w-]{1,40}", v.value) and not _DATASET_WRAPPERS.fullmatch(v.value)
    ):  # fmt: skip
        prov["dataset"] = _source(v)  # an mmcv config's `data = dict(type='SAM', ...)`: the registered dataset
        return canonical_dataset(v.value) or v.value  # class (not torchreid's `data.type: image`, a modality)
    for key in ("task_name", "task"):  # `--task_name=MNLI`: a benchmark's task that is a dataset of its own
        v = ex.get(key)
        if v is not None and isinstance(v.value, str) and (canon := canonical_dataset(v.value)) is not None:
            prov["dataset"] = _source(v)
            return canon
        if v is not None and isinstance(v.value, str) and _GYM_ID.fullmatch(v.value.strip()):
            prov["dataset"] = _source(v)  # reinforcement learning: the environment a `task` names
            return v.value.strip()  # (Tianshou's `--task PongNoFrameskip-v4`) is the data
    if any(_RL_ENVIRONMENTS.search(t) for t in [ex.code, *(t for _, t in ex.modules[:20])]):
        for key in ("env", "environment", "task", "task_name", "env_name"):  # `env: cheetah_run` of a job that
            # builds RL environments (its own modules import the library): the one it learns in
            v = ex.get(key)
            if v is not None and isinstance(v.value, str) and re.fullmatch(r"[\w.:/-]{2,64}", v.value.strip()):
                prov["dataset"] = _source(v)
                return v.value.strip()
    if listed := _listed_datasets(ex, prov):
        return listed
    named = " ".join([*_data_words(ex.launch.args), *ex.sources])  # data paths and config files the command names
    canon = canonical_dataset(named)
    # A config file's name is a weaker word than the data it sets (`librispeech_tts_r_300M_dummy.json` trains on
    # `train_dataset_name: blabble-io/libritts_r`): a data setting the command or a config gives wins over it.
    set_by_user = _data_setting_dataset(ex, given_only=True) if canon else None
    if canon and set_by_user is None:
        prov["dataset"] = FieldSource(file="command", path="command")
        return canon
    if (stated := set_by_user or _data_setting_dataset(ex)) is not None:
        prov["dataset"] = _source(stated[1])
        return stated[0]
    for key, v in ex.values.items():  # a dataset setting that names a Hub dataset (`--dataset_mixer_list
        leaf = key.rsplit(".", 1)[-1].lower()  # allenai/tulu-3-sft-mixture 1.0`): the id names the data
        if (
            "dataset" in leaf and not leaf.endswith(("_path", "_dir", "_root", "_folder", "_file", "_files"))
            and not _EVAL_KEY.search(key) and isinstance(v.value, str)
            and (v.source == "command" or v.source.endswith(_CONFIG_FILES) or v.source != (ex.launch.script or ""))
            and _HUB_ID.fullmatch(v.value.strip())
            and v.value.split("/", 1)[0].lower() not in ("data", "datasets", "dataset", "input", "inputs", "output")
        ):  # fmt: skip
            prov["dataset"] = _source(v)
            return v.value.strip()
    if own is not None and ws is not None and (described := _data_file_dataset(ws, str(own.value))) is not None:
        prov["dataset"] = _source(own)
        return described  # a YOLO-style data YAML (`--data data/dataset.yaml`): the folder its splits live in
    if (
        own is not None and (name := _folder_name(str(own.value)))
        and not _PLACEHOLDER_NAME.fullmatch(name)
    ):  # fmt: skip
        prov["dataset"] = _source(own)
        return name
    for v in ex.values.values():  # `--type cifar10` where the code branches `if args.type == 'cifar10':`:
        value = v.value  # the setting picks one of the datasets the code names
        if (
            isinstance(value, str)
            and re.fullmatch(r"[\w.-]{2,24}", value)
            and (c := canonical_dataset(value))
            and re.search(
                rf"""==\s*['"]{re.escape(value)}['"]|\bin\s*[\[(][^\])]*['"]{re.escape(value)}['"]"""
                rf"""|['"]{re.escape(value)}['"]\s*:""",
                ex.code,
            )
        ):  # fmt: skip  (`== 'cifar10'`, `in ['mnist', 'cifar10']`, `{'cifar10': 50000, …}[hps.problem]`)
            prov["dataset"] = _source(v)
            return c
    for key, v in ex.values.items():  # a data file the command hands over from a data folder (`--meta_path
        if (  # ./shell/data/finetune_mix.json`): the job's own data, better than a name its code mentions
            v.source == "command" and isinstance(v.value, str) and not _EVAL_KEY.search(key)
            and _DATA_FOLDER_FILE.search(v.value.strip())
        ):  # fmt: skip
            prov["dataset"] = _source(v)
            return _data_file_name(v.value.strip())
    if (
        ws is not None
        and ws.root != ws.boundary
        and (recipe := canonical_dataset(ws.root.relative_to(ws.boundary).as_posix()))
    ):
        prov["dataset"] = FieldSource(file=".", path="static")  # a toolkit's recipe folder (`examples/aishell/s0`,
        return recipe  # Kaldi-style `egs/<corpus>/<recipe>`): the corpus it is the recipe for
    canon = canonical_dataset(_without_normalisation(_without_comments(ex.code)))
    if canon is None and ws is not None and (held := _data_class_text(ws, ex)):
        canon = canonical_dataset(_without_comments(held))  # `datamodule=VAEDataset(...)`, which builds MyCelebA
    canon = canon or canonical_dataset(ex.code) or canonical_dataset(title)
    if canon:
        prov["dataset"] = FieldSource(file=ex.launch.script or "README.md")
        return canon
    for key in ("data_dir", "data_root", "dataroot", "data_path", "dataset_dir", "dataset_root", "train_dir"):
        v = ex.get(key)  # the script's own default data folder (`--data_dir ../Market/pytorch`), named by its folder
        name = _folder_name(v.value) if v is not None and isinstance(v.value, str) and "/" in v.value else None
        if v is not None and name and not _PLACEHOLDER_NAME.fullmatch(name):
            prov["dataset"] = _source(v)
            return name
    if len(imported := _library_datasets(ex)) == 1:
        prov["dataset"] = FieldSource(file=imported[0][0])
        return imported[0][1]  # `from torchtext.datasets import Multi30k` in the helper module that loads the data
    sections = {
        k.split(".")[1]: v
        for k, v in ex.values.items()
        if k.startswith("datasets.")
        and k.count(".") >= 2
        and k.split(".")[1].lower() not in _SPLIT_DIRS | _GENERIC_DIRS
        and not _PLACEHOLDER_NAME.fullmatch(k.split(".")[1])
    }  # fmt: skip  (KAIR's `datasets: {train: …, test: …}` are splits, not datasets)
    if len(sections) == 1:  # LAVIS-style `datasets: {cc_sbu_align: {batch_size: 12, ...}}`: the section names it
        ((name, v),) = sections.items()
        prov["dataset"] = _source(v)
        return canonical_dataset(name) or name
    if ws is not None and command and (introduced := readme_command_dataset(ws, command)) is not None:
        prov["dataset"] = FieldSource(file="README.md")
        return introduced  # "for celebA" right above this very command in the README
    if ws is not None and len(in_readme := readme_datasets(ws)) == 1:
        prov["dataset"] = FieldSource(file="README.md")
        return in_readme[0]  # nothing in the code or the command names the data; the README names one dataset only
    return None


# Packages whose `datasets` module holds dataset classes named for the dataset (`torchvision.datasets.CIFAR10`)
_DATASET_PACKAGES: Final = re.compile(
    r"^(?:torchvision|torchtext|torchaudio|keras|tensorflow\.keras|tf\.keras|torch_geometric)\.datasets$"
)


def _library_datasets(ex: Extraction) -> list[tuple[str, str]]:
    """The well-known datasets the job's code imports from a library's dataset collection (``from torchtext.datasets
    import Multi30k``, ``from keras.datasets import cifar10``) in the entry or the modules it reaches: (file, name),
    each dataset once."""
    found: dict[str, str] = {}
    for file, text in [(ex.launch.script or "", ex.code), *ex.modules[:30]]:
        try:
            tree = parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and _DATASET_PACKAGES.match(node.module):
                for alias in node.names:
                    if (canon := canonical_dataset(alias.name)) is not None:
                        found.setdefault(canon, file)
    return [(file, name) for name, file in found.items()]


def _denoised_by_diffusion(code: str) -> bool:
    """Whether the entry script hands a network to a diffusion process it builds: a call of a class or function
    named for diffusion with a name as an argument (``GaussianDiffusionTrainer(net_model, beta_1, beta_T, T)``,
    ``GaussianDiffusion(model, image_size=128)``)."""
    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(n, ast.Call) and "diffusion" in _callee_name(n).lower()
        and any(isinstance(a, ast.Name) for a in [*n.args, *(k.value for k in n.keywords)])
        for n in walk(tree)
    )  # fmt: skip


_COMMENT: Final = re.compile(r"(?m)(?:^|(?<=\s))#[^\n'\"]*$")


def _dataset_registry_entry(ex: Extraction, key: str) -> str | None:
    """The well-known dataset a job's registry maps a short key to (``'C10': dset.CIFAR10`` → CIFAR-10): the value
    of that key in a dict literal of the entry or the modules it reaches, when the value names a known dataset."""
    if not re.fullmatch(r"[\w.-]{1,40}", key):
        return None
    entry = re.compile(rf"""['"]{re.escape(key)}['"]\s*:\s*([A-Za-z_][\w.]*)""")
    for text in (ex.code, *(t for _, t in ex.modules[:20])):
        for m in entry.finditer(text):
            if (canon := canonical_dataset(m.group(1).rsplit(".", 1)[-1])) is not None:
                return canon
    return None


def _without_comments(code: str) -> str:
    """The code without its comments: what the code names comes before what its comments name (``# Adapted from
    the PyTorch ImageNet example``), still read when the code names none (``# wget …/tinyshakespeare/input.txt``)."""
    return _COMMENT.sub("", code)


def _data_class_text(ws: Workspace, ex: Extraction) -> str | None:
    """The source of the job's class whose instance the training is fed from: ``fit(..., datamodule=data)`` or
    ``DataLoader(data, ...)`` with ``data = SomeDataset(...)`` built by the entry script."""
    try:
        tree = parse(ex.code)
    except (SyntaxError, ValueError):
        return None
    fed: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if callee == "fit":
                fed |= {k.value.id for k in node.keywords if k.arg == "datamodule" and isinstance(k.value, ast.Name)}
            elif callee == "DataLoader" and node.args and isinstance(node.args[0], ast.Name):
                fed.add(node.args[0].id)
    for node in walk(tree):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in fed and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
        ):  # fmt: skip
            found = find_class(ws, node.value.func.id, ex.code, ex.launch.script or "")
            if found is None or not found.file:
                continue
            text = ws.read_text_or_none(found.file)
            try:
                module = parse(text) if text else None
            except (SyntaxError, ValueError):
                module = None
            for cls in walk(module) if module is not None else ():
                if isinstance(cls, ast.ClassDef) and cls.name == found.name and cls.lineno == found.line:
                    return ast.get_source_segment(text or "", cls)
    return None


_MODEL_FLAG: Final = re.compile(
    r"(?i)^-{1,2}[\w.-]*(?:model|tokenizer|lm_path|checkpoint|ckpt|pretrain|weights|resume)"
)


def _data_words(args: list[str]) -> list[str]:
    """The command's words less the values of model, tokenizer and checkpoint options (``--lm_path
    mpt-1b-redpajama-200b`` names the data a model was trained on, not this job's)."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if _MODEL_FLAG.match(a):
            skip = "=" not in a
            continue
        out.append(a)
    return out


_SPLIT_DIRS: Final = frozenset({"images", "labels", "train", "train2017", "val", "val2017", "test", "valid", "imgs",
                                "target", "input", "gt", "lq", "hq", "groundtruth", "pytorch"})  # fmt: skip
_CONFIG_FILES: Final = (".yaml", ".yml", ".json", ".toml")


_SHARDS: Final = re.compile(r"\{\d+\.\.\d+\}")  # a brace range of shard files (`{000000..000999}.tar`)


def _folder_name(path: str) -> str | None:
    """The folder a data path names, past its split and role folders (``./Deraining/Datasets/train/Rain13K/target``
    → "Rain13K", ``../Market/pytorch`` → "Market"; of several paths, the first listed); None when only generic
    folders remain."""
    path = path.split(maxsplit=1)[0] if path.split() else path  # (`data/wiki/ data/cc-net/`: "wiki")
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..", "~")]
    if len(parts) > 1 and _SHARDS.search(parts[-1]):
        parts.pop()  # `data/400m/{0..60800}.tar`: the shards a WebDataset brace pattern lists, in the folder named
    if (
        len(parts) > 1
        and (stem := re.fullmatch(r"([\w-]+)\.\w{1,8}", parts[-1]))
        and (stem[1].lower() in _SPLIT_DIRS | _GENERIC_DIRS or _PLACEHOLDER_NAME.fullmatch(stem[1]))
    ):
        parts.pop()  # `data/train/data.list`: a file named only for its role (a list, a split) names nothing
    while parts and (parts[-1].lower() in _SPLIT_DIRS | _GENERIC_DIRS or parts[-1].isdigit()):
        parts.pop()  # (`/jfs/datacomp-1b-0-10k/1`: a numbered shard of the folder above)
    placeholder = {"to", "path", "xxx", "yyy", "your", "my", "dir", "folder"}  # `/path/to/images`
    if parts and "$" in parts[-1]:
        return None  # `--data-dir $DATA_DIR`: a shell variable the command leaves to the user's shell names nothing
    name = (_DATA_SUFFIX.sub("", parts[-1]) or parts[-1]) if parts else None  # (`configs/data/JourneyDB.yaml`)
    return name if name and name.lower() not in placeholder else None


def _data_file_dataset(ws: Workspace, path: str) -> str | None:
    """The dataset a data description file (YOLO's ``data.yaml``: ``path:`` or ``train: ../custom/images/train``)
    points at: a known dataset its text names, else the folder above its split folders."""
    if not path.endswith((".yaml", ".yml")):
        return None
    text = ws.read_text_or_none(path.removeprefix("./"))
    if not text:
        return None
    try:
        data = load_yaml(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    where = data.get("path") if isinstance(data.get("path"), str) else data.get("train")
    if not isinstance(where, str):
        return None
    if (canon := canonical_dataset(where)) is not None:
        return canon
    parts = [p for p in where.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    while parts and (parts[-1].lower() in _SPLIT_DIRS or parts[-1].lower().endswith(".txt")):
        parts.pop()
    return parts[-1] if parts and parts[-1].lower() not in _GENERIC_DIRS else None


_SPLIT_FILE: Final = re.compile(r"(?i)(?:train|training|valid|validation|val|dev|test)(?:[-_.]\w+)?\.\w+")
_GENERIC_DIRS: Final = frozenset({"", ".", "..", "data", "dataset", "datasets", "input", "inputs", "processed", "raw"})


_INIT_KEY: Final = re.compile(
    r"(?:^|[._])(?:init_checkpoint|init_from|init_weights|pretrained(?:_(?:path|weights|model|checkpoint|ckpt))?|"
    r"load_pretrained|load_from)$",
    re.I,
)


def _starts_from_weights(ex: Extraction) -> bool:
    """Whether a setting hands the job pretrained weights to start from (``--init_checkpoint gpt2-medium.bin``,
    ``load_from``), so that it fine-tunes; resuming its own run is not that."""
    for key, v in ex.values.items():
        if _INIT_KEY.search(key) and (
            v.value is True or (isinstance(v.value, str) and v.value.strip().lower() not in _SCRATCH)
        ):
            return True
    return False


def _data_file_name(path: str) -> str:
    """A data file's name, or — when the file is only a split (``data/e2e/train.jsonl``) — the folder that holds it
    ("e2e"), unless that folder is a generic one too (``data/train.jsonl``)."""
    parts = path.rstrip("/").split("/")
    if len(parts) >= 2 and _SPLIT_FILE.fullmatch(parts[-1]) and parts[-2].lower() not in _GENERIC_DIRS:
        return parts[-2]
    return _DATA_SUFFIX.sub("", parts[-1]) or parts[-1]  # (`configs/data/JourneyDB.yaml`: "JourneyDB")


_DATA_SUFFIX: Final = re.compile(r"(?i)\.ya?ml$")  # a file describing the data, not the data's own file


def _known_in(value: Any) -> str | None:
    """The known dataset a setting's value names; for a list of files (``train_file: [coco.json, cc3m.json, …]``),
    every known one, joined ("COCO + CC3M")."""
    if isinstance(value, str):
        return canonical_dataset(value)
    if isinstance(value, list | tuple) and 0 < len(value) <= 64 and all(isinstance(x, str) for x in value):
        found = list(dict.fromkeys(c for x in value if (c := canonical_dataset(x)) is not None))
        return " + ".join(found) if found else None
    return None


def _named_beside(ex: Extraction, key: str) -> tuple[str, Value] | None:
    """A known dataset a setting beside ``key`` (the same section: ``data_params.root_path``) names: a list file
    (``train_list.txt``) says only how the data is split, the folder it points into says which data it is."""
    section = key.rsplit(".", 1)[0] + "." if "." in key else ""
    if not section:
        return None
    for other, v in ex.values.items():
        beside = other != key and other.startswith(section) and "." not in other[len(section) :]
        if beside and isinstance(v.value, str) and not _EVAL_KEY.search(other):
            canon = canonical_dataset(v.value)
            if canon is not None:
                return canon, v
    return None


def _with_config(name: str, config: str) -> str:
    """A dataset with the configuration the job picks (``load_dataset("glue", "mnli")``, ``--dataset_config_name
    mnli``: GLUE's MNLI task, a hundred times the size of its MRPC): "GLUE (mnli)", unless the name already says it."""
    conf = config.strip()
    if not conf or len(conf) > 64 or _PLACEHOLDER_NAME.fullmatch(conf) or conf.lower() in ("default", "plain_text"):
        return name
    squash = re.compile(r"[^a-z0-9]")
    if squash.sub("", conf.lower()) in squash.sub("", name.lower()):
        return name
    return f"{name} ({conf})"


_MODALITY: Final = re.compile(r"(?i)asr|tts|audio|speech|images?|text|video|vision|multimodal|nlp|raw")
_PLACEHOLDER_NAME: Final = re.compile(
    r"(?i)(?:my|custom|customi[sz]ed|your|the)?[_ -]?(?:train(?:ing)?|val(?:id(?:ation)?)?|test|eval)?[_ -]?"
    r"(?:data(?:set)?s?|set|split)?"
    r"|(?i:your|my)[_ -]?(?:[a-z]+[_ -])?(?:path|dir|folder|root)(?:[_ -][a-z]+){0,3}"  # `your_path_to_data`
)
_LIST_KEY: Final = re.compile(r"(?:^|\.)(?:datasets?|dataset_mixture|data_mixture|train_datasets?|data_files)$", re.I)


def _listed_datasets(ex: Extraction, prov: dict[str, FieldSource]) -> str | None:
    """A mixture of datasets a config lists (``datasets: [{id: org/name, ...}, ...]``, ``dataset: [a, b]``): the
    known names of its members (or their hub ids' last parts), joined in order."""
    for key, v in ex.values.items():
        if not isinstance(v.value, list) or not v.value or not _LIST_KEY.search(key) or _EVAL_KEY.search(key):
            continue
        names: list[str] = []
        for item in v.value[:16]:
            ref = item.get("id") or item.get("path") or item.get("name") if isinstance(item, dict) else item
            if isinstance(ref, str) and ref.strip():
                name = canonical_dataset(ref) or ref.rstrip("/").rsplit("/", 1)[-1]
                if name not in names:
                    names.append(name)
        if names:
            prov["dataset"] = _source(v)
            return " + ".join(names)
    weighted: list[tuple[str, Value]] = []  # `dataset_mixer: {HuggingFaceH4/ultrafeedback_binarized: 1.0}`: a mixture
    for key, v in ex.values.items():  # given as hub ids and their weights (flattened to `dataset_mixer.<id>`), or as
        head, _, ref = key.partition(".")  # the weighted sources of a data section (lingua's `data.sources:
        local = _DATA_SOURCES.search(key)  # {dclm_baseline_1.0: 100.0}`, folders under its root)
        if local is not None:
            ref = local[1]
        if (
            (_MIXER_KEY.fullmatch(head) or local is not None)
            and isinstance(v.value, int | float) and not isinstance(v.value, bool)
        ):  # fmt: skip
            name = canonical_dataset(ref) or ref.rstrip("/").rsplit("/", 1)[-1]
            if (_HUB_ID.fullmatch(ref) or local is not None) and name not in (n for n, _ in weighted):
                weighted.append((name, v))
    if weighted:
        prov["dataset"] = _source(weighted[0][1])
        return " + ".join(n for n, _ in weighted)
    return None


_MIXER_KEY: Final = re.compile(r"dataset_mixer|dataset_mixture|data_mixture|datasets_mixer", re.I)
_DATA_SOURCES: Final = re.compile(r"^(?:train_)?data(?:set)?s?\.sources\.([\w.-]{1,80})$", re.I)


def _params(
    ex: Extraction, pretrained: Value | None, dataset: str | None, count: int | None, model_type: str | None = None
) -> float | None:
    params = None
    if pretrained is not None:
        name = str(pretrained.value)  # the table's exact count, else the stated size, else a lower-case size token
        params = _known_size(name) or _params_from_name(name) or _params_from_name(name, _SIZE_TOKEN_LOWER)
    if params is None and count:  # the job's own model, counted by following its code
        params = _millions(count)
    if (
        params is None and model_type in (None, "decoder_only_transformer")
        and ex.get("n_layer", "num_layers", "num_hidden_layers", "n_layers") is not None
    ):  # fmt: skip
        char_level = (
            "char" in (dataset or "").lower()
            or (char_level_dataset(dataset) and not _tokenized(ex))  # (gpt-neox reads enwik8 through GPT-2's BPE)
            or _CHAR_VOCAB.search(ex.code) is not None
        )
        if char_level or _tokenized(ex) or _VOCABULARY.search(ex.code) or _int_setting(ex, *_VOCAB_KEYS):
            params = _gpt_params(ex, char_level=char_level)  # a GPT's shape (not an LSTM's) over a text vocabulary
            # (a GPT over states and actions with no vocabulary, the Decision Transformer's, is not sized so)
    return params


_VOCAB_KEYS: Final = ("vocab_size", "padded_vocab_size", "n_vocab")
_VOCABULARY: Final = re.compile(r"\bvocab\w*|\btokeni[sz]\w*", re.I)


# Detectors' losses, matchers and post-processing mention boxes hundreds of times; classification and generation
# code a dozen at most (crop helpers). Diffusion code likewise names its noise schedule and samplers throughout.
_BOX_WORDS: Final = re.compile(r"\b(?:bbox\w*|boxes|box_iou|\w+_box\w*|nms|anchors?|iou_threshold|giou)\b", re.I)


# Words only segmentation code uses ("segment", "seg_len" and ignore_index also occur in time series and LM code).
_SEGMENTATION_WORDS: Final = re.compile(
    r"\b(?:\w*segmentation\w*|miou|mean_iou|mean_iu|\w*Seg(?:Metrics|Head|Net|mentation)\w*|"
    r"(?-i:[A-Z]\w*Seg|Seg[A-Z]\w*)|\w*Loss2d|fast_hist|per_class_iu|aspp\w*)\b|ignore_index\s*=\s*255",
    re.I,
)  # (CamelCase `DRNSeg`/`SegList`, per-pixel losses, FCN's confusion-matrix IoU helpers, DeepLab's atrous spatial
# pyramid pooling head, the void label 255)


_DIFFUSION_WORDS: Final = re.compile(
    r"\b(?:\w*diffusion\w*|q_sample|p_sample|alphas_cumprod|betas|noise_pred|\w*sde\w*|sigma_min|sigma_max|"
    r"num_timesteps|marginal_prob)\b",
    re.I,
)


_CAUSAL_LM: Final = re.compile(r"\b\w*ForCausalLM\b")


def _compares_pairs(ex: Extraction, cls: str) -> bool:
    """Whether the job's own trainer class ``cls`` (in the entry or a module it reaches) works on preference pairs:
    its body reads both chosen and rejected answers (SimPO's, CPO's and DPO's losses)."""
    header = re.compile(rf"^class {re.escape(cls)}\(", re.M)
    for text in [ex.code, *(t for _, t in ex.modules)]:
        if (m := header.search(text)) is not None:
            end = re.compile(r"^\S", re.M).search(text, m.end())
            body = text[m.end() : end.start() if end is not None else len(text)]
            return "chosen" in body and "rejected" in body
    return False


_TRAINER_STAGES: Final = {"SFTTrainer": "sft", "DPOTrainer": "dpo", "KTOTrainer": "kto", "ORPOTrainer": "dpo",
                           "CPOTrainer": "dpo", "RewardTrainer": "rm"}  # fmt: skip
_CAUSAL_LM_TASKS: Final = frozenset({"instruction_finetuning", "preference_optimization_dpo"})


def _loads_causal_lm(ex: Extraction) -> bool:
    """Whether the entry script or the job's modules it reaches load a model as a causal LM (``AutoModelForCausalLM``,
    ``LlamaForCausalLM`` or a subclass the job defines)."""
    return bool(_CAUSAL_LM.search(ex.code)) or any(_CAUSAL_LM.search(t) for _, t in ex.modules)


# What a diffusion training step does, in the entry script itself: noise added by a noise scheduler (diffusers).
_DIFFUSION_CALLS: Final = re.compile(r"\.add_noise\(|\b(?:DDPM|DDIM|PNDM|EulerDiscrete|DPMSolverMultistep)Scheduler\b")


def _stated_category(ex: Extraction) -> str | None:
    """The task family a config states for its data, loss or model (``dataset.category: "classification"``, as
    toolkits that train several tasks from one code base write it): classification, segmentation or detection."""
    for key, v in ex.values.items():
        leaf = key.rsplit(".", 1)[-1].lower()
        if leaf in ("category", "task_type") and isinstance(v.value, str) and not _EVAL_KEY.search(key):
            word = v.value.strip().lower()
            if word in ("classification", "segmentation", "detection"):
                return word
    return None


# A setting that hands the job weights (a checkpoint, a hub module), not only an architecture's name
_LOADS_WEIGHTS: Final = re.compile(r"(?i)checkpoint|ckpt|pretrain|weights|hub_module|init|load|resume")
_SPAN_HEADS: Final = re.compile(r"\b(?:start|end)_(?:positions|logits)\b")  # an extractive QA head's outputs


def _vocabulary(ex: Extraction, words: re.Pattern[str], enough: int = 60, spread: int = 1) -> bool:
    """Whether the job's own code uses a field's vocabulary ``enough`` times (the entry and the modules it reaches),
    in the entry or in at least ``spread`` of the modules: what the code computes with, not what a file is called (a
    package's segmentation head reached through its ``__init__`` beside the classifier the job trains is one file)."""
    count = len(words.findall(ex.code))
    files = spread if count else 0  # (the entry's own words: the code that runs, in any number of files)
    for _, text in ex.modules:
        if count >= enough and files >= spread:
            break
        found = len(words.findall(text))
        count, files = count + found, files + (found > 0)
    return count >= enough and files >= spread


def identify_workload(
    ws: Workspace, ex: Extraction, prov: dict[str, FieldSource], cuts: list[str] | None = None, command: str = ""
) -> WorkloadIdentity:
    """Model name, type, parameters, dataset and task; ``prov`` gets where each came from, ``cuts`` why a parameter
    count stopped (recursion, the step budget); ``command`` as submitted (a README may introduce it)."""
    counter = ParamCounter(ws)
    try:
        return _identify(ws, ex, prov, counter, command)
    finally:
        if cuts is not None:
            cuts.extend(dict.fromkeys(counter.cuts))


def _identify(
    ws: Workspace, ex: Extraction, prov: dict[str, FieldSource], counter: ParamCounter, command: str = ""
) -> WorkloadIdentity:
    ident = WorkloadIdentity()
    script = ex.launch.script or ""
    found_pretrained = _pretrained(ex)
    flag_key = ""  # the setting that named a known architecture, when one did
    title = readme_title(ws)
    target = _hydra_target(ex)
    call = _model_call(ex, ws) if target is None and script.endswith(".py") else None
    if target is not None:
        model = _model_from_target(ws, ex, counter, target, prov)
    elif call is not None:
        model = _model_from_call(ws, ex, counter, call, prov)
    elif script.endswith(".py"):
        model = _model_from_factory(ws, ex, counter, prov)
    else:
        model = _Model()
    if model.name is None and found_pretrained is None and target is None and script.endswith(".py"):
        model = _model_in_training_callee(ws, ex, counter, prov)  # a thin entry: `train(cfg)` builds and fits it
    if model.name is None and found_pretrained is None and target is None and script.endswith(".py"):
        model = _model_in_job_class(ws, ex, counter, prov)  # `dqn = Agent(args, env)` holds and trains the network
    if model.name is None and found_pretrained is None:
        model = _model_from_type_setting(ws, ex, counter, prov)
    if model.name is None and found_pretrained is None:
        model = _model_from_class_path(ws, ex, prov, counter)  # dnnlib `G_kwargs.class_name`, st-gcn `model:`
    if model.name is None and found_pretrained is None:
        model = _model_from_openmmlab(ex, prov)
        if model.name is None:
            model = _model_from_library_registry(ex, prov)
        if model.name is None:
            model = _model_from_checkpoint_table(ex, prov)  # `clip._MODELS[cfg.MODEL.BACKBONE.NAME]`
    elif model.cls is None and found_pretrained is None and target is None:
        typed = _model_from_type_setting(ws, ex, counter, prov)  # the call built a harness (`M(opt)`, KAIR's model
        if typed.name is not None:  # wrapper); a setting names the network it trains (the harness's count is its)
            model = typed if typed.count is not None else _Model(typed.name, typed.cls, model.count, model.kinds)
    if (
        target is None
        and (model.name is None or _is_lightning_class(ex, model.name))
        and (by_path := _path_registered_model(ws, ex, counter)) is not None
    ):  # fmt: skip  (safari's `model._name_: lm` → ConvLMHeadModel, which its LightningModule instantiates)
        model = by_path if by_path.count is not None else _Model(by_path.name, None, model.count, model.kinds)
        prov["model_name"] = registered_source(ex)
    if model.count is None and model.name and (injected := _injected_count(ws, ex, counter, model.name)) is not None:
        model = _Model(model.name, model.cls, injected, model.kinds, model.part, model.file)
    if (
        model.count is None and script.endswith(".py") and target is None
        and (found_pretrained is None or found_pretrained[0] == "flag")
        and (held := _count_in_holder(ws, ex, counter)) is not None
    ):  # fmt: skip
        model = _Model(model.name, model.cls, held[0], held[1], model.part, model.file)  # `exp = Exp(args)`
    ident.model_name = model.name
    named_family = title.split(":")[0].strip() if title and len(title.split(":")[0]) <= 24 else ""
    if model.part and model.name and named_family:
        ident.model_name = f"{named_family} ({model.name})"  # StyleTTS 2 with its `decoder.type: istftnet`
    heads_only = model.cls is not None and not model.cls.backbones and model.cls.layers <= {"linear"}
    registry_choice = target is not None and target[0].endswith(
        "._model_class"
    )  # (a registry's choice names the model: the
    # backbone its config names, `vision_backbone: resnet18`, is a part of it)
    if found_pretrained is None and (model.name is None or model.cls is None or heads_only) and not registry_choice:
        # a class of linear heads only trains a network it is handed: the known one the flags name is that network
        flagged = _known_flag(
            ex,
            weights_files=model.cls is None,
            trained=call[1] if call else None,
            checkpoint=call is not None and _built_from_checkpoint(ex.code, call[1]),
        )
        if flagged is not None and not _decorates(flagged[1], model):  # `--cfg yolov5s.yaml`, `--model deit_small_…`
            found_pretrained, flag_key = ("flag", flagged[1]), flagged[0]
    elif found_pretrained is None and model.cls is not None and model.count is None:
        # the job's class could not be counted (its shape comes from a config object the interpreter cannot build:
        # `VisionTransformer(CONFIGS[args.model_type])`); a setting that names a known architecture, not a backbone
        from_checkpoint = call is not None and _built_from_checkpoint(ex.code, call[1])
        flagged = _known_flag(
            ex,
            weights_files=from_checkpoint,
            backbones=False,
            trained=call[1] if call and not from_checkpoint else None,
            checkpoint=from_checkpoint,
        )
        if flagged is not None:  # `--model_type ViT-B_16`; `Model(cfg or ckpt["model"].yaml)` with `--weights x.pt`
            found_pretrained, flag_key = ("flag", flagged[1]), flagged[0]
    pretrained = found_pretrained[1] if found_pretrained else None
    if found_pretrained is not None:
        ident.model_name = _pretrained_name(ex, *found_pretrained)
        prov["model_name"] = _source(found_pretrained[1])
    if pretrained is None and model.cls is not None and model.cls.backbones and ident.model_name:
        backbone_name = model.cls.backbones[0][0]  # the backbone a wrapper trains; a wrapper of a family of its own
        ident.model_name = (  # (a detector, `ConditionalDETR` over a ResNet-50) leads, a generic one follows
            f"{ident.model_name} ({backbone_name})"
            if _LEADING_FAMILY.search(ident.model_name)
            else f"{backbone_name} ({ident.model_name})"
        )
    family = title.split(":")[0].strip() if title and len(title.split(":")[0]) <= 24 else ""
    shaped = ex.uses.get("model_config")  # `LLaMAConfig.from_name("7B")`: a known architecture's shape
    shape_name = shaped.value if shaped is not None and isinstance(shaped.value, str) else None
    if shape_name:  # "LLaMA-7B" (the class family and the size), else the name given alone ("pythia-160m")
        shape_name = next((n for n in (shape_name, shape_name.partition("-")[2]) if n and known_model(n)), None)
    if pretrained is None and shape_name and shaped is not None:
        ident.model_name = shape_name.replace("-", " ") if shape_name == shaped.value else shape_name
        prov["model_name"] = FieldSource(file=shaped.file, line=shaped.line, path="use")
    elif pretrained is None and ident.model_name and not model.from_config:
        ident.model_name = _described(ident.model_name, family, ex)
    names = [str(pretrained.value) if pretrained else "", ident.model_name or "", model.cls.name if model.cls else ""]
    ident.model_type = model_type_of(names, model.cls)
    if ident.model_type in (None, "mlp") and (blocks := _type_by_blocks(ws, model, ex)) is not None:
        ident.model_type = blocks  # the class's own layers are linear, the blocks it imports are a ViT's (Latte's
        # `from timm.models.vision_transformer import Mlp, PatchEmbed`)
    if ident.model_type == "mlp" and (model.kinds or {}).get("attention"):
        ident.model_type = None  # the counted network attends (a class named for attention over linear layers)
    if (
        ident.model_type == "cnn"
        and model.cls is not None
        and (_attention_over_patches(model.kinds or {}) or _patches_through_linear(model.kinds or {}))
    ):
        ident.model_type = "vision_transformer"  # the class's own layers seen: convolutions; the network counted:
        # attention blocks of linear layers hold most parameters, convolutions a stem and a head (Depth Anything:
        # a DINOv2 ViT-L under a DPT head), not a CNN
    ident.model_type = ident.model_type or model_type_of([family], None) or _type_by_layers(model)
    if ident.model_type is None and pretrained is None and title:
        ident.model_type = specific_family(title)  # the project's title names the family (a title too long to be
        # the model's name: "FastSpeech 2 - PyTorch Implementation")
    if ident.model_type == "unet" and (specific_family(title) == "diffusion_unet" or _denoised_by_diffusion(ex.code)):
        ident.model_type = "diffusion_unet"  # a U-Net trained to denoise: "Denoising Diffusion Probabilistic
        # Models", `trainer = GaussianDiffusionTrainer(net_model, ...)` — not a segmentation network
    kinds = model.kinds or {}
    conv = kinds.get("conv", 0) + kinds.get("patch", 0)
    if ident.model_type == "mlp" and (conv > 0 or kinds.get("rnn", 0) > 0):
        # a class of linear heads around a network it is handed (`BaselineTrain(backbone.Conv4, 200)`): the
        # counted model has that network's convolutions or recurrent layers
        ident.model_type = (
            "vision_transformer" if _patches_through_linear(kinds) else "rnn" if kinds.get("rnn", 0) > conv else "cnn"
        )
    ident.dataset = _dataset(ex, title, prov, ws, command)
    sized = pretrained
    registry = ex.uses.get("model")
    built_by_job = found_pretrained is not None and (
        found_pretrained[0] == "flag"
        or (registry is not None and ("[...]()" in registry.how or registry.how.startswith("getattr")))
    )  # a setting names an architecture that a constructor of a registry builds, not a checkpoint loaded
    if built_by_job and model.count is not None:
        sized = None  # the job's code builds the named architecture (a CIFAR VGG-16, a ResNet + a projector): its count
    if sized is None and shape_name and shaped is not None:
        sized = Value(shape_name, shaped.file, shaped.line)
    if (
        sized is not None and isinstance(sized.value, str) and _builds_image_text(ex)
        and known_model(clip := f"clip-{handle_name(sized.value)}") is not None
    ):  # fmt: skip
        sized = Value(clip, sized.source, sized.line)  # `create_model_and_transforms("ViT-B-32")`: the CLIP model of
        # that image tower and its text tower, not the image classifier of the same name
    ident.params_millions = _params(ex, sized, ident.dataset, model.count, ident.model_type)
    shape = ex.uses.get("model_shape")  # a model built at random from a checkpoint's config: named (and sized, when
    if ident.model_name is None and shape is not None and isinstance(shape.value, str) and shape.value.strip():
        ident.model_name = shape.value.strip()  # the architecture is a known one) by it, trained from scratch
        prov["model_name"] = FieldSource(file=shape.file, line=shape.line, path="use")
        if ident.params_millions is None and (size := _known_size(ident.model_name)) is not None:
            ident.params_millions = size
            prov["params_millions"] = prov["model_name"]
    dict_registry = registry is not None and "__dict__[" in registry.how  # `models.__dict__[args.arch](...)`
    if (
        ident.params_millions is None
        and pretrained is not None
        and (registered := _registered_builder(ws, str(pretrained.value), ex.modules, plain_functions=dict_registry))
    ):
        told = ex.uses.get("registry_kwargs")  # the keyword arguments the registry call passes (`width_mult=1.0`)
        kwargs = told.value if told is not None and isinstance(told.value, dict) else {}
        count = counter.count_class(registered, str(pretrained.value), kwargs)  # the job's own registered builder
        ident.params_millions = round(count / 1e6, 3) if count else None
        kinds = _layer_kinds(counter) if count else {}
        if ident.model_type is None and kinds:  # the layers the builder made say the family (PVT's `pvt_small`:
            ident.model_type = (  # patch-embedding convolutions, attention blocks of linear layers)
                "vision_transformer" if _attention_over_patches(kinds) else _type_by_layers(_Model(kinds=kinds))
            )
    if ident.params_millions is not None:
        prov["params_millions"] = prov.get("model_name", FieldSource(file=script))
    from_flag = found_pretrained is not None and found_pretrained[0] == "flag"  # `--backbone resnet50`
    if (
        ident.model_type in (None, "cnn", "vision_transformer")
        and (pretrained is None or from_flag)
        and (_vocabulary(ex, _BOX_WORDS))
    ):
        ident.model_type = "cnn_detector" if ident.model_type in (None, "cnn") else ident.model_type
        ident.task = "object_detection"  # the job's code computes with boxes: matching, IoU, NMS, anchors
        return ident
    text_data = dataset_task(ident.dataset) == "language_modeling"
    if text_data and ident.model_type == "diffusion_unet" and (pretrained is None or from_flag):
        ident.model_type = None  # a diffusion model of text (masked or score-entropy diffusion over tokens, trained on
        # OpenWebText): a language model, whatever its class is named; its layers say the family below
    if (
        not text_data
        and ident.model_type in (None, "cnn", "vision_transformer", "diffusion_unet", "unet")
        and (
            pretrained is None or from_flag or built_by_job or _DIFFUSION_CALLS.search(ex.code) is not None
        )  # (a registry building the named architecture: Lumina's `models.__dict__[args.model](…)`; a config naming
        # the architecture the job builds: PixArt's `model = …`; a checkpoint trained on the noise a scheduler adds:
        and (_vocabulary(ex, _DIFFUSION_WORDS) or _DIFFUSION_CALLS.search(ex.code) is not None)  # a diffusion
        # transformer fine-tuned)
    ):
        ident.model_type = ident.model_type if ident.model_type not in (None, "cnn", "unet") else "diffusion_unet"
        ident.task = "image_generation_diffusion"  # noise schedules, q/p sampling, SDE marginals
        return ident
    if ident.model_type is None and pretrained is not None and _loads_causal_lm(ex):
        ident.model_type = "decoder_only_transformer"  # the checkpoint is loaded as a causal language model
    made_for = dataset_task(ident.dataset)  # (Cityscapes: per-pixel labels; UCF101: video clips; enwik8: text)
    if made_for == "time_series_forecasting" and ident.model_type == "cnn" and (model.kinds or {}).get("attention"):
        ident.model_type = None  # an attention model over series (Informer's distilling convolutions): no CNN
    if (
        ident.model_type is None and pretrained is None and _attention_over_patches(model.kinds or {})
        and made_for not in ("time_series_forecasting", "language_modeling", "text_to_speech")
    ):  # fmt: skip
        ident.model_type = "vision_transformer"  # a counted network of attention blocks over a convolution's
        # patches (Focal Transformer's windows), its class and names telling no family (not a series' patches)
    gan = any(_CRITIC.search(t) for t in [ex.code, *(t for _, t in ex.modules[:20])])
    if made_for is not None and gan:
        made_for = None  # a GAN trained on it (pix2pixHD's label maps to photos) does not predict its labels
    stated = _stated_category(ex)  # `dataset.category: "classification"`: the config says what the job does
    if (
        ident.model_type in (None, "cnn", "vision_transformer")
        and stated in (None, "segmentation")
        and (made_for == "semantic_segmentation" or _vocabulary(ex, _SEGMENTATION_WORDS, enough=20, spread=2))
    ):
        ident.model_type = ident.model_type or "cnn"
        ident.task = "semantic_segmentation"  # per-pixel labels: segmentation datasets, metrics and heads, mIoU
        return ident
    stage = ex.get("stage")
    if stage is not None and not isinstance(stage.value, str):
        stage = None  # DeepSpeed's `zero_optimization.stage: 3` is no training stage (LLaMA-Factory's `stage: sft`)
    if stage is None and ex.launch.launcher == "axolotl":  # `rl: dpo`, else datasets in a prompt format: SFT
        rl = ex.get("rl")
        sets = ex.get("datasets")
        prompted = (
            isinstance(sets, Value)
            and isinstance(sets.value, list)
            and any(isinstance(d, dict) and d.get("type") for d in sets.value)
        )
        stage = (
            Value(str(rl.value), rl.source, rl.line)
            if rl is not None and rl.value
            else (Value("sft", sets.source, sets.line) if prompted and sets is not None else None)
        )
    if stage is None:  # the objective a config group or setting selects (HALOs' `loss=sft`, `loss.name: dpo`, Firefly's
        chosen = (ex.values.get(k) for k in ("loss.name", "loss", "objective", "loss_type", "training_objective"))
        stage = next((v for v in chosen if v is not None and str(v.value) in ("sft", "dpo", "kto")), None)
        kind = ex.get("task_type")  # (`pretrain` / `sft` / `dpo`; PEFT's `CAUSAL_LM` task types say nothing of it)
        if stage is None and kind is not None and str(kind.value) in ("pretrain", "sft", "dpo", "kto"):
            stage = Value("pt" if kind.value == "pretrain" else str(kind.value), kind.source, kind.line)
    built = ex.uses.get("trainer_built")  # the library trainer the job builds where its code runs
    if stage is None and built is not None and (built_stage := _TRAINER_STAGES.get(str(built.value))) is not None:
        stage = Value(built_stage, built.file, built.line)
    if stage is None and (own := ex.uses.get("own_trainer")) is not None and _compares_pairs(ex, str(own.value)):
        stage = Value("dpo", own.file, own.line)  # the job's own trainer scores chosen against rejected answers
    entry = PurePosixPath(ex.launch.script or "").stem
    if stage is None and (named := re.search(r"(?:^|[_-])(sft|dpo|kto)(?:[_-]|$)", entry.lower())) is not None:
        stage = Value(named.group(1), ex.launch.script or "")  # `openrlhf.cli.train_dpo`: the entry says its stage
    template = ex.get("conversation_template", "chat_template")  # LMFlow's `--conversation_template llama3`: the
    if stage is None and template is not None and isinstance(template.value, str) and template.value.strip():
        stage = Value("sft", template.source, template.line)  # data is rendered as chat turns (supervised tuning)
    dead = ex.uses.get("dead_lines")
    ident.task = task_of(
        ident.model_type,
        code=live_text(ex.code, dead.value) if dead is not None and dead.file == ex.launch.script else ex.code,
        hints=f"{readme_lead(ws) or title} {ident.dataset or ''} {ident.model_name or ''}",
        pretrained=(
            pretrained is not None
            and (
                found_pretrained is None or found_pretrained[0] != "flag" or _LOADS_WEIGHTS.search(flag_key) is not None
            )
        )
        or _starts_from_weights(ex),  # (a flag that names the architecture, `--llama.base_model llama_7b`, loads none)
        stage=str(stage.value) if stage is not None else None,
        trainer=str(built.value) if built is not None and built.value else None,
        tokens=model.cls is not None and "embedding" in model.cls.layers and "conv" not in model.cls.layers,
        reached=_reached_text(ws, ex, model),
        dataset=ident.dataset or "",
    )
    if (
        stated == "classification" and ident.task in (None, "semantic_segmentation", "object_detection")
        and ident.model_type in (None, "cnn", "vision_transformer") and made_for is None
        and canonical_dataset(ident.dataset or "") is not None
    ):  # fmt: skip
        ident.task = "image_classification"  # the config's classification over a known image dataset (the README
        # of a toolkit that also segments and detects describes them all)
    if (
        ident.task is None and made_for in (None, "image_classification") and not gan
        and ident.model_type in (None, "cnn") and canonical_dataset(ident.dataset or "") is not None
        and any(
            re.fullmatch(r"(?:\w+\.)?loss(?:\.\w+)?", k) is not None and "cross_entropy" in str(v.value).lower()
            for k, v in ex.values.items()
        )
        and any(re.fullmatch(r"(?:\w+\.)?metrics?", k) and "accuracy" in str(v.value) for k, v in ex.values.items())
    ):  # fmt: skip
        ident.task = "image_classification"  # a network of no listed family (safari's long convolutions over CIFAR's
        # pixels) trained with the cross-entropy its config names and scored by accuracy: classifying the images
    if gan and ident.task == "image_classification":
        ident.task = None  # a GAN's discriminator classifies real from fake; the generator it trains is no classifier
    if ident.task == "image_classification" and _embeds_tokens(ws, model):
        ident.task = None  # a classifier over token embeddings (Kim's text CNN) classifies text, not images
    if made_for == "video_classification" and ident.task in (None, "image_classification"):
        ident.task = made_for  # a classifier over clips (C3D on UCF101), not over images
    if made_for == "time_series_forecasting" or (made_for is None and _forecasts(ex)):
        ident.task = "time_series_forecasting"  # ETT, Weather, ECL: series forecast ahead; no class labels, no
        # images; or a job set by a forecast horizon and the context it reads (GluonTS-style `prediction_length`
        # and `context_length`: Chronos' T5 over tokenised series is no language model)
    if made_for == "language_modeling" and ident.task is None and pretrained is None:
        ident.task = made_for  # a model trained on a text corpus from scratch (PaLM on enwik8)
    if (
        made_for == "question_answering_finetuning"
        and (ident.task is None or (ident.task == "masked_language_modeling" and pretrained is not None))
        and _vocabulary(ex, _SPAN_HEADS, enough=2)
    ):  # fmt: skip
        ident.task = made_for  # answer spans predicted over SQuAD's questions (not a corpus the code only names), also
        # by an encoder checkpoint fine-tuned to them (Longformer on TriviaQA in SQuAD's format), not masked tokens
    if ident.model_type is None and pretrained is not None and ident.task in _CAUSAL_LM_TASKS:
        ident.model_type = "decoder_only_transformer"  # SFT / DPO trainers fine-tune a causal language model
    if ident.model_type is None and ident.task == "language_modeling" and re.search(
        r"(?i)transformer|attention|attn|gpt", " ".join(names)
    ):  # fmt: skip
        ident.model_type = "decoder_only_transformer"  # a transformer of the job's trained to predict the next token
    if (env := ex.uses.get("dataset")) is not None and env.how.startswith(("gym.make", "gymnasium.make")):
        ident.task = None  # an agent trained in an environment: reinforcement learning, no task of the vocabulary
    attends = re.search(r"(?i)transformer|attention|attn", " ".join(names))
    if ident.model_type is None and pretrained is None and not attends and not (model.kinds or {}).get("attention"):
        # no model was found to name the family (and no name says attention): the layers the job's own modules build.
        # Weak evidence, so it is taken last and decides no task (a CNN there may as well be a GAN's or a pose net's)
        ident.model_type = layer_census([ex.code, *(t for _, t in ex.modules)])
    return ident
