"""Reading hyper-parameters statically from scripts and configs (pure logic; nothing is executed)."""

from __future__ import annotations

from schedmate.agents.advisor.extract.config_sources import (
    argparse_specs,
    load_structured,
    parse_literal,
    parse_overrides,
    python_assignments,
    resolve_argparse,
)

TRAIN = """
import argparse, os
def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', '-e', metavar='E', type=int, default=5, help='Number of epochs')
    parser.add_argument('--batch-size', '-b', dest='batch_size', metavar='B', type=int, default=1)
    parser.add_argument('--learning-rate', '-l', metavar='LR', type=float, default=1e-5, dest='lr')
    parser.add_argument('--amp', action='store_true', default=False)
    parser.add_argument('--classes', '-c', type=int, default=2)
    parser.add_argument('--out', type=str, default=os.environ.get("OUT"))
    return parser.parse_args()
os.system("echo never run")
"""


def test_argparse_defaults_and_command_overrides() -> None:
    """Defaults come from the script's AST (with lines); the command's flags override them."""
    specs = argparse_specs(TRAIN)
    values = resolve_argparse(specs, ["--amp", "-e", "20", "-b", "2", "--learning-rate", "5e-6"], "train.py")
    assert (values["epochs"].value, values["epochs"].source) == (20, "command")
    assert values["batch_size"].value == 2 and values["lr"].value == 5e-6 and values["amp"].value is True
    assert (values["classes"].value, values["classes"].source, values["classes"].line) == (2, "train.py", 9)
    assert values["out"].value is None  # not a literal: unknown, never evaluated


def test_python_config_assignments_are_literals_only() -> None:
    """nanoGPT-style configs: literal assignments with lines; expressions are not evaluated."""
    src = "batch_size = 12\nblock_size = 1024\ngradient_accumulation_steps = 5 * 8\nmax_iters = 600000\nwandb_run_name = 'gpt2-124M'\nx = __import__('os').system('id')\n"
    v = python_assignments(src, "config/train_gpt2.py")
    assert (v["batch_size"].value, v["batch_size"].line) == (12, 1)
    assert v["max_iters"].value == 600000 and v["wandb_run_name"].value == "gpt2-124M"
    assert "x" not in v and "gradient_accumulation_steps" not in v  # not literals (5 * 8 is an expression)


def test_structured_files_flattened_with_lines() -> None:
    """YAML, JSON and TOML become dotted keys with the line of each leaf."""
    y = load_structured("model:\n  net:\n    lin1_size: 64\ntrainer:\n  max_epochs: 10\n", "configs/a.yaml")
    assert (y["model.net.lin1_size"].value, y["model.net.lin1_size"].line) == (64, 3)
    j = load_structured('{\n  "train": {\n    "batch_size": 64,\n    "fp16_run": true\n  }\n}', "configs/ljs.json")
    assert (j["train.batch_size"].value, j["train.batch_size"].line, j["train.fp16_run"].value) == (64, 3, True)
    t = load_structured("[tool]\nlr = 0.1\n", "cfg.toml")
    assert t["tool.lr"].value == 0.1
    assert load_structured("{not: [valid", "bad.yaml") == {}
    # YAML 1.2 floats, as OmegaConf/Hydra read them: an exponent without a decimal point is a number, not text
    e = load_structured("lr: 5e-7\nwd: 1.0e-2\nname: 5e-7x\nversion: 1.2.3\n", "config.yaml")
    assert (e["lr"].value, e["wd"].value, e["name"].value, e["version"].value) == (5e-7, 0.01, "5e-7x", "1.2.3")


def test_overrides_and_literals() -> None:
    """key=value words (Hydra, OmegaConf, nanoGPT --key=value) become typed values; flags are ignored."""
    o = parse_overrides(["trainer=ddp", "data.batch_size=256", "--learning_rate=3e-4", "--compile=False",
                         "tags=[mnist,ddp]", "+extra=1", "-c", "plain"])  # fmt: skip
    assert o["trainer"].value == "ddp" and o["data.batch_size"].value == 256
    assert o["learning_rate"].value == 3e-4 and o["compile"].value is False
    assert o["tags"].value == ["mnist", "ddp"] and o["extra"].value == 1
    assert parse_literal("16-mixed") == "16-mixed" and parse_literal("1e-5") == 1e-5
