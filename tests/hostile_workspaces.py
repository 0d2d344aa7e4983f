"""Tiny hostile job workspaces (each a few hundred bytes) that once crashed or exhausted the advise agent.

Each builder writes a working directory under ``root`` and returns ``(workdir, command)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["HOSTILE"]


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def recursion(root: Path) -> tuple[Path, str]:
    """A model whose construction recurses forever."""
    code = ("import torch.nn as nn\n\ndef f():\n    return f()\n\n"
            "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.x = f()\n"
            "        self.l = nn.Linear(10, 10)\n\nmodel = M()\n")  # fmt: skip
    return _write(root, {"train.py": code}), "python train.py --lr 0.1"


def nested_not(root: Path) -> tuple[Path, str]:
    """100,000 nested `not` (the parser runs out of stack/memory)."""
    return _write(root, {"train.py": "x = " + "not " * 100_000 + "True\n"}), "python train.py"


def huge_literal(root: Path) -> tuple[Path, str]:
    """A 401-digit literal as a layer width."""
    code = f"import torch.nn as nn\nmodel = nn.Sequential(nn.Linear({'9' * 401}, 10), nn.ReLU())\n"
    return _write(root, {"train.py": code}), "python train.py"


def apostrophe_script(root: Path) -> tuple[Path, str]:
    """A shell script with an unbalanced apostrophe in a comment-free line."""
    return _write(
        root, {"run.sh": "echo don't stop\npython train.py --lr 0.1\n", "train.py": "lr = 0.1\n"}
    ), "bash run.sh"


def non_ascii_digit(root: Path) -> tuple[Path, str]:
    """`--nproc_per_node` with a superscript digit (``str.isdigit`` says yes, ``int`` says no)."""
    return _write(root, {"train.py": "lr = 0.1\n"}), "torchrun --nproc_per_node=\u00b2 train.py"


def interpolation(root: Path) -> tuple[Path, str]:
    """An OmegaConf `${...}` interpolation where a number is expected (the ZeRO stage)."""
    cfg = "deepspeed: ds.yaml\nzero: 3\n"
    ds = "zero_optimization:\n  stage: ${zero}\n"
    code = "lr = 0.1\n"
    return _write(root, {"cfg.yaml": cfg, "ds.yaml": ds, "train.py": code}), "python train.py --config cfg.yaml"


def huge_nproc(root: Path) -> tuple[Path, str]:
    """3,000,000,000 processes per node (overflows a 32-bit column when recorded)."""
    return _write(root, {"train.py": "lr = 0.1\n"}), "torchrun --nproc_per_node=3000000000 train.py"


def yaml_bomb(root: Path) -> tuple[Path, str]:
    """A 'billion laughs' YAML of anchors and aliases (under 1 KiB)."""
    lines = ["a: &a {k0: 1, k1: 1, k2: 1, k3: 1, k4: 1, k5: 1, k6: 1, k7: 1, k8: 1}"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        refs = ", ".join(f"k{i}: *{prev}" for i in range(9))
        lines.append(f"{name}: &{name} {{{refs}}}")
    return _write(root, {"config.yaml": "\n".join(lines) + "\n", "train.py": "lr = 0.1\n"}), (
        "python train.py --config config.yaml"
    )


def shell_doubling(root: Path) -> tuple[Path, str]:
    """`A=$A$A` forty times: a terabyte string if expanded naively."""
    script = "A=xxxxxxxx\n" + "A=$A$A\n" * 40 + "python train.py --lr $A\n"
    return _write(root, {"run.sh": script, "train.py": "lr = 0.1\n"}), "bash run.sh"


def list_doubling(root: Path) -> tuple[Path, str]:
    """A list doubled by `.extend` in a loop inside `__init__`."""
    code = ("import torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        xs = [1]\n        for _ in range(64):\n            xs.extend(xs)\n"
            "        self.l = nn.Linear(len(xs), 10)\n\nmodel = M()\n")  # fmt: skip
    return _write(root, {"train.py": code}), "python train.py"


def hydra_fanout(root: Path) -> tuple[Path, str]:
    """Hydra defaults that each pull in every option of the group again (fan-out)."""
    files = {"train.py": "import hydra\n@hydra.main(config_path='configs', config_name='train')\ndef main(cfg):\n"
                         "    pass\n"}  # fmt: skip
    opts = [f"o{i}" for i in range(12)]
    files["configs/train.yaml"] = "defaults:\n  - model: o0\n"
    for o in opts:
        files[f"configs/model/{o}.yaml"] = "defaults:\n" + "".join(f"  - {p}\n" for p in opts) + f"width: {len(o)}\n"
    return _write(root, files), "python train.py"


HOSTILE: dict[str, Callable[[Path], tuple[Path, str]]] = {
    f.__name__: f
    for f in (recursion, nested_not, huge_literal, apostrophe_script, non_ascii_digit, interpolation, huge_nproc,
              yaml_bomb, shell_doubling, list_doubling, hydra_fanout)
}  # fmt: skip
