"""The abstract values the parameter counter computes with: unknowns, objects under construction,
layers and tensors of known size."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["UNKNOWN", "AbortError", "Layer", "ModuleDict", "Obj", "Tensor", "TextFile", "Weight", "namespace", "prod"]


class _Unknown:
    """A value the evaluator cannot know (its truth value aborts the count)."""

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise AbortError("truth value of an unknown")


UNKNOWN: Final = _Unknown()


class AbortError(Exception):
    """Counting cannot be completed faithfully."""


@dataclass
class Obj:
    """An instance under construction (``self``) or a namespace of config values."""

    attrs: dict[str, Any] = field(default_factory=dict)
    cls: str = ""
    origin: Any = field(default=None, repr=False, compare=False)  # the class's definition (for methods, class attrs)


@dataclass
class Layer:
    """A layer built: its parameters and output width."""

    params: int
    out: int = 0  # output features/channels (weight_norm adds one gain per output)
    width: int = 0  # what it outputs: out_channels, out_features, num_features, embedding_dim (0: not known)
    weight: int = 0  # elements of its `.weight` (0: not known), for weights tied to another layer's
    kind: str = ""  # linear, conv, rnn, attention, embedding, norm ("" for others)
    inp: int = 0  # what it takes: in_features, in_channels (0: not known)
    cls: str = ""  # the torch class that built it (Linear, MaxPool2d, a library's Bottleneck; "": not known)


class ModuleDict(dict[str, Any]):
    """``nn.ModuleDict(...)``: a dict whose modules are registered, unlike a plain dict attribute's."""


@dataclass(frozen=True)
class Weight:
    """A layer's ``.weight``, read to be shared (``self.tok_embeddings.weight = self.output.weight``)."""

    numel: int


@dataclass
class Tensor:
    """A tensor of known size (an initial value for ``nn.Parameter``); a 1-D one (``torch.linspace(0, 9, steps=10)``)
    iterates over its ``numel`` unknown items."""

    numel: int
    vector: bool = False

    def __iter__(self) -> Iterator[Any]:
        if not self.vector:
            raise TypeError("iteration over a tensor of unknown shape")
        return iter([UNKNOWN] * min(self.numel, 10_000))


@dataclass(frozen=True)
class TextFile:
    """A text file of the workspace the job opens for reading (``open("model_data/classes.txt")``): its lines."""

    path: str
    text: str

    def __iter__(self) -> Iterator[str]:
        return iter(self.text.splitlines(keepends=True))


def prod(xs: Any) -> int:
    if isinstance(xs, int):
        return xs
    return math.prod(int(x) for x in xs)


def namespace(values: dict[str, Any]) -> Obj:
    """Dotted config keys as nested attribute namespaces (``hps.data.hop_length``, ``args.classes``)."""
    root = Obj()
    for key, value in values.items():
        node = root
        parts = key.split(".")
        for p in parts[:-1]:
            nxt = node.attrs.get(p)
            if not isinstance(nxt, Obj):
                nxt = Obj()
                node.attrs[p] = nxt
            node = nxt
        if not isinstance(node.attrs.get(parts[-1]), Obj):
            node.attrs[parts[-1]] = value
    return root
