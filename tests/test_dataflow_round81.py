"""Round 81's miss (measured once at first sight, then worked on), as a mechanism: a multi-line double-quoted shell
value with quoted pieces inside it (CogVLM's ``gpt_options=" … --save "./checkpoints" … "``) is one value, as the
shell joins it, and the command built from it and run by ``eval`` is the job's."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_SCRIPT = """#! /bin/bash
MODEL_TYPE="cogvlm-base-490"
MODEL_ARGS="--from_pretrained $MODEL_TYPE \\
    --max_length 1288"
OPTIONS_NCCL="NCCL_DEBUG=info LOCAL_WORLD_SIZE=8"
gpt_options=" \\
       --experiment-name finetune-$MODEL_TYPE \\
       --train-iters 800 \\
       $MODEL_ARGS \\
       --save "./checkpoints" \\
       --deepspeed_config ds.json
"
run_cmd="${OPTIONS_NCCL} deepspeed --master_port 16666 finetune.py ${gpt_options}"
echo ${run_cmd}
eval ${run_cmd}
"""

_FINETUNE = """
import argparse
import deepspeed
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--from_pretrained", default="cogvlm-chat")
    parser.add_argument("--train-iters", type=int, default=10000)
    parser.add_argument("--save", default=None)
    parser.add_argument("--deepspeed_config", default=None)
    args = parser.parse_args()
    model = torch.nn.Linear(4, 4)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, config=args.deepspeed_config)
    for step in range(args.train_iters):
        loss = engine(torch.zeros(4)).sum()
        engine.backward(loss)
        engine.step()


if __name__ == "__main__":
    main()
"""

_DS = (
    '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2},'
    ' "bf16": {"enabled": true}, "optimizer": {"type": "Adam", "params": {"lr": 0.00001}}}'
)


def test_a_quoted_piece_inside_a_multi_line_value(tmp_path: Path) -> None:
    """The options string over several lines holds `--save "./checkpoints"`: still one value, so `eval $run_cmd` runs
    `deepspeed finetune.py` with the model, the steps and the DeepSpeed file it names."""
    root = write(tmp_path, {"run.sh": _SCRIPT, "finetune.py": _FINETUNE, "ds.json": _DS})
    m = extract_metadata(root, "bash run.sh")
    assert (m.max_steps, m.learning_rate, m.batch_size_per_device) == (800, 1e-5, 4)
    assert (m.precision, m.distributed) == ("bf16", "deepspeed_zero2")
