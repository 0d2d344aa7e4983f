"""Fine-tune a pretrained encoder on a GLUE task with the Hugging Face Trainer."""
import argparse

import numpy as np
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, Trainer,
                          TrainingArguments)

TASK_KEYS = {"cola": ("sentence", None), "mnli": ("premise", "hypothesis"), "mrpc": ("sentence1", "sentence2"),
             "qnli": ("question", "sentence"), "qqp": ("question1", "question2"), "sst2": ("sentence", None)}


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="bert-base-uncased")
    p.add_argument("--task_name", default="mrpc", choices=sorted(TASK_KEYS))
    p.add_argument("--num_train_epochs", type=float, default=3.0)
    p.add_argument("--per_device_train_batch_size", type=int, default=32)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--max_seq_length", type=int, default=128)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--output_dir", default="out")
    return p.parse_args()


def main():
    args = parse()
    raw = load_dataset("glue", args.task_name)
    num_labels = 3 if args.task_name == "mnli" else 2
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=num_labels)
    k1, k2 = TASK_KEYS[args.task_name]

    def tokenize(batch):
        texts = (batch[k1],) if k2 is None else (batch[k1], batch[k2])
        return tokenizer(*texts, truncation=True, max_length=args.max_seq_length, padding="max_length")

    data = raw.map(tokenize, batched=True)
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.num_train_epochs,
        per_device_train_batch_size=args.per_device_train_batch_size,
        learning_rate=args.learning_rate,
        fp16=args.fp16,
        evaluation_strategy="epoch",
        logging_steps=50,
    )
    eval_split = "validation_matched" if args.task_name == "mnli" else "validation"
    trainer = Trainer(model=model, args=training_args, train_dataset=data["train"], eval_dataset=data[eval_split],
                      tokenizer=tokenizer,
                      compute_metrics=lambda p: {"accuracy": float((np.argmax(p.predictions, -1) == p.label_ids).mean())})
    trainer.train()


if __name__ == "__main__":
    main()
