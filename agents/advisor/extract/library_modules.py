"""torchvision's models as the parameter counter holds them, from ``library_modules.json`` (written by
:mod:`.make_library_modules` from torchvision itself): an object whose attributes are the model's children, so that
a job that takes one apart (``list(resnet.children())[:-1]``), replaces its head (``model.fc = nn.Linear(
model.fc.in_features, 2)``, ``vgg.classifier[6] = …``) or keeps a part (``vgg16().features``) is counted from what
it keeps; ``num_classes=`` sizes the layers it sizes."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Final

from schedmate.agents.advisor.extract.torch_layers import layer_kind
from schedmate.agents.advisor.extract.values import UNKNOWN, Layer, Obj

__all__ = ["is_library_builder", "library_module"]

_TABLE: Final = Path(__file__).with_name("library_modules.json")


@functools.cache
def _models() -> dict[str, Any]:
    models: dict[str, Any] = json.loads(_TABLE.read_text(encoding="utf-8"))["models"]
    return models


def is_library_builder(name: str) -> bool:
    """Whether ``name`` is one of torchvision's model builders (``resnet18``, ``fasterrcnn_resnet50_fpn``)."""
    return name in _models()


def library_module(name: str, kwargs: dict[str, Any]) -> tuple[Obj, int] | None:
    """The model torchvision's builder ``name`` returns, and its parameters; None for another name. A class count
    that cannot be told leaves the builder's default (its pretrained head)."""
    node = _models().get(name)
    if node is None:
        return None
    default = int(node["default_classes"])
    classes = kwargs.get("num_classes", default)
    if classes is UNKNOWN or not isinstance(classes, int) or isinstance(classes, bool) or not 0 < classes < 10**7:
        classes = default
    built = _build(node, classes - default, classes, default)
    if not isinstance(built, Obj):
        return None
    return built, int(node["params"]) + int(node.get("per_class", 0)) * (classes - default)


def _build(node: dict[str, Any], extra: int, classes: int, default: int) -> Any:
    """A node of the table: a list for a Sequential of numbered members, an object for a module with named
    children, else a layer of known size (in/out sizes for linear, convolution and norm layers)."""
    if "items" in node:
        return [_build(n, extra, classes, default) for n in node["items"]]
    if "children" in node:
        attrs = {k: _build(n, extra, classes, default) for k, n in node["children"]}
        return Obj(attrs=attrs, cls=str(node["cls"]), origin=("lib", str(node["cls"])))
    params = int(node["params"]) + int(node.get("per_class", 0)) * extra
    out = int(node.get("out", 0))
    if node.get("per_class") and out % default == 0:
        out = out // default * classes  # `cls_score` (num_classes), `bbox_pred` (4 x num_classes)
    cls = str(node["cls"])
    return Layer(params, out=out, width=out, inp=int(node.get("in", 0)), kind=layer_kind(cls), cls=cls)
