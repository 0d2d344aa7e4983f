"""Round 52's misses, as mechanisms: a module run as ``python -m <clone>.<module>`` from inside the clone; a TF1
loop whose every pass runs a training op; Hydra 0.11 configs (``config_path`` names the file, groups merge at the
root); argparse defaults built from the script's own folder (``ROOT / "data/hyp.yaml"``) and helpers that check a
file and hand its path back; the ``if`` arm a call site sits in; a TF-Hub handle naming a known model; a GLUE task
and an RL environment naming the dataset."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.known import handle_name, known_model
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_TF1_PRETRAIN = """
import tensorflow as tf
flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer("train_batch_size", 4096, "Total batch size.")
flags.DEFINE_float("learning_rate", 0.00176, "The initial learning rate.")
flags.DEFINE_integer("num_train_steps", 125000, "Number of training steps.")


def main(_):
    estimator = tf.estimator.Estimator(model_fn=None)
    estimator.train(input_fn=None, max_steps=FLAGS.num_train_steps)


if __name__ == "__main__":
    tf.app.run()
"""


def test_a_module_named_after_the_clone_it_runs_in(tmp_path: Path) -> None:
    """``python -m albert.run_pretraining`` as a README writes it (run from the clone's parent) but given in the clone
    ``albert/`` itself: the module is the clone's ``run_pretraining.py`` (the commit before found no script and read
    nothing, not even the framework)."""
    clone = tmp_path / "albert"
    write(clone, {"run_pretraining.py": _TF1_PRETRAIN})
    md = extract_metadata(clone, "python -m albert.run_pretraining --train_batch_size=512")
    assert md.framework == ["TensorFlow"]
    assert (md.global_batch_size, md.max_steps, md.learning_rate) == (512, 125000, 0.00176)
    other = tmp_path / "bert"  # another folder's name is not the package
    write(other, {"run_pretraining.py": _TF1_PRETRAIN})
    assert extract_metadata(other, "python -m albert.run_pretraining").max_steps is None


_WGAN = """
import tensorflow as tf

BATCH_SIZE = 50
ITERS = 200000


def Generator(n):
    return tf.layers.dense(tf.random_normal([n, 128]), 784)


fake = Generator(BATCH_SIZE)
gen_cost = -tf.reduce_mean(fake)
gen_train_op = tf.train.AdamOptimizer(learning_rate=1e-4).minimize(gen_cost)

with tf.Session() as session:
    session.run(tf.initialize_all_variables())
    for iteration in xrange(ITERS):
        if iteration > 0:
            _ = session.run(gen_train_op)
        print(iteration)
"""


def test_a_tf1_loop_whose_passes_run_the_training_op(tmp_path: Path) -> None:
    """``for iteration in xrange(ITERS): session.run(gen_train_op)``: each pass runs the op ``minimize`` made, one
    optimisation step; the loop's bound is the step budget (the commit before counted only loops that call
    ``.backward()`` and ``.step()``). A loop that only evaluates is no step loop."""
    write(tmp_path, {"gan_mnist.py": _WGAN})
    assert extract_metadata(tmp_path, "python gan_mnist.py").max_steps == 200000
    write(tmp_path, {"eval_only.py": _WGAN.replace("session.run(gen_train_op)", "session.run(gen_cost)")})
    assert extract_metadata(tmp_path, "python eval_only.py").max_steps is None


_SAC_TRAIN = """
import hydra
import torch
from agent.sac import SACAgent


class Workspace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.agent = hydra.utils.instantiate(cfg.agent)
        self.step = 0

    def run(self):
        while self.step < self.cfg.num_train_steps:
            self.agent.update(self.step)
            self.step += 1


@hydra.main(config_path='config/train.yaml', strict=True)
def main(cfg):
    Workspace(cfg).run()


if __name__ == '__main__':
    main()
"""
_SAC_AGENT = """
import torch


class SACAgent:
    def __init__(self, obs_dim, actor_lr, batch_size):
        self.actor = torch.nn.Linear(obs_dim, 6)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=actor_lr)
        self.batch_size = batch_size

    def update(self, step):
        loss = self.actor(torch.zeros(self.batch_size, 17)).sum()
        self.actor_optimizer.zero_grad()
        loss.backward()
        self.actor_optimizer.step()
