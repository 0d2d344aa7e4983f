import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        x = torch.randint(0, 1000, (128,))
        return {"input_ids": x, "labels": x}


model = GPT2LMHeadModel(GPT2Config(vocab_size=1000, n_layer=2, n_head=4, n_embd=128, n_positions=128))
args = TrainingArguments(
    output_dir="/tmp/hf",
    per_device_train_batch_size=16,
    max_steps=80,
    logging_steps=10,
    report_to="none",
    bf16=True,
    save_strategy="no",
    learning_rate=5e-4,
)
Trainer(model=model, args=args, train_dataset=Tokens()).train()
