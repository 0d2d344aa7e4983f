"""Unit tests: naming the numeric slots of progress lines from many frameworks (pure logic)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedmate.agents.logtext.slots import learn_spec, numbers_of, template_key
from schedmate.agents.tracker.metric_tracker import MetricTracker
from schedmate.agents.tracker.progress import JobProgress


def one_line(line: str) -> dict[str, float]:
    """Metrics a fresh job gets from one line."""
    jp = JobProgress()
    jp.update(learn_spec(line), numbers_of(line), 1)
    return jp.latest


CASES = [
    (
        " iteration      100/  500000 | consumed samples:        51200 | elapsed time per iteration (ms): 1234.5 |"
        " learning rate: 1.000E-04 | global batch size:   512 | lm loss: 7.123456E+00 | loss scale: 65536.0 |"
        " grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        {
            "step": 100,
            "total_steps": 500000,
            "step_time_s": 1.2345,
            "lr": 1e-4,
            "loss": 7.123456,
            "global_batch_size": 512,
        },
    ),
    (" 45%|████▌     | 450/1000 [01:10<01:25,  6.41it/s]", {"step": 450, "total_steps": 1000, "step_time_s": 1 / 6.41}),
    ("  2%|▏         | 20/1000 [00:45<36:42,  2.25s/it]", {"step": 20, "total_steps": 1000, "step_time_s": 2.25}),
    (
        "{'loss': 2.3456, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.35}",
        {"loss": 2.3456, "lr": 4.5e-05, "epoch": 0.35},
    ),
    (
        "1875/1875 ━━━━━━━━━━━━━━━━━━━━ 12s 6ms/step - accuracy: 0.9123 - loss: 0.2871",
        {"step": 1875, "total_steps": 1875, "step_time_s": 0.006, "loss": 0.2871},
    ),
    (
        "Epoch 1:  40%|████      | 80/200 [00:05<00:07, 15.87it/s, v_num=0, train_loss=0.512]",
        {"epoch": 1, "step": 80, "total_steps": 200, "step_time_s": 1 / 15.87, "loss": 0.512},
    ),
    (
        "Epoch: [0][ 100/5005]\tTime  0.512 ( 0.623)\tData  0.010 ( 0.045)\tLoss 6.8125e+00 (6.9012e+00)\tAcc@1   0.39 (  0.12)",
        {"epoch": 0, "step": 100, "total_steps": 5005, "step_time_s": 0.512, "loss": 6.8125},
    ),
    (
        "[2024-01-01 12:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=100, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]",
        {"step": 100, "lr": 1e-4},
    ),
    (
        "epoch 001:    100 / 1000 loss=9.123, nll_loss=8.5, ppl=362.1, wps=12345.6, ups=1.2, wpb=10240, bsz=32, "
        "num_updates=100, lr=1.25e-05, gnorm=1.5, train_wall=80, wall=90",
        {"epoch": 1, "loss": 9.123, "tokens_per_s": 12345.6, "step": 100, "lr": 1.25e-05, "step_time_s": 1 / 1.2},
    ),
    (
        "Step 200/1000, Loss: 0.4567, LR: 3.0e-4, 0.25s/step",
        {"step": 200, "total_steps": 1000, "loss": 0.4567, "lr": 3e-4, "step_time_s": 0.25},
    ),
    (
        "step: 300 | loss: 1.234 | lr: 2e-5 | tokens/sec: 45,678",
        {"step": 300, "loss": 1.234, "lr": 2e-5, "tokens_per_s": 45678},
    ),
    ("iter 2000: loss 1.2345, time 123.45ms, mfu 41.20%", {"step": 2000, "loss": 1.2345, "step_time_s": 0.12345}),
    (
        "07/01 10:00:00 - mmengine - INFO - Iter(train) [  500/20000]  lr: 1.0000e-02  eta: 1:02:03  time: 0.1910  "
        "data_time: 0.0100  memory: 1234  loss: 0.5678",
        {"step": 500, "total_steps": 20000, "lr": 0.01, "step_time_s": 0.191, "loss": 0.5678},
    ),
]


@pytest.mark.parametrize(("line", "expected"), CASES)
def test_framework_lines(line: str, expected: dict[str, float]) -> None:
    """Each framework's progress line yields exactly the expected metrics, values from the line."""
    got = one_line(line)
    for k, v in expected.items():
        assert k in got, f"{k} missing from {got}"
        assert math.isclose(got[k], v, rel_tol=1e-6), (k, got[k], v)
    unexpected = set(got) - set(expected) - {"total_epochs"}
    assert not unexpected, f"spurious metrics {unexpected} in {got}"


