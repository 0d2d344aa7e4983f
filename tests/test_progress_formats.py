"""Progress the Metric Tracker reads beyond named keys: timestamps, nested counters, rates, divergence."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schedmate.agents.logtext.lines import split_physical_lines
from schedmate.agents.logtext.timestamps import line_time
from schedmate.agents.tracker.metric_tracker import MetricTracker
from schedmate.infra.cli import app
from schedmate.infra.measure.eval_failures import evaluate_failures
from schedmate.infra.measure.eval_metrics import evaluate_metrics

CORPUS = Path(__file__).parent / "data" / "corpus" / "open"


def snap(lines: list[str]) -> dict[str, object]:
    """The snapshot a fresh tracker gives after ``lines``."""
    t = MetricTracker()
    t.feed("j", 1, lines)
    return t.snapshot("j").as_dict()


@pytest.mark.parametrize(
    ("line", "seconds"),
    [
        ("2024-03-01 10:00:05,250 - INFO - step 3", 5.25),
        ("[2024-03-01 10:00:05.5] step 3", 5.5),
        ("03/01/2024 10:00:05 - INFO - step 3", 5.0),
        ("03/01 10:00:05 - mmengine - INFO - Epoch(train) [1][10/90]", 5.0),
        ("I0301 10:00:05.125000 1234 train.py:12] Step 3", 5.125),
        ("[10:00:05.000100] Epoch: [2]  [10/50]", 5.0001),
    ],
)
def test_line_time_reads_common_logger_stamps(line: str, seconds: float) -> None:
    """Each logger's stamp is read; two lines one second apart differ by one second."""
    t = line_time(line)
    later = line_time(line.replace("10:00:05", "10:00:06"))
    assert t is not None and later is not None
    assert later - t == pytest.approx(1.0)
    assert (t % 60) == pytest.approx(seconds, abs=1e-6)


def test_no_stamp_in_an_eta_or_bar() -> None:
    """A bar's elapsed time or an ETA later in the line is not when the line was printed."""
    assert line_time(" 45%|████▌     | 450/1000 [01:10:00<01:25:00,  6.41it/s]") is None
    assert line_time("step 10 loss 0.5 eta 10:00:00") is None


def test_step_time_from_timestamps_when_the_log_prints_none() -> None:
    """Seconds between the latest two steps' stamps over the steps between them; midnight is crossed."""
    lines = [f"[23:59:{40 + 10 * i:02d}] step {100 * (i + 1)} loss 0.{i + 1}" for i in range(2)]
    lines.append("[00:00:10] step 300 loss 0.3")
    got = snap(lines)
    assert got["step"] == 300 and got["step_time_s"] == pytest.approx(20 / 100)


def test_a_printed_step_time_wins_over_timestamps() -> None:
    """When the log prints its own step time, timestamps never replace it."""
    lines = [f"2024-01-01 10:00:{10 * i:02d} step {i + 1} loss 1.0 time 0.25" for i in range(3)]
    assert snap(lines)["step_time_s"] == pytest.approx(0.25)


def test_nested_counters_give_epoch_and_step() -> None:
    """Two ``n/N`` counters on a line are the outer (epoch) and inner (step) loops."""
    got = snap(["| [   2/   5][   300/  900] |  17/400 batches | loss 0.5"])
    assert (got["epoch"], got["step"], got["total_steps"]) == (2, 300, 900)
    got2 = snap(["| epoch 004  120 / 800 loss=2.5, lr=0.001"])
    assert (got2["epoch"], got2["loss"]) == (4, 2.5) and got2["step"] is not None


def test_rates_of_steps_become_step_times_and_batch_gives_samples() -> None:
    """``steps/s`` and ``ups`` invert to a step time; a global batch over the step time is samples/s."""
    assert snap(["step 10 | loss 1.5 | 4.00 steps/s"])["step_time_s"] == pytest.approx(0.25)
    got = snap(["iter 10 | global batch size: 256 | step time (ms): 500.0 | loss: 2.0"])
    assert got["samples_per_s"] == pytest.approx(512.0)


