"""A tokenizer's `from_pretrained` is no model, Lightning's `save_hyperparameters`, a framework word in a README
title and VOC list files (round 26's misses)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_a_tokenizer_loaded_by_name_is_not_the_model_trained(tmp_path: Path) -> None:
    """`BertTokenizer.from_pretrained('bert-base-cased')` sizes the vocabulary of a transformer LM built from scratch:
    the model is the job's class, sized as a GPT of its depth and width (`--num_layers`, `--embed_dim`)."""
    root = write(
        tmp_path,
        {
            "pretraining_model.py": """
import torch.nn as nn
class TransformerWithLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embeddings = nn.Embedding(config.num_embeddings, config.embed_dim)
        self.attn = nn.ModuleList([nn.MultiheadAttention(config.embed_dim, config.num_heads)
                                   for _ in range(config.num_layers)])
""",
            "pretraining_train.py": """
import argparse
import torch
from pytorch_pretrained_bert import BertTokenizer
from pretraining_model import TransformerWithLMHead
p = argparse.ArgumentParser()
p.add_argument("--embed_dim", type=int, default=410)
p.add_argument("--num_heads", type=int, default=10)
p.add_argument("--num_layers", type=int, default=16)
args = p.parse_args()
tokenizer = BertTokenizer.from_pretrained('bert-base-cased', do_lower_case=False)
args.num_embeddings = len(tokenizer.vocab)
model = TransformerWithLMHead(args)
optimizer = torch.optim.Adam(model.parameters(), lr=2.5e-4)
""",
        },
    )
    meta = extract_metadata(root, "python pretraining_train.py")
    assert meta.model_name == "TransformerWithLMHead"
    assert meta.model_type == "decoder_only_transformer"
    assert meta.params_millions == round((12 * 16 * 410 * 410 + 50304 * 410) / 1e6, 1)


def test_save_hyperparameters_and_a_framework_word_in_the_title(tmp_path: Path) -> None:
    """`self.save_hyperparameters()` then `nn.Linear(784, self.hparams.hidden_dim)`: the constructor's arguments size
    the layers; a README titled "PyTorch-RetinaNet" adds no "PyTorch" to the model's name; `voc12_train.txt` is VOC."""
    root = write(
        tmp_path,
        {
            "README.md": "# PyTorch-RetinaNet\n",
            "lit_mnist.py": """
from argparse import ArgumentParser
import torch
import pytorch_lightning as pl
class LitClassifier(pl.LightningModule):
    def __init__(self, hidden_dim=128, learning_rate=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.l1 = torch.nn.Linear(28 * 28, self.hparams.hidden_dim)
        self.l2 = torch.nn.Linear(self.hparams.hidden_dim, 10)
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)
def cli_main():
    parser = ArgumentParser()
    parser.add_argument('--hidden_dim', type=int, default=128)
    parser.add_argument('--list_file', default='./data/voc12_train.txt')
    args = parser.parse_args()
    model = LitClassifier(args.hidden_dim)
    trainer = pl.Trainer(max_epochs=3)
    trainer.fit(model)
if __name__ == '__main__':
    cli_main()
""",
        },
    )
    meta = extract_metadata(root, "python lit_mnist.py --hidden_dim 64")
    assert (
        meta.params_millions == round((784 * 64 + 64 + 64 * 10 + 10) / 1e6, 4)
        or abs((meta.params_millions or 0) - 0.051) < 1e-3
    )
    assert meta.model_name is not None and "pytorch" not in meta.model_name.lower()
    assert meta.dataset == "Pascal VOC"
