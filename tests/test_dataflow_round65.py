"""Round 65's misses (measured once at first sight, then worked on), as mechanisms: the job's own trainer class that
scores chosen against rejected answers is preference tuning (SimPO); importing peft builds no adapters when the
`use_peft` setting is off; a `dataset_mixer` given as hub ids and weights names the data."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_CONFIGS = """
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    use_peft: bool = field(default=False)


@dataclass
class DataArguments:
    dataset_mixer: Optional[dict] = field(default=None)
"""

_TRAINER = """
import torch.nn.functional as F
from transformers import Trainer


class PairTrainer(Trainer):
    def loss(self, policy_chosen_logps, policy_rejected_logps):
        margin = policy_chosen_logps - policy_rejected_logps
        return -F.logsigmoid(margin).mean()
"""

_RUN = """
import sys
from transformers import HfArgumentParser, TrainingArguments, AutoModelForCausalLM
from peft import PeftModel
from configs import ModelArguments, DataArguments
from pair_trainer import PairTrainer


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_yaml_file(sys.argv[1])
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    # the prompt: "### Instruction: ... ### Response:" (chat formatting of the pairs)
    trainer = PairTrainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_own_pairwise_trainer_is_preference_tuning(tmp_path: Path) -> None:
    """A Trainer subclass of the job's whose loss reads chosen and rejected log-probabilities: preference tuning,
    not instruction tuning (whatever chat wording the script has); `use_peft` off by default: no PEFT though peft is
    imported; `dataset_mixer: {org/ultrafeedback_binarized: 1.0}` names UltraFeedback."""
    root = write(
        tmp_path,
        {
            "scripts/run.py": _RUN,
            "scripts/configs.py": _CONFIGS,
            "scripts/pair_trainer.py": _TRAINER,
            "cfg.yaml": (
                "model_name_or_path: org/llm-7b\ndataset_mixer:\n  HuggingFaceH4/ultrafeedback_binarized: 1.0\n"
                "per_device_train_batch_size: 2\nlearning_rate: 3.0e-7\nbf16: true\noutput_dir: out\n"
            ),
        },
    )
    meta = extract_metadata(root, "python scripts/run.py cfg.yaml")
    assert meta.task == "preference_optimization_dpo"
    assert meta.framework is not None and "PEFT" not in meta.framework
    assert meta.dataset == "UltraFeedback binarized"