"""
_SAC_TRAIN_YAML = "defaults:\n    - agent: sac\n\nenv: cheetah_run\nnum_train_steps: 1e6\n"
_SAC_AGENT_YAML = (
    "agent:\n  name: sac\n  class: agent.sac.SACAgent\n  params:\n    obs_dim: 17\n    actor_lr: 1e-4\n"
    "    batch_size: 1024\n"
)


def test_hydra_0_11_configs_and_an_rl_environment(tmp_path: Path) -> None:
    """Hydra 0.11: ``config_path`` names the primary file, and a group's file that holds its own ``agent:`` key
    merges at the root. The agent's ``batch_size`` and rate, and the step bound written ``1e6``, are read (the commit
    before looked for a folder ``config/train.yaml`` and found nothing); a job that imports an environment library
    learns in the environment its ``env`` setting names, with the agent its config's ``class`` builds."""
    write(
        tmp_path,
        {
            "train.py": "import dmc2gym\n" + _SAC_TRAIN,
            "agent/__init__.py": "",
            "agent/sac.py": _SAC_AGENT,
            "config/train.yaml": _SAC_TRAIN_YAML,
            "config/agent/sac.yaml": _SAC_AGENT_YAML,
        },
    )
    md = extract_metadata(tmp_path, "python train.py env=walker_walk")
    assert (md.global_batch_size, md.learning_rate, md.max_steps) == (1024, 0.0001, 1000000)
    assert md.dataset == "walker_walk"
    assert md.model_name == "SACAgent"  # the `class:` the agent's config instantiates, not its schedule's integers
    write(tmp_path, {"train.py": _SAC_TRAIN})  # no environment library: `env` could be anything
    assert extract_metadata(tmp_path, "python train.py env=walker_walk").dataset != "walker_walk"


_YOLO_TRAIN = """
import argparse
import os
import sys
from pathlib import Path

import torch
import yaml

from utils.general import check_file, check_yaml

FILE = Path(__file__).resolve()
ROOT = FILE.parents[0]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
ROOT = Path(os.path.relpath(ROOT, Path.cwd()))


def train(hyp, opt):
    if isinstance(hyp, str):
        with open(hyp, errors="ignore") as f:
            hyp = yaml.safe_load(f)
    opt.hyp = hyp.copy()
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp["lr0"], momentum=hyp["momentum"])


def main(opt):
    opt.data, opt.hyp = check_file(opt.data), check_yaml(opt.hyp)
    if not opt.evolve:
        train(opt.hyp, opt)
    else:
        hyp = {"lr0": 0.5, "momentum": 0.1}
        train(hyp.copy(), opt)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=str, default=ROOT / "data/coco128.yaml")
    parser.add_argument("--hyp", type=str, default=ROOT / "data/hyps/hyp.scratch-low.yaml")
    parser.add_argument("--evolve", type=int, nargs="?", const=300)
    main(parser.parse_args())
"""
_CHECKS = """
import os


def check_yaml(file, suffix=(".yaml", ".yml")):
    return check_file(file, suffix)


def check_file(file, suffix=""):
    file = str(file)
    if os.path.isfile(file) or not file:
        return file
    file = download(file)
    return file
"""