def test_a_diverged_loss_is_reported_as_such() -> None:
    """A NaN or infinite loss is the latest loss (not skipped); other non-finite numbers are ignored."""
    got = snap(["step 1 loss 0.52 lr 0.1", "step 2 loss nan lr 0.1"])
    assert got["step"] == 2 and isinstance(got["loss"], float) and math.isnan(got["loss"])
    assert snap(["step 1 loss 0.5", "step 2 loss inf"])["loss"] == math.inf


def test_metrics_json_writes_non_finite_loss_as_a_string(tmp_path: Path) -> None:
    """``schedmate metrics --json`` stays strict JSON: a NaN loss is the string "NaN"."""
    log = tmp_path / "t.log"
    log.write_text("step 1 loss 0.5\nstep 2 loss nan\n")
    out = CliRunner().invoke(app, ["metrics", str(log), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["loss"] == "NaN"


def test_clock_durations_and_validation_losses_are_not_progress() -> None:
    """ "Total time: 1:52:15" is no step time; "val_loss" is no training loss; the named loss wins."""
    got = snap(["step 5 loss 0.40 nll_loss 0.30 val_loss 0.9", "Epoch 1 Total time: 1:52:15"])
    assert got["loss"] == pytest.approx(0.40) and got["step_time_s"] is None


def test_open_corpus_stays_right() -> None:
    """Regression guard on the open part of the own corpus (not an accuracy claim: the rules saw it)."""
    assert evaluate_metrics(CORPUS / "progress.jsonl")["share"] >= 0.9
    out = asyncio.run(evaluate_failures(CORPUS / "failures.jsonl"))
    assert out["category_accuracy"] >= 0.9 and out["infra_f1"] >= 0.9


def test_a_set_without_infrastructure_failures_has_no_infrastructure_f1() -> None:
    """A labelled set with no infrastructure failure (sealed3: user_script and other) reports infrastructure
    precision, recall and F1 as undefined (None, "n/a" in the table), not as 0.0 beside a 100 % category accuracy."""
    out = asyncio.run(evaluate_failures(CORPUS.parent / "sealed3" / "failures.jsonl"))
    assert {r["want"]["category"] for r in out["results"]} <= {"user_script", "other", "framework"}
    assert (out["infra_precision"], out["infra_recall"], out["infra_f1"]) == (None, None, None)
    assert out["category_accuracy"] > 0


def test_keras_bars_windowed_losses_and_epoch_led_counters() -> None:
    """A Keras bar that has not moved yet still counts; a moving-average loss yields to the step's loss; a
    counter printed right after its epoch index counts that epoch's batches (global step derived at once)."""
    got = snap(["  3/700 [..............................] - ETA: 2:29:01 - loss: 0.52"])
    assert (got["step"], got["total_steps"], got["loss"]) == (3, 700, 0.52)
    assert snap(["step 12 - loss 1.25 - moving ave loss 1.40"])["loss"] == 1.25
    got2 = snap(["2024-01-01 10:00:00 - INFO - Epoch [3][150/2500]\tlr: 0.02, time: 1.0, loss: 0.04"])
    assert got2["step"] == 2 * 2500 + 150


def test_a_diverged_loss_survives_the_state_record_and_the_metrics_event() -> None:
    """A NaN loss round-trips through the job's durable state (JobState JSON) and a jobs.metrics event; a stored
    value that is no number is dropped on restore instead of failing the worker."""
    from schedmate.agents.logtext.slots import learn_spec, numbers_of  # noqa: PLC0415
    from schedmate.agents.tracker.progress import JobProgress  # noqa: PLC0415
    from schedmate.schemas.jobs_metrics import JobMetrics  # noqa: PLC0415
    from schedmate.schemas.track_state import JobState, TrackPart  # noqa: PLC0415

    jp = JobProgress()
    line = "step 2 loss nan"
    jp.update(learn_spec(line), numbers_of(line), 1)
    stored = JobState(job_id="j", track=TrackPart(progress=jp.to_state())).to_bytes()
    back = JobProgress.from_state(JobState.model_validate_json(stored).track.progress)
    assert back.snapshot().step == 2 and math.isnan(back.snapshot().loss or 0.0)
    event = JobMetrics(job_id="j", window_start=0, window_end=1, loss=float("inf")).to_bytes()
    assert b'"loss":"Infinity"' in event and JobMetrics.model_validate_json(event).loss == math.inf
    odd = JobProgress.from_state({"latest": {"loss": None, "step": "x", "lr": 0.1}})
    assert odd.latest == {"lr": 0.1}


TABLE = """\
      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size
      1/50      3.1G      1.2     0.9      1.3         10        640: 100%|##########| 20/20 [00:05<00:00,  3.80it/s]
                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|#####| 8/8 [00:03<00:00,  2.17it/s]
                   all        722       1444      0.989       0.99      0.993      0.681

      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size
      2/50      3.1G      1.1     0.8      1.2         10        640:  50%|#####     | 10/20 [00:02<00:02,  4.00it/s]\r\
      2/50      3.1G      1.1     0.8      1.2         10        640: 100%|##########| 20/20 [00:05<00:00,  3.90it/s]
                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|#####| 8/8 [00:03<00:00,  2.17it/s]
                   all        722       1444      0.989       0.99      0.993      0.681
"""


def test_a_column_table_is_read_under_its_header() -> None:
    """Rows under an `Epoch GPU_mem box_loss …` header are read by their column names: epoch 2 of 50, the bar's
    20 steps per epoch as the global step 40, the loss as the sum of the parts the table shows, the step time
    from the bar's rate; the validation table between epochs is not taken for a training row."""
    tracker = MetricTracker()
    tracker.feed("t", 1, split_physical_lines(TABLE.encode()))
    snap = tracker.snapshot("t").as_dict()
    assert (snap["epoch"], snap["step"], snap["total_steps"]) == (2, 40, 1000)
    assert snap["loss"] == pytest.approx(1.1 + 0.8 + 1.2)
    assert snap["step_time_s"] == pytest.approx(1 / 3.9, rel=0.01)
    assert snap["line"] == 7


def test_an_epoch_led_counter_behind_a_dated_prefix() -> None:
    """MMEngine's `Epoch(train) [83][150/2693]` after a `2024/01/24` date: the counter follows the epoch right
    before it (not the date's n/N), so the global step is 82 x 2693 + 150."""
    line = ("2024/01/24 02:48:32 - mmengine - INFO - Epoch(train)  [83][ 150/2693]  base_lr: 2.0000e-03 lr: 3.9620e-04"
            "  eta: 10:05:56  time: 0.5916  data_time: 0.0035  memory: 11257  loss: 1944.7829\n")  # fmt: skip
    tracker = MetricTracker()
    tracker.feed("m", 1, [line])
    snap = tracker.snapshot("m").as_dict()
    assert (snap["step"], snap["epoch"], snap["lr"], snap["step_time_s"]) == (82 * 2693 + 150, 83, 3.962e-4, 0.5916)


def test_a_bar_whose_glyphs_a_notebook_dropped_still_counts_steps() -> None:
    """Lightning's bar copied from a notebook: `Epoch 0:  94% 1599/1702 [12:52<00:49,  2.07it/s, loss=0.158]` has no
    `|█|` around the counter; the percentage and the `[elapsed<eta` that follow still make it a bar."""
    lines = [f"Epoch 0:  94% {n}/1702 [12:52<00:49,  2.07it/s, loss=0.158, v_num=0, train_loss=0.149]" for n in
             (1597, 1598, 1599)]  # fmt: skip
    got = snap(lines)
    assert (got["step"], got["epoch"]) == (1599, 0) and got["loss"] in (0.158, 0.149)  # running mean or the step's
    assert got["step_time_s"] == pytest.approx(1 / 2.07, rel=0.01)


def test_a_declared_run_length_gives_the_remaining_time_when_no_counter_shows_a_total() -> None:
    """nanoGPT prints `Overriding: max_iters = 5000` once, then `iter N: loss …, time …ms` with no n/N: the declared
    length is the total, so the tracker can say what is left ((5000 - 200) x 0.03 s). Lightning's `max_steps: -1`
    (unlimited) declares nothing, a declared total below the step is not the run's length, and a declared total
    survives the job's durable state."""
    from schedmate.agents.tracker.progress import JobProgress  # noqa: PLC0415

    iters = [f"iter {n}: loss 2.{n % 7}, time 30.00ms, mfu 1.2%" for n in (100, 200)]
    got = snap(["Overriding: max_iters = 5000", *iters])
    assert got["total_steps"] == 5000
    assert got["eta_s"] == pytest.approx(4800 * 0.03)
    assert snap(["  max_steps: -1", *iters])["eta_s"] is None
    assert snap(["max_iters = 150", *iters])["total_steps"] is None
    tracker = MetricTracker()
    tracker.feed("j", 1, split_physical_lines(b"[RANK 0]   Total optimization steps = 3,000\n"))
    state = tracker.job("j").progress.to_state()
    assert JobProgress.from_state(json.loads(json.dumps(state))).declared_total == 3000


def test_microseconds_per_step_are_a_step_time() -> None:
    """Keras prints fast steps in microseconds (``85us/step``, ``85µs/step``): read as seconds like ``ms/step``."""
    line = "178/178 [==============================] - 0s 85us/step - loss: 0.0286 - acc: 0.0000e+00"
    assert snap(["Epoch 8/250", line])["step_time_s"] == pytest.approx(85e-6)
    assert snap(["Epoch 8/250", line.replace("85us", "85\u00b5s")])["step_time_s"] == pytest.approx(85e-6)
    assert snap(["Epoch 8/250", line.replace("85us", "85ms")])["step_time_s"] == pytest.approx(0.085)


def test_a_training_prefix_names_the_same_metric() -> None:
    """DeiT's per-epoch JSON (``train_lr``, ``train_loss``) and ``train/`` keys name the training metric; an
    evaluation key does not."""
    got = snap(['{"train_lr": 0.00047, "train_loss": 3.5557, "test_loss": 1.11, "epoch": 157, "n_parameters": 11}'])
    assert got["lr"] == pytest.approx(0.00047) and got["loss"] == pytest.approx(3.5557) and got["epoch"] == 157
    assert snap(['{"train/epoch": 2, "train/lr": 0.1, "eval/lr": 0.5, "train/loss": 1.5}'])["lr"] == pytest.approx(0.1)


def test_lightning_rich_bar_counts_epochs_from_zero_when_the_run_states_its_epochs() -> None:
    """Lightning's Rich bar to a non-terminal prints once, at the end: ``Epoch 1/1 ━━ 64/64`` of ``max_epochs=2``
    is the second epoch's 64th batch, global step 128 of 128 (real H100 log, corpus gpu/GP05). Without the
    ``max_epochs`` line the bar alone cannot say whether it counts from 0 (Keras prints ``Epoch 1/1`` for its only
    epoch), so the counter stays the step; the state round trip keeps the declared epochs."""
    bar = "Epoch 1/1  ━━━━━━━━━━━━━━━━━ 64/64 0:00:00 • 0:00:00 376.27it/s train_loss: 0.678"
    stopped = "`Trainer.fit` stopped: `max_epochs=2` reached."
    got = snap([stopped, bar])
    assert (got["step"], got["total_steps"], got["epoch"], got["loss"]) == (128, 128, 1, 0.678)
    assert snap([bar])["step"] == 64
    t = MetricTracker()
    t.feed("j", 1, [stopped])
    restored = MetricTracker()  # a restarted worker, from the job's durable state
    restored.restore("j", json.loads(json.dumps(t.job("j").progress.to_state())))
    restored.feed("j", 2, [bar])
    assert restored.snapshot("j").as_dict()["step"] == 128


def test_a_key_in_brackets_names_the_value_after_it_and_a_duration_in_minutes_is_no_step_time() -> None:
    """A loguru trainer's `[Loss] nan | [step]   149 | [time] 0.4m`: the bracketed keys name the loss (NaN, reported
    as such) and the global step, which wins over the epoch's `iter[14/15]` counter; `0.4m` is minutes per epoch, not
    a step time, so the step time comes from the stamps: 25.369 s over the 15 steps between the last two lines."""
    lines = [
        f"2023-01-25 00:22:{s} | INFO     | trainers.base_trainer:train_epochs:256 - [R0] | E{e} iter[ 14/ 15] | "
        f"[Loss] {loss} | [exp] ./exp/0125/car/lion_B40 | [step]   {step} | [url] none | [time] 0.4m (~5h) |"
        for s, e, loss, step in (
            ("00.025", 7, "51566519.44", 119),
            ("25.365", 8, "nan", 134),
            ("50.734", 9, "nan", 149),
        )
    ]
    got = snap(lines)
    assert got["step"] == 149 and math.isnan(float(got["loss"]))  # type: ignore[arg-type]
    assert got["step_time_s"] == pytest.approx(25.369 / 15, rel=1e-3)


def test_a_total_column_that_sums_the_parts_before_it_is_the_loss() -> None:
    """Early YOLOv5 headers name the loss parts `box obj cls` and then `total`: the total is the loss when it is the
    sum of the number columns before it (to its printed precision); a `total` that is not their sum is no loss."""
    head = " Epoch   gpu_mem       box       obj       cls     total    labels  img_size"
    row = "     0/299      5.2G      0.11    0.1612   0.03867    {}        28      1280:   1%|▌    | 1/78 [00:04<05:27,  4.26s/it]"
    assert snap([head, row.format("0.3099")])["loss"] == pytest.approx(0.3099)
    assert snap([head, row.format("0.4099")])["loss"] is None


def test_a_linking_word_between_a_metrics_name_and_its_value_is_not_part_of_the_name() -> None:
    """Keras's LearningRateScheduler prints `setting learning rate to 0.001` before each epoch: the rate in effect,
    read although `to` stands between the name and the number; the epoch summary after it still gives loss and step."""
    got = snap([
        "Epoch 31/120",
        "Epoch 00031: LearningRateScheduler setting learning rate to 0.001.",
        "1000/1000 [==============================] - 1884s 2s/step - loss: 3.5842 - val_loss: 3.4307",
    ])  # fmt: skip
    assert (got["lr"], got["loss"], got["epoch"]) == (0.001, 3.5842, 31)


def test_a_counter_named_by_its_loops_word_is_the_step_and_at_links_a_name_to_its_value() -> None:
    """`Batch 20/500` and DLRM's `Finished training it 960/306969` are counters named by the loop's word (alone,
    `batch 32` would be a size, not a step); RVC's `step at 59000` names the step across `at`, and the stamps then
    give the step time: 7311 s over the 200 steps between the last two lines."""
    assert snap(["Epoch 1, Batch 20/500, loss 0.5"])["step"] == 20
    dlrm = snap(["Finished training it 960/306969 of epoch 0, 25.53 ms/it, loss 0.500798, accuracy 76.797"])
    assert (dlrm["step"], dlrm["total_steps"], dlrm["step_time_s"]) == (960, 306969, pytest.approx(0.02553))
    assert snap(["batch 32 loss 0.5"])["step"] is None
    rvc = snap([
        "2024-04-10 05:03:10 | INFO | logs | Total loss at epoch 5, step at 58800, loss=32.79433822631836",
        "2024-04-10 07:05:01 | INFO | logs | Total loss at epoch 5, step at 59000, loss=35.7524299621582",
    ])  # fmt: skip
    assert (rvc["step"], rvc["epoch"], rvc["loss"]) == (59000, 5, 35.7524299621582)
    assert rvc["step_time_s"] == pytest.approx(7311 / 200)


def test_a_bracketed_index_after_the_loops_word_is_the_step() -> None:
    """MXNet's Speedometer prints `Epoch[2] Batch [200]  Speed: 14883.78 samples/sec`: the bracketed index after
    `Batch` is the loop position (with no total), the speed a throughput."""
    got = snap([
        "INFO:root:Epoch[2] Batch [100]  Speed: 15046.15 samples/sec     Train-accuracy=0.970625",
        "INFO:root:Epoch[2] Batch [200]  Speed: 14883.78 samples/sec     Train-accuracy=0.965938",
    ])  # fmt: skip
    assert (got["step"], got["epoch"], got["samples_per_s"]) == (200, 2, 14883.78)


def test_paddles_batch_cost_is_the_step_time_and_images_per_sec_a_throughput() -> None:
    """PaddleDetection and PaddleSeg print `batch_cost: 24.83382 sec, ips: 0.32214 images/sec`: the step time as a
    batch's cost (not the 39 s the stamps suggest between lines two steps apart), the images per second a throughput."""
    got = snap([
        "2020-09-25 18:43:12,951-INFO: iter: 8, lr: 0.000039, 'loss': '95.421570', eta: 7:26:01, batch_cost: 22.45121 "
        "sec, ips: 0.35633 images/sec",
        "2020-09-25 18:44:31,000-INFO: iter: 10, lr: 0.000040, 'loss': '43.708477', eta: 8:12:32, batch_cost: 24.83382 "
        "sec, ips: 0.32214 images/sec",
    ])  # fmt: skip
    assert (got["step"], got["step_time_s"], got["samples_per_s"]) == (10, 24.83382, 0.32214)


def test_a_fractional_value_under_a_step_key_is_that_steps_time() -> None:
    """OpenPCDet's logger prints `Epoch [1/128][60/1201] ... Data: 0.07 (0.19), Iter: 2.13 (2.56)`: a step count is
    never fractional, so `Iter: 2.13` is an iteration's time in seconds and the counter stays the step."""
    got = snap([
        "2023-08-29 12:54:29,663   INFO  Epoch [1/128][60/1201] LR: 0.004, ETA: 4 days, 13:28:58, Data: 0.07 (0.19), "
        "Iter: 2.13 (2.56), Accuracy: 0.61, loss_seg=1.42, loss=2.11, n_captions=16.2(12.8)"
    ])  # fmt: skip
    assert (got["step"], got["epoch"], got["step_time_s"], got["loss"]) == (60, 1, 2.13, 2.11)


def test_tensorflows_global_step_per_second_line_is_the_step_rate() -> None:
    """TensorFlow's `INFO:tensorflow:global_step/sec: 2.22729` after each `step: 1100 total_loss: nan …` line: a
    rate of steps (its inverse the step time), printed on a line of its own; the NaN loss is reported as such."""
    got = snap([
        "step: 1000 total_loss: nan obj_cls: nan frag_cls: nan frag_loc: nan",
        "INFO:tensorflow:global_step/sec: 2.22868",
        "step: 1100 total_loss: nan obj_cls: nan frag_cls: nan frag_loc: nan",
        "INFO:tensorflow:global_step/sec: 2.22729",
    ])  # fmt: skip
    assert got["step"] == 1100
    assert got["step_time_s"] == pytest.approx(1 / 2.22729, rel=1e-3)
    assert math.isnan(float(got["loss"]))  # type: ignore[arg-type]
