"""Train a torchvision classifier on CIFAR-10."""
import argparse

import torch
import torch.nn as nn
import torchvision
import torchvision.models as models
import torchvision.transforms as T

model_names = sorted(name for name in models.__dict__ if name.islower() and not name.startswith("__"))

parser = argparse.ArgumentParser(description="CIFAR-10 training")
parser.add_argument("--arch", default="resnet18", choices=model_names)
parser.add_argument("--epochs", default=200, type=int)
parser.add_argument("--batch-size", default=128, type=int)
parser.add_argument("--lr", default=0.1, type=float)
parser.add_argument("--workers", default=4, type=int)
parser.add_argument("--amp", action="store_true")
args = parser.parse_args()

transform = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor()])
train_set = torchvision.datasets.CIFAR10(root="./data", train=True, download=True, transform=transform)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                           num_workers=args.workers)

model = models.__dict__[args.arch](num_classes=10).cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

for epoch in range(args.epochs):
    model.train()
    for step, (images, labels) in enumerate(train_loader):
        images, labels = images.cuda(), labels.cuda()
        with torch.autocast("cuda", enabled=args.amp):
            loss = criterion(model(images), labels)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % 100 == 0:
            print(f"epoch {epoch} step {step}/{len(train_loader)} loss {loss.item():.4f}")
    scheduler.step()
