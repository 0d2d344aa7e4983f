import lightning
import torch


class M(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(32, 2)

    def training_step(self, batch, i):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


ds = torch.utils.data.TensorDataset(torch.randn(4096, 32), torch.randint(0, 2, (4096,)))
lightning.Trainer(max_epochs=2, accelerator="gpu", devices=1, enable_checkpointing=False, logger=False).fit(
    M(), torch.utils.data.DataLoader(ds, batch_size=64)
)
