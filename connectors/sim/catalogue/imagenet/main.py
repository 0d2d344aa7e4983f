"""ImageNet training with DistributedDataParallel (launch with torchrun)."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from torch.nn.parallel import DistributedDataParallel as DDP


def get_args():
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
    parser.add_argument("data", metavar="DIR", help="path to dataset")
    parser.add_argument("-a", "--arch", default="resnet50")
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("-b", "--batch-size", default=256, type=int, help="total batch size over all GPUs")
    parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, dest="lr")
    parser.add_argument("-j", "--workers", default=8, type=int)
    parser.add_argument("--amp", action="store_true", help="mixed precision")
    return parser.parse_args()


def main():
    args = get_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    world_size = dist.get_world_size()
    per_gpu_batch = args.batch_size // world_size

    model = models.__dict__[args.arch]()
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(
        os.path.join(args.data, "train"),
        transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                            transforms.ToTensor(), normalize]))
    sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    loader = torch.utils.data.DataLoader(train_dataset, batch_size=per_gpu_batch, sampler=sampler,
                                         num_workers=args.workers, pin_memory=True)
    criterion = torch.nn.CrossEntropyLoss().cuda()

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for i, (images, target) in enumerate(loader):
            with torch.autocast("cuda", enabled=args.amp):
                loss = criterion(model(images.cuda(non_blocking=True)), target.cuda(non_blocking=True))
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if i % 50 == 0 and local_rank == 0:
                print(f"Epoch: [{epoch}][{i}/{len(loader)}] Loss {loss.item():.4e}")


if __name__ == "__main__":
    main()