@pytest.mark.parametrize(
    "line",
    [
        "{'eval_loss': 1.256, 'eval_runtime': 0.19, 'eval_samples_per_second': 1020}",
        "{'train_runtime': 18.62, 'train_samples_per_second': 257.8, 'train_loss': 2.146, 'epoch': 1.2}",
        "step 1000: train loss 1.8610, val loss 1.8689",
        "Validation DataLoader 0: 100%|██████████| 8/8 [00:00<00:00, 87.76it/s]",
        "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.52s/it]",
        "Test loss: 1.6529905796051025",
        "Saving checkpoint at 4 epochs",
        "11/21/2026 15:16:21 - INFO - __main__ - model has 124.4M parameters",
    ],
)
def test_non_training_lines_carry_no_progress(line: str) -> None:
    """Evaluation, summaries, loading bars and plain info lines do not move training progress."""
    spec = learn_spec(line)
    jp = JobProgress()
    assert not jp.update(spec, numbers_of(line), 1)
    assert not ({"step", "loss", "step_time_s"} & set(jp.latest))


def test_per_epoch_counter_becomes_global_step() -> None:
    """A bar that restarts every epoch (Lightning) gives the global step once the restart is seen."""
    t = MetricTracker()
    lines = []
    for epoch in range(3):
        for n in (50, 100):
            lines.append(f"Epoch {epoch}: {n}%|█████     | {n}/100 [00:05<00:05, 10.00it/s, train_loss=0.5]")
    t.feed("j", 1, lines)
    assert t.snapshot("j").step == 300
    assert t.snapshot("j").epoch == 2


def test_tutorial_style_keyed_step_restarting_each_epoch() -> None:
    """'Epoch [e/E], Step [n/N]' counters that restart per epoch become a global step."""
    t = MetricTracker()
    lines = [f"Epoch [{e}/3], Step [{n}/600], Loss: {1 / (e * n):.4f}" for e in (1, 2, 3) for n in (100, 600)]
    t.feed("j", 1, lines)
    snap = t.snapshot("j")
    assert (snap.step, snap.epoch, snap.total_steps) == (1800, 3, 1800)
    assert snap.loss == round(1 / 1800, 4)


def test_backspace_redraws() -> None:
    """A bar redrawn with backspaces (Keras in a terminal) reads as its last redraw."""
    t = MetricTracker()
    t.feed("j", 1, ["10/100 [==>...] - loss: 0.9000" + "\x08" * 30 + "20/100 [====>..] - loss: 0.8000"])
    assert (t.snapshot("j").step, t.snapshot("j").loss) == (20, 0.8)


def test_one_based_epochs_keras() -> None:
    """Keras prints 1-based epochs on their own line and a per-epoch counter below."""
    t = MetricTracker()
    lines = []
    for e in (1, 2, 3):
        lines += [f"Epoch {e}/3", "100/100 - 2s - 20ms/step - loss: 0.5000 - val_loss: 0.6"]
    t.feed("j", 1, lines)
    snap = t.snapshot("j")
    assert (snap.step, snap.epoch, snap.step_time_s) == (300, 3, 0.02)


def test_nested_eval_bar_does_not_replace_training_bar() -> None:
    """An evaluation bar (smaller total) inside training leaves step and step time alone."""
    t = MetricTracker()
    t.feed(
        "j", 1, [" 30%|███       | 300/1000 [00:30<01:10, 10.00it/s]", " 50%|█████     | 5/10 [00:00<00:00, 80.00it/s]"]
    )
    snap = t.snapshot("j")
    assert (snap.step, snap.total_steps, snap.line) == (300, 1000, 1)
    assert snap.step_time_s == pytest.approx(0.1)
    assert snap.eta_s == pytest.approx(70.0)


def test_carriage_return_redraws_and_ansi() -> None:
    """The visible (last) redraw of a \\r line is what counts; colour codes are ignored."""
    t = MetricTracker()
    line = "\r 10%|█         | 10/100 [00:01<00:09, 10.00it/s]\r\x1b[32m 20%|██        | 20/100 [00:02<00:08, 10.00it/s]\x1b[0m"
    t.feed("j", 1, [line])
    assert t.snapshot("j").step == 20


