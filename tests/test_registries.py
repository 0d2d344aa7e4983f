"""Registries filled by decorators: Python runs a module-level definition's decorators when the module is imported,
so ``@register_model("conv4")`` puts the builder into the job's dict before a factory looks a setting up in it.

The model sources below are written by the test; torch executes them only to get the true count (the advisor never
executes code — it walks the AST)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
import torch  # noqa: F401 - the truth below needs torch importable

from schedmate.agents.advisor.extract.param_count import ParamCounter
from schedmate.agents.advisor.extract.workspace import Workspace

FACTORY = """
MODEL_REGISTRY = {}


def register_model(model_name):
    def decorator(f):
        MODEL_REGISTRY[model_name] = f
        return f
    return decorator


def get_model(model_name, model_opt):
    if model_name in MODEL_REGISTRY:
        return MODEL_REGISTRY[model_name](**model_opt)
    raise ValueError("Unknown model {:s}".format(model_name))
"""

INIT = """
from zoo.models.factory import get_model, register_model

import zoo.models.few_shot
"""

FEW_SHOT = """
import functools

from torch import nn

from zoo.models import register_model


def traced(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


class Protonet(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder


@register_model("conv4")
@traced
def load_conv4(**kwargs):
    hid = kwargs["hid_dim"]

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))

    return Protonet(nn.Sequential(block(kwargs["x_dim"][0], hid), block(hid, hid), block(hid, kwargs["z_dim"])))


@register_model("linear")
def load_linear(**kwargs):
    return nn.Linear(10, 10)
"""

UTILS = """
from zoo.models import get_model


def load(opt):
    model_opt = {k: v for k, v in opt.items() if k != "model_name"}
    return get_model(opt["model_name"], model_opt)
"""


@pytest.fixture
def zoo(tmp_path: Path) -> Path:
    """A package laid out as jakesnell/prototypical-networks lays out its models (names changed)."""
    for rel, text in {
        "zoo/__init__.py": "",
        "zoo/models/__init__.py": INIT,
        "zoo/models/factory.py": FACTORY,
        "zoo/models/few_shot.py": FEW_SHOT,
        "zoo/utils.py": UTILS,
        "train.py": "import zoo.utils as utils\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _truth(root: Path, opt: dict[str, object]) -> int:
    sys.path.insert(0, str(root))
    try:
        from zoo import utils  # type: ignore[import-not-found]  # noqa: PLC0415 - the test's own source, for truth

        return sum(p.numel() for p in utils.load(opt).parameters())
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "zoo" or m.startswith("zoo.")]:
            del sys.modules[name]


def test_a_decorator_registry_is_filled_on_import_and_looked_up_by_a_setting(zoo: Path) -> None:
    """``model_utils.load(opt)`` → ``get_model(name, opt)`` → ``MODEL_REGISTRY[name](**opt)``: the registry was
    filled by ``@register_model`` when the package's ``__init__`` imported the module, under a second decorator that
    wraps the function; the count equals torch's."""
    opt = {"model_name": "conv4", "x_dim": [1, 28, 28], "hid_dim": 64, "z_dim": 64}
    truth = _truth(zoo, opt)
    call = ast.parse("utils.load(opt)").body[0].value  # type: ignore[attr-defined]
    counter = ParamCounter(Workspace(zoo))
    env = {"utils": ("module", "zoo/utils.py"), "opt": opt}
    assert counter.count_call(call, env, "train.py") == truth == 74_880


def test_the_setting_picks_the_registered_entry(zoo: Path) -> None:
    """Another key of the same registry builds the other entry (a ``nn.Linear``: 110 parameters)."""
    call = ast.parse("utils.load(opt)").body[0].value  # type: ignore[attr-defined]
    counter = ParamCounter(Workspace(zoo))
    env = {"utils": ("module", "zoo/utils.py"), "opt": {"model_name": "linear"}}
    assert counter.count_call(call, env, "train.py") == 110
