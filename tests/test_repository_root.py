"""A job run from a sub-folder of its repository (``examples/x/``) reads its own package at the repository's root,
when the submission names that root; reads stay confined to it (real files, the real extractor, sandbox and cache)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from schedmate.agents.advisor.advisor import Advisor
from schedmate.agents.advisor.extract.budget import Budget
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.sandbox import ExtractionSandbox
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.advisor.facets import vector_dim
from schedmate.agents.advisor.history import History
from schedmate.agents.advisor.version_cache import VersionCache
from schedmate.agents.exceptions import WorkspaceError
from schedmate.agents.ml.embeddings import Embedder
from schedmate.infra.measure.eval_advise import repository
from schedmate.schemas.jobs_submitted import JobSubmitted
from tests.repo_files import write

_PACKAGE = {
    "setup.py": "from setuptools import setup, find_packages\nsetup(name='unetpkg', packages=find_packages())\n",
    "unetpkg/__init__.py": "",
    "unetpkg/models/__init__.py": "from .unet import Unet\n",
    "unetpkg/models/unet.py": (
        "import torch.nn as nn\n\n"
        "class Unet(nn.Module):\n"
        "    def __init__(self, chans=32, layers=4):\n"
        "        super().__init__()\n"
        "        blocks = []\n"
        "        c = 1\n"
        "        for _ in range(layers):\n"
        "            blocks.append(nn.Conv2d(c, chans, 3, padding=1))\n"
        "            c = chans\n"
        "            chans *= 2\n"
        "        self.down = nn.ModuleList(blocks)\n"
        "        self.out = nn.Conv2d(c, 1, 1)\n"
    ),
    "examples/unet/train_unet.py": (
        "import argparse\n"
        "import torch\n"
        "from torch.utils.data import DataLoader\n"
        "from unetpkg.models import Unet\n\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--chans', type=int, default=32)\n"
        "p.add_argument('--lr', type=float, default=1e-3)\n"
        "args = p.parse_args()\n"
        "model = Unet(chans=args.chans, layers=4)\n"
        "opt = torch.optim.Adam(model.parameters(), lr=args.lr)\n"
        "loader = DataLoader(None, batch_size=4)\n"
    ),
}
# Conv2d(1,32)+(32,64)+(64,128)+(128,256) with 3x3 kernels and biases, then a 1x1 Conv2d(256, 1)
_COUNT = (1 * 32 * 9 + 32) + (32 * 64 * 9 + 64) + (64 * 128 * 9 + 128) + (128 * 256 * 9 + 256) + (256 + 1)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """The real embedding model."""
    return Embedder("minilm")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose example script imports the repository's own package (installed with ``pip -e .``)."""
    root = write(tmp_path / "repo", _PACKAGE)
    (tmp_path / "other_job.py").write_text("SECRET = 1\n")
    return root


def test_a_job_in_a_sub_folder_counts_the_model_of_its_repository_package(repo: Path) -> None:
    """With the repository root named, the model class in ``unetpkg/`` is found and counted; without it, the
    working directory alone holds no model (the earlier behaviour, kept as the default)."""
    workdir = repo / "examples" / "unet"
    inside = extract_metadata(workdir, "python train_unet.py --chans 32", repo=repo)
    assert inside.params_millions == pytest.approx(_COUNT / 1e6, rel=1e-3)
    assert (inside.model_name, inside.model_type) == ("Unet", "unet")
    assert inside.learning_rate == pytest.approx(1e-3)
    alone = extract_metadata(workdir, "python train_unet.py --chans 32")
    assert alone.params_millions is None


