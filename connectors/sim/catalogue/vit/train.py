"""Train a timm vision transformer with PyTorch Lightning."""
import argparse

import lightning as L
import timm
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class LitClassifier(L.LightningModule):
    def __init__(self, model_name, lr, num_classes):
        super().__init__()
        self.model = timm.create_model(model_name, pretrained=False, num_classes=num_classes)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.05)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="vit_base_patch16_224")
    parser.add_argument("--data-dir", default="/datasets/imagenet")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--max_epochs", type=int, default=300)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--precision", default="16-mixed")
    args = parser.parse_args()

    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train = datasets.ImageNet(args.data_dir, split="train", transform=tf)
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, num_workers=8)
    model = LitClassifier(args.model, args.lr, num_classes=1000)
    trainer = L.Trainer(max_epochs=args.max_epochs, accelerator="gpu", devices=args.devices,
                        strategy="ddp" if args.devices > 1 else "auto", precision=args.precision)
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()
