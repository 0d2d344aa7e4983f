"""Writes ``library_modules.json``: how torchvision's model builders are put together, for the parameter counter.

Run where torchvision is installed (it is not a dependency of SchedMate)::

    python -m schedmate.agents.advisor.extract.make_library_modules > library_modules.json

Each builder is called with random weights (nothing is downloaded) and described as the counter needs it: its direct
children in order (name, class, parameters, the in/out sizes of linear, convolution and norm layers), the members of
children that are ``nn.Sequential``/``nn.ModuleList``, and the full path down to every layer whose size depends on
``num_classes`` (each node's parameters as ``params + per_class * (num_classes - default)``). A job that takes a model
apart (``list(resnet.children())[:-1]``, ``model.fc = nn.Linear(model.fc.in_features, 2)``, ``vgg.features``) is then
counted from what it keeps.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import torch
from torch import nn

_PROBES = (7, 11)  # class counts the builders are called with, to find the layers num_classes sizes
_AS_PRETRAINED = {"googlenet": {"aux_logits": False}}  # how the pretrained weights load it (6.6 M, not 13.0 M)


def _params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _sizes(module: nn.Module) -> dict[str, int]:
    if isinstance(module, nn.Linear):
        return {"in": module.in_features, "out": module.out_features}
    if isinstance(module, nn.Conv1d | nn.Conv2d | nn.Conv3d | nn.ConvTranspose2d):
        return {"in": module.in_channels, "out": module.out_channels}
    if isinstance(module, nn.BatchNorm2d | nn.BatchNorm1d):
        return {"out": module.num_features}
    return {}


def _node(
    path: str, module: nn.Module, probes: list[dict[str, nn.Module]], heads: set[str], depth: int
) -> dict[str, Any]:
    """One module: class, parameters, per-class slope, sizes; its members where the counter may reach them."""
    found = [p[path] for p in probes]
    slope = (_params(found[1]) - _params(found[0])) // (_PROBES[1] - _PROBES[0])
    node: dict[str, Any] = {"cls": type(module).__name__, "params": _params(module), **_sizes(module)}
    if slope:
        node["per_class"] = slope
    kids = list(module.named_children())
    on_head = any(h == path or h.startswith(f"{path}.") for h in heads) if path else True
    if kids and (on_head or (depth == 1 and isinstance(module, nn.Sequential | nn.ModuleList))):
        below = [_node(f"{path}.{k}" if path else k, m, probes, heads, depth + 1) for k, m in kids]
        if all(k.isdigit() for k, _ in kids):
            node["items"] = below
        else:
            node["children"] = [[k, n] for (k, _), n in zip(kids, below, strict=True)]
    return node


def _describe(builder: Any, default_classes: int) -> dict[str, Any]:
    model = builder(weights=None)
    probes = [dict(builder(weights=None, num_classes=n).named_modules()) for n in _PROBES]
    counts = {name: (_params(probes[0][name]), _params(m)) for name, m in probes[1].items()
              if name and not list(m.children())}  # fmt: skip
    heads = {name for name, (a, b) in counts.items() if a != b}
    root = _node("", model, probes, heads, 0)
    root["default_classes"] = default_classes
    return root


def main() -> None:
    """Print the table (JSON) on standard output."""
    import torchvision  # noqa: PLC0415 - only where the table is made
    from torchvision import models  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    out: dict[str, Any] = {
        "_about": (
            "How torchvision's model builders are put together (see make_library_modules.py): children in order, "
            "members of Sequential children, layers sized by num_classes. Parameters of a node are params + "
            "per_class * (num_classes - default_classes)."
        ),
        "source": f"torchvision {torchvision.__version__}, each builder called with weights=None",
        "models": {},
    }
    groups = [(models, 1000), (models.detection, 91), (models.segmentation, 21)]
    for module, classes in groups:
        for name in models.list_models(module=module):
            if name.startswith(("quantized", "raft")):
                continue
            builder = models.get_model_builder(name)
            if name in _AS_PRETRAINED:

                def builder(b: Any = builder, n: str = name, **kw: Any) -> Any:
                    return b(**_AS_PRETRAINED[n], **kw)

            if module is models.detection:

                def builder(b: Any = builder, **kw: Any) -> Any:
                    return b(weights_backbone=None, **kw)

            if module is models.segmentation:

                def builder(b: Any = builder, **kw: Any) -> Any:
                    return b(weights_backbone=None, aux_loss=False, **kw)

            out["models"][name] = _describe(builder, classes)
            print(name, file=sys.stderr)
    json.dump(out, sys.stdout, separators=(",", ":"))


if __name__ == "__main__":
    main()