def test_log_line_overwritten_by_a_bar_redraw_still_counts() -> None:
    """A logger line followed by a bar redraw (\r) on the same physical line keeps its metrics."""
    t = MetricTracker()
    t.feed("j", 1, ["step=40 loss=0.7500 lr=0.001\r 40%|████      | 40/100 [00:04<00:06, 10.00it/s]"])
    snap = t.snapshot("j")
    assert (snap.step, snap.loss, snap.lr) == (40, 0.75, 0.001)


def test_data_loop_bars_are_not_training() -> None:
    """Bars that count examples, bytes or dataset batches do not move the step."""
    t = MetricTracker()
    t.feed("j", 1, ["Map: 100%|██████████| 5000/5000 [00:01<00:00, 4100.00 examples/s]",
                    "Computing widget examples:   0%|          | 0/1 [00:00<?, ?example/s]",
                    "model.safetensors: 100%|██████████| 548M/548M [00:05<00:00, 98.1MB/s]",
                    "tokenizing 100%|██████████| 20/20 [00:00<00:00, 80.00ba/s]"])  # fmt: skip
    assert t.snapshot("j").step is None


def test_partial_line_updates_progress_without_counting_lines() -> None:
    """A live (unfinished) bar updates progress; it is not a line."""
    t = MetricTracker()
    t.feed("j", 1, ["starting"])
    assert t.feed_partial("j", 2, "\r 5%|▌         | 5/100 [00:01<00:19,  5.00it/s]")
    assert t.snapshot("j").step == 5
    assert t.job("j").counts.lines == 1


def test_state_round_trip() -> None:
    """Durable per-job state restores the same snapshot and keeps learning."""
    t = MetricTracker()
    t.feed("j", 1, ["Epoch 0: 100%|██████████| 10/10 [00:01<00:00, 10.00it/s, train_loss=0.9]",
                    "Epoch 1:  50%|█████     | 5/10 [00:01<00:01, 10.00it/s, train_loss=0.8]"])  # fmt: skip
    state = t.job("j").progress.to_state()
    t2 = MetricTracker()
    t2.restore("j", state)
    assert t2.snapshot("j") == t.snapshot("j")
    t2.feed("j", 3, ["Epoch 1: 100%|██████████| 10/10 [00:02<00:00, 10.00it/s, train_loss=0.7]"])
    assert t2.snapshot("j").step == 20


@given(
    step=st.integers(0, 10**7),
    loss=st.floats(0, 1e3, allow_nan=False).map(lambda x: round(x, 4)),
    lr=st.floats(1e-9, 1.0, allow_nan=False),
)
def test_values_come_from_the_line_and_templates_are_stable(step: int, loss: float, lr: float) -> None:
    """Every extracted value is a number of the line; the template key ignores the numbers."""
    line = f"step={step} loss={loss} lr={lr:.3e} step_time=0.25s"
    assert template_key(line) == template_key("step=1 loss=2.0 lr=1.000e-04 step_time=0.5s")
    got = one_line(line)
    nums = numbers_of(line)
    assert got["step"] == step
    assert got["loss"] == loss
    for k, v in got.items():
        assert any(math.isclose(v, n * s, rel_tol=1e-9) for n in nums for s in (1.0, 0.001)), k


def test_failure_tail_is_bounded() -> None:
    """A job that prints errors forever keeps a bounded tail (the start of the cascade)."""
    from schedmate.agents.failures.tail import LINE_CHARS, TAIL_MAX, TAIL_MAX_CHARS, FailureTails  # noqa: PLC0415

    tails = FailureTails()
    t = MetricTracker(line_sink=tails.record)
    t.feed("j", 1, ["step 1 loss 0.5", *(f"ERROR retry {i} " + "x" * 3000 for i in range(5000))])
    first, lines = tails.lines("j")
    assert first == 1 and lines[1].startswith("ERROR retry 0 ")
    assert all(len(x) <= LINE_CHARS for x in lines)
    assert sum(len(x) for x in lines) <= TAIL_MAX_CHARS + LINE_CHARS
    t.feed("k", 1, ["step 1 loss 0.5", *(f"ERROR retry {i}" for i in range(5000))])
    assert len(tails.lines("k")[1]) == TAIL_MAX