def test_reads_stay_inside_the_repository_and_it_must_hold_the_working_directory(repo: Path, tmp_path: Path) -> None:
    """``..`` may climb to the repository root, never past it; a repository root that does not contain the working
    directory is refused with a message saying what to change."""
    ws = Workspace(repo / "examples" / "unet", boundary=repo)
    assert "class Unet" in ws.read_text("../../unetpkg/models/unet.py")
    assert ws.module_file("unetpkg.models", 0, "train_unet.py") == "../../unetpkg/models/__init__.py"
    with pytest.raises(WorkspaceError, match="outside the job's repository"):
        ws.read_text("../../../other_job.py")
    with pytest.raises(WorkspaceError, match="outside the job's working directory"):
        Workspace(repo / "examples" / "unet").read_text("../../unetpkg/models/unet.py")
    with pytest.raises(WorkspaceError, match="not inside the repository root"):
        Workspace(repo / "examples" / "unet", boundary=repo / "unetpkg")
    assert not any(f.startswith("..") for f in ws.files())  # walks cover the working directory only


def test_a_sys_path_entry_above_the_working_directory_is_an_import_root(tmp_path: Path) -> None:
    """``sys.path.insert(0, '..')`` in a script of ``scripts/`` makes the repository's ``lib/`` modules importable
    when the repository root is named."""
    root = write(
        tmp_path / "r",
        {
            "lib/mlp.py": (
                "import torch.nn as nn\nclass MLP(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.fc = nn.Linear(100, 10)\n"
            ),
            "scripts/train.py": (
                "import sys\nsys.path.insert(0, '../lib')\nimport torch\nfrom mlp import MLP\n"
                "model = MLP()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            ),
        },
    )
    meta = extract_metadata(root / "scripts", "python train.py", repo=root)
    assert meta.params_millions == pytest.approx(1010 / 1e6, abs=1e-3)
    assert meta.model_name == "MLP"


def test_the_sandbox_and_the_version_cache_follow_the_repository_root(
    repo: Path, tmp_path: Path, embedder: Embedder
) -> None:
    """The submission's ``repo_root`` reaches the extraction process; the cache reuses the result while no file
    changed (files read above the working directory included), and an edit to the package's model refreshes it."""
    sandbox = ExtractionSandbox(processes=1, memory_mb=1024, budget=Budget(time_s=10.0))
    try:
        adv = Advisor(History(tmp_path / "db", dim=vector_dim(embedder)), embedder,
                      VersionCache(tmp_path / "versions.jsonl"), sandbox=sandbox)  # fmt: skip
        workdir = repo / "examples" / "unet"
        argv = shlex.split("python train_unet.py --chans 32")

        def submit(job: str) -> tuple[str, float | None]:
            sub = JobSubmitted(job_id=job, user=job, workdir=str(workdir), repo_root=str(repo), command=argv)
            advice = adv.advise(sub)
            return advice.path, advice.metadata.params_millions

        first = submit("1")
        assert first[0] == "static" and first[1] == pytest.approx(_COUNT / 1e6, rel=1e-3)
        assert submit("2") == ("cache", first[1])
        model = repo / "unetpkg" / "models" / "unet.py"
        model.write_text(model.read_text().replace("chans *= 2", "chans *= 3"))  # wider layers
        path, count = submit("3")
        assert path == "cache+refresh" and count is not None and count != first[1]
        plain = adv.advise(JobSubmitted(job_id="4", user="4", workdir=str(workdir), command=argv))
        assert plain.path == "static" and plain.metadata.params_millions is None  # another cache key: no repo root
    finally:
        sandbox.close()


def test_the_eval_harness_takes_the_repository_from_the_documented_layout(tmp_path: Path) -> None:
    """``workdir`` is ``repos/<short>/<sub-folder>`` (../shared/eval/README.md): the repository is
    ``repos/<short>``; a record may also name ``repo_root`` itself."""
    assert repository(tmp_path, {"workdir": "repos/fastmri/examples/varnet"}) == tmp_path / "repos" / "fastmri"
    assert repository(tmp_path, {"workdir": "repos/nanogpt"}) == tmp_path / "repos" / "nanogpt"
    assert repository(tmp_path, {"workdir": "jobs/x", "repo_root": "jobs"}) == tmp_path / "jobs"
    assert repository(tmp_path, {"workdir": "x"}) is None


_SPAWNING = {
    "main.py": (
        "import argparse\nimport torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--batch_size', type=int, default=8)\n"
        "p.add_argument('--gen_lr', type=float, default=0.1)\n"
        "p.add_argument('--hidden', type=int, default=16)\n"
        "opt = p.parse_args()\n"
        "gen = nn.LSTM(opt.hidden, opt.hidden)\n"
        "optimizer = torch.optim.Adam(gen.parameters(), lr=opt.gen_lr)\n"
        "loader = DataLoader(None, batch_size=opt.batch_size)\n"
    ),
    "run/run_gan.py": (
        "import sys\nfrom subprocess import call\n\n"
        "if len(sys.argv) > 1:\n    job_id = int(sys.argv[1])\nelse:\n    job_id = 0\n"
        "executable = 'python'\nrootdir = '../'\n"
        "batch_size = [64, 32]\nhidden = 32\n"
        "args = ['--batch_size', batch_size[job_id], '--gen_lr', 0.01, '--hidden', hidden]\n"
        "args = list(map(str, args))\n"
        "call([executable, 'main.py'] + args, cwd=rootdir)\n"
    ),
    "run/sweep.py": (
        "import argparse\nimport os\n\n"
        "def run_one(args):\n"
        "    cmd = 'cd .. && python main.py --batch_size %d --gen_lr %s' % (args.bs, args.lr)\n"
        "    os.system(cmd)\n\n"
        "if __name__ == '__main__':\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--bs', type=int, default=4)\n"
        "    parser.add_argument('--lr', type=float, default=0.5)\n"
        "    run_one(parser.parse_args())\n"
    ),
}


def test_a_python_launcher_is_followed_to_the_command_it_would_start(tmp_path: Path) -> None:
    """``subprocess.call([python, 'main.py', *args], cwd='../')`` built from the launcher's own lists and
    ``sys.argv`` (TextGAN's run files), and ``os.system('cd .. && python main.py …' % (args.bs, args.lr))`` in a
    function its ``__main__`` block calls with its argparse settings: the started script's use sites answer, with the
    launcher's values. Nothing is run; the folder above needs the repository root."""
    root = write(tmp_path / "gan", _SPAWNING)
    meta = extract_metadata(root / "run", "python run_gan.py 1", repo=root)
    assert (meta.batch_size_per_device, meta.learning_rate) == (32, pytest.approx(0.01))
    assert meta.params_millions == pytest.approx(8 * 32 * 32 / 1e6 + 8 * 32 / 1e6, abs=1e-3)  # LSTM(32, 32)
    swept = extract_metadata(root / "run", "python sweep.py --bs 12", repo=root)
    assert (swept.batch_size_per_device, swept.learning_rate) == (12, pytest.approx(0.5))
    confined = extract_metadata(root / "run", "python run_gan.py 1")  # `../` is outside the working directory
    assert confined.batch_size_per_device is None


def test_a_script_that_trains_itself_is_the_job_whatever_it_starts(tmp_path: Path) -> None:
    """A training script that runs `os.system('python eval.py --batch_size 1')` after training is the job: its own
    loader's batch answers, not the evaluation it starts (nor is it evaluated as a launcher at all)."""
    root = write(
        tmp_path,
        {
            "train.py": (
                "import os\nimport torch\nfrom torch.utils.data import DataLoader\n"
                "model = torch.nn.Linear(4, 4)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "loader = DataLoader(None, batch_size=64)\nos.system('python eval.py --batch_size 1')\n"
            ),
            "eval.py": "import argparse\nfrom torch.utils.data import DataLoader\np = argparse.ArgumentParser()\n"
            "p.add_argument('--batch_size', type=int)\nargs = p.parse_args()\n"
            "loader = DataLoader(None, batch_size=args.batch_size)\n",
        },
    )
    assert extract_metadata(root, "python train.py").batch_size_per_device == 64