def test_a_default_built_from_the_scripts_folder_through_a_checking_helper(tmp_path: Path) -> None:
    """``--hyp`` defaults to ``ROOT / "data/hyps/…yaml"`` with ``ROOT`` the script's folder made relative to the
    working one; ``main`` passes it through ``check_yaml`` (which hands an existing file's path back) and calls
    ``train(opt.hyp, …)`` in the arm ``--evolve`` (unset) selects: the rate is the file's ``lr0`` (the commit before
    read no default from the path expression, could not follow the helper, and mixed in the other arm's call)."""
    write(
        tmp_path,
        {
            "train.py": _YOLO_TRAIN,
            "utils/__init__.py": "",
            "utils/general.py": _CHECKS,
            "data/hyps/hyp.scratch-low.yaml": "lr0: 0.01\nmomentum: 0.937\n",
            "data/coco128.yaml": "path: ../datasets/coco128\ntrain: images/train2017\nnc: 80\n",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").learning_rate == 0.01
    assert extract_metadata(tmp_path, "python train.py --evolve 30").learning_rate == 0.5  # the other arm runs
    write(tmp_path, {"utils/general.py": _CHECKS.replace("    file = str(file)\n", "    file = fetch(file)\n")})
    assert extract_metadata(tmp_path, "python train.py").learning_rate is None  # a helper that makes another file


def test_a_hub_handle_names_the_model_before_its_version() -> None:
    """``https://tfhub.dev/google/albert_base/1``: the model is ``albert_base`` (the version ``1`` named nothing, and
    the table knew only ``albert-base-v2``)."""
    assert handle_name("https://tfhub.dev/google/albert_base/1") == "albert_base"
    assert handle_name("gpt2-medium") == "gpt2-medium"
    found = known_model("https://tfhub.dev/google/albert_base/1")
    assert found is not None and abs(found[0] - 11.7) < 0.1 and found[1] == "encoder_only_transformer"
    assert known_model("albert-xxlarge-v2") is not None and known_model("albert-xxlarge-v2")[0] > 200  # type: ignore[index]


_CLASSIFIER = """
import tensorflow as tf
flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("albert_hub_module_handle", None, "TF-Hub module.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("train_step", 1000, "Steps.")


def main(_):
    processors = {"cola": "ColaProcessor", "mnli": "MnliProcessor", "mrpc": "MrpcProcessor"}
    processor = processors[FLAGS.task_name.lower()]
    estimator = tf.estimator.Estimator(model_fn=None)
    estimator.train(input_fn=None, max_steps=FLAGS.train_step)


if __name__ == "__main__":
    tf.app.run()
"""


def test_a_glue_task_and_a_hub_module(tmp_path: Path) -> None:
    """``--task_name=MRPC --albert_hub_module_handle=https://tfhub.dev/google/albert_base/1``: the dataset is the GLUE
    task the command picks (not the first the code lists) and the model the hub module (the commit before named
    neither)."""
    write(tmp_path, {"run_classifier.py": _CLASSIFIER})
    md = extract_metadata(
        tmp_path,
        "python run_classifier.py --task_name=MRPC --albert_hub_module_handle=https://tfhub.dev/google/albert_base/1",
    )
    assert md.dataset == "MRPC (GLUE)"
    assert md.model_name == "albert_base" and md.params_millions is not None and abs(md.params_millions - 11.7) < 0.1
    assert md.model_type == "encoder_only_transformer"


_FROM_WEIGHTS = """
import argparse
import torch
from models.yolo import Model

parser = argparse.ArgumentParser()
parser.add_argument("--weights", type=str, default="yolov3-tiny.pt")
parser.add_argument("--cfg", type=str, default="")
opt = parser.parse_args()
ckpt = torch.load(opt.weights, map_location="cpu")
model = Model(opt.cfg or ckpt["model"].yaml, ch=3, nc=80)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
"""
_YOLO_MODEL = """
import torch


class Model(torch.nn.Module):
    def __init__(self, cfg, ch=3, nc=None):
        super().__init__()
        self.yaml = cfg
        self.model = torch.nn.Sequential(*[torch.nn.Conv2d(ch, 16, 3) for _ in range(int(self.yaml["depth"]))])
"""


def test_a_model_built_from_its_checkpoint_is_the_one_the_weights_file_names(tmp_path: Path) -> None:
    """``Model(opt.cfg or ckpt["model"].yaml)`` after ``ckpt = torch.load(opt.weights)`` with ``--weights
    yolov3-tiny.pt``: the checkpoint holds the whole model, so the weights file's known name is the model's, without
    its extension (the commit before reported the class ``Model`` and no count)."""
    write(tmp_path, {"train.py": _FROM_WEIGHTS, "models/__init__.py": "", "models/yolo.py": _YOLO_MODEL})
    md = extract_metadata(tmp_path, "python train.py --weights yolov3-tiny.pt")
    assert md.model_name == "yolov3-tiny"
    assert md.params_millions is not None and abs(md.params_millions - 8.8) < 0.1
    built = _FROM_WEIGHTS.replace('opt.cfg or ckpt["model"].yaml', '{"depth": 2}')  # a model of its own: not named
    write(tmp_path, {"train.py": built})
    assert extract_metadata(tmp_path, "python train.py --weights yolov3-tiny.pt").model_name != "yolov3-tiny"


def test_squad_is_a_question_answering_dataset(tmp_path: Path) -> None:
    """A job that trains on SQuAD with an answer-span head (``start_logits`` / ``end_positions``) answers questions:
    the task follows from the dataset when nothing else names one (the commit before left it open); code that only
    names SQuAD somewhere is no QA job."""
    code = _CLASSIFIER.replace('"cola": "ColaProcessor", "mnli": "MnliProcessor", "mrpc": "MrpcProcessor"', "")
    write(tmp_path, {"run_squad_v1.py": code + "\n# reads SQuAD v1.1 train-v1.1.json\n"})
    md = extract_metadata(tmp_path, "python run_squad_v1.py")
    assert md.dataset is not None and md.dataset.startswith("SQuAD")
    assert md.task is None
    heads = "\n\ndef loss(start_logits, end_logits, start_positions, end_positions):\n    return start_logits\n"
    write(tmp_path, {"run_squad_v1.py": code + "\n# reads SQuAD v1.1 train-v1.1.json\n" + heads})
    assert extract_metadata(tmp_path, "python run_squad_v1.py").task == "question_answering_finetuning"
