"""The failure taxonomy: who a failure belongs to, from where and how the error was raised."""

from __future__ import annotations

import pytest

from schedmate.agents.failures.diagnosis import diagnose_lines
from schedmate.agents.failures.taxonomy import classify_error, parse_exception_line
from schedmate.agents.failures.tracebacks import Frame, find_tracebacks

JOB = Frame("/home/u/proj/train.py", 40, "main")
LIB_TORCH = Frame("/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1500, "_call_impl")
LIB_HF = Frame("/opt/venv/lib/python3.11/site-packages/transformers/trainer.py", 2100, "train")
LIB_STD = Frame("/usr/lib/python3.11/json/decoder.py", 355, "raw_decode")


@pytest.mark.parametrize(
    ("exc", "message", "frames", "category", "component"),
    [
        ("OSError", "[Errno 122] Disk quota exceeded: '/ckpt/step_100.pt'", (JOB,), "infrastructure", "storage"),
        ("OSError", "[Errno 5] Input/output error", (JOB, LIB_TORCH), "infrastructure", "storage"),
        ("RuntimeError", "NCCL error in: ProcessGroupNCCL.cpp:1, unhandled system error, NCCL version 2.18.1",
         (JOB, LIB_TORCH), "infrastructure", "network"),
        ("RuntimeError", "NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details), ncclInvalidUsage",
         (JOB, LIB_TORCH), "user_script", None),
        ("RuntimeError", "CUDA error: an illegal memory access was encountered", (JOB,), "other", None),
        ("RuntimeError", "CUDA error: CUDA-capable device(s) is/are busy or unavailable", (JOB, LIB_TORCH),
         "infrastructure", "gpu"),
        ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x512 and 256x10)", (JOB, LIB_TORCH),
         "user_script", None),
        ("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cpu!",
         (), "user_script", None),
        ("KeyError", "'labels'", (JOB,), "user_script", None),
        ("ValueError", "bad value", (JOB, LIB_TORCH), "user_script", None),
        ("TypeError", "forward() got an unexpected keyword argument 'labels'", (JOB, LIB_HF, LIB_TORCH),
         "user_script", None),
        ("ValueError", "expected a float", (JOB, LIB_HF, LIB_TORCH), "framework", None),
        ("UnboundLocalError", "local variable 'x' referenced before assignment", (JOB, LIB_HF), "framework", None),
        ("RuntimeError", "false INTERNAL ASSERT FAILED at c10/core/x.cpp:12, please report a bug to PyTorch.",
         (JOB, LIB_TORCH), "framework", None),
        ("json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)", (JOB, LIB_STD),
         "user_script", None),
        ("ValueError", "Original column names {'a'} not in the dataset", (), "user_script", None),
        ("RuntimeError", "something happened", (), "other", None),
        ("RuntimeError", "something happened", (JOB, LIB_TORCH), "other", None),
    ],
)  # fmt: skip
def test_classify_error_follows_where_and_what(
    exc: str, message: str, frames: tuple[Frame, ...], category: str, component: str | None
) -> None:
    """Each rule of the taxonomy decides its case (and the caller of the raising package matters)."""
    v = classify_error(exc, message, frames)
    assert (v.category, v.component) == (category, component), v.why


def test_parse_exception_line_reads_python_and_pytest_forms() -> None:
    """Exception lines as Python prints them are parsed; prose with a colon is not an exception."""
    assert parse_exception_line("torch.OutOfMemoryError: CUDA out of memory.") == (
        "torch.OutOfMemoryError",
        "CUDA out of memory.",
    )
    assert parse_exception_line("KeyError: 'x'") == ("KeyError", "'x'")
    assert parse_exception_line("Epoch 3: loss 0.5") is None


def test_tracebacks_behind_a_log_prefix_are_read() -> None:
    """A collector's per-line prefix (timestamps that change) is stripped from the frames after the header."""
    lines = [
        "2024-01-02 10:00:01.100 [pod-7] Traceback (most recent call last):",
        '2024-01-02 10:00:01.101 [pod-7]   File "/srv/job/train.py", line 9, in <module>',
        "2024-01-02 10:00:01.102 [pod-7]     main()",
        "2024-01-02 10:00:01.103 [pod-7] ZeroDivisionError: division by zero",
    ]
    (tb,) = find_tracebacks(lines)
    assert tb.exc_type == "ZeroDivisionError" and tb.frames[0].path == "/srv/job/train.py"
    assert (tb.start, tb.end) == (0, 3)


def test_ipython_and_headless_tracebacks_are_read() -> None:
    """Jupyter-style frames and a traceback cut before its header are still tracebacks with frames."""
    ipy = [
        "AttributeError                            Traceback (most recent call last)",
        "File /opt/env/lib/python3.10/site-packages/pkg/mod.py:12, in f(x)",
        "     10 y = 1",
        "---> 12 return x.z",
        "",
        "AttributeError: 'A' object has no attribute 'z'",
    ]
    (tb,) = find_tracebacks(ipy)
    assert tb.exc_type == "AttributeError" and tb.innermost is not None and tb.innermost.in_library
    cut = [
        '  File "/srv/job/data.py", line 30, in __getitem__',
        "    return self.rows[i]",
        "IndexError: list index out of range",
    ]
    (tb2,) = find_tracebacks(cut)
    assert tb2.exc_type == "IndexError" and not tb2.frames[-1].in_library


def test_a_bare_error_line_takes_the_evidence_right_after_it() -> None:
    """An error marker followed within two lines by the error itself is one block, classified by that error."""
    lines = [
        *(f"step {i} loss 0.5" for i in range(1, 6)),
        "[ERROR] 2024-01-02 10:00:00 launcher: worker failed {",
        '  "error": {',
        '    "message": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB",',
    ]
    d = diagnose_lines(lines)
    assert d.first_error_line == 6 and d.category == "user_script"


def test_a_library_to_library_incompatibility_is_the_framework() -> None:
    """An error one installed package raises on what another installed package passed it is ``framework``."""
    lines = [
        *(f"step {i} loss 0.5" for i in range(1, 6)),
        "Traceback (most recent call last):",
        '  File "/srv/job/train.py", line 5, in <module>',
        "    trainer.resume()",
        '  File "/env/lib/python3.11/site-packages/mmengine/runner/runner.py", line 90, in resume',
        "    ckpt = torch.load(path)",
        '  File "/env/lib/python3.11/site-packages/torch/serialization.py", line 1000, in load',
        "    raise pickle.UnpicklingError(msg)",
        "_pickle.UnpicklingError: Weights only load failed.",
    ]
    d = diagnose_lines(lines)
    assert d.category == "framework" and "mmengine" in d.explanation


def test_scheduler_step_errors_and_headed_tracebacks_after_a_marker() -> None:
    """A slurmstepd error (not a cancellation) is the node's; an 'Exception has occurred' marker followed by
    its traceback is one error classified by the traceback; Jupyter context lines do not cut a traceback."""
    step = diagnose_lines(["slurmstepd: error: execve(): /tmp/slurmd/job9/slurm_script: No such file or directory"])
    assert (step.category, step.infra_component) == ("infrastructure", "node")
    marker = diagnose_lines([
        "Exception has occurred: KeyError",
        "'label'",
        '  File "/home/u/proj/data.py", line 12, in load',
        "    y = row['label']",
        "KeyError: 'label'",
    ])  # fmt: skip
    assert (marker.first_error_line, marker.category) == (1, "user_script")
    ipy = [
        "File /env/lib/python3.10/site-packages/pkg/mod.py:384, in forward(self, x)",
        *(f"    {380 + k}     y = x + {k}" for k in range(6)),
        "--> 386 return y.z",
        "",
        "AttributeError: 'Out' object has no attribute 'z'",
    ]
    (tb,) = find_tracebacks(ipy)
    assert tb.exc_type == "AttributeError"


def test_a_time_limit_is_the_jobs_request_and_a_scheduler_kill_is_located() -> None:
    """Slurm cancelling a job at its own time limit is the job's request (user_script), not a node fault nor a
    preemption; a controller's `WTERMSIG 9` is the line to point at (other: nothing says who killed it)."""
    limit = diagnose_lines([
        "srun: Job step aborted: Waiting up to 47 seconds for job step to finish.",
        "slurmstepd: error: *** JOB 7 ON n3 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
    ])  # fmt: skip
    assert (limit.first_error_line, limit.category, limit.infra_component) == (2, "user_script", None)
    preempt = diagnose_lines(
        ["slurmstepd: error: *** JOB 7 ON n3 CANCELLED AT 2024-04-20T09:09:37 DUE TO PREEMPTION ***"]
    )
    assert preempt.category == "other"
    killed = diagnose_lines([
        "[2022-05-27T10:42:30.509] sched: Allocate JobId=12 NodeList=c014 #CPUs=2 Partition=gpu",
        "[2022-05-27T11:37:57.377] _job_complete: JobId=12 WTERMSIG 9",
        "[2022-05-27T11:37:57.377] _job_complete: JobId=12 done",
    ])  # fmt: skip
    assert (killed.first_error_line, killed.category) == (2, "other")


def test_a_kernel_range_check_on_the_jobs_data_is_the_job() -> None:
    """`Assertion t >= 0 && t < n_classes failed` (or an index past a table's end) printed by a CUDA kernel is a
    label/index the job feeds out of range: user_script, located at the first assertion, not at the asynchronous
    `device-side assert triggered` reported later."""
    lines = [
        "Epoch 1/5:   0%|          | 0/123 [00:00<?, ?img/s]",
        "../aten/src/ATen/native/cuda/Loss.cu:257: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: "
        "[4,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "    loss.item()",
        "RuntimeError: CUDA error: device-side assert triggered",
    ]
    d = diagnose_lines(lines)
    assert (d.first_error_line, d.category) == (2, "user_script")


def test_an_nccl_error_whose_class_is_on_the_next_lines_is_the_network() -> None:
    """`DistBackendError: NCCL error ..., internal error` continues with `ncclInternalError:` and the transport's
    `Last error: Net : Connection closed by remote peer`: the message's continuation decides (infrastructure)."""
    lines = [
        *(f"step {i} loss 0.5" for i in range(1, 6)),
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, internal error, NCCL version 2.14.3",
        "ncclInternalError: Internal check failed.",
        "Last error:",
        "Net : Connection closed by remote peer node7<43236>",
    ]
    d = diagnose_lines(lines)
    assert (d.first_error_line, d.category, d.infra_component) == (6, "infrastructure", "network")


def test_a_gpu_without_a_device_handle_is_lost_whatever_the_pci_id_spacing() -> None:
    """nvidia-smi's `Unable to determine the device handle for GPU0000:03:00.0: Unknown Error` (no space before the
    bus id) is a lost GPU."""
    lines = ["user@n3 ~ % nvidia-smi", "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error"]
    d = diagnose_lines(lines)
    assert (d.first_error_line, d.category, d.infra_component) == (2, "infrastructure", "gpu")


def test_a_name_one_library_imports_from_another_is_version_skew_but_the_jobs_own_import_is_the_job() -> None:
    """Raised inside transformers importing from torch (an IPython traceback): the libraries disagree
    (framework); the same ImportError raised by the job's own import line is the job's environment."""
    skew = [
        "ImportError                               Traceback (most recent call last)",
        "<ipython-input-2-279c49635b32> in <module>",
        "----> 1 import transformers",
        "",
        "/env/lib/python3.7/site-packages/transformers/trainer_pt_utils.py in <module>",
        "---> 40     from torch.optim.lr_scheduler import SAVE_STATE_WARNING",
        "",
        "ImportError: cannot import name 'SAVE_STATE_WARNING' from 'torch.optim.lr_scheduler' (/env/lib/python3.7/"
        "site-packages/torch/optim/lr_scheduler.py)",
    ]
    assert diagnose_lines(skew).category == "framework"
    own = [
        "Traceback (most recent call last):",
        '  File "/srv/job/train.py", line 3, in <module>',
        "    from transformers import TrainingArguments",
        "ImportError: cannot import name 'TrainingArguments' from 'transformers' (/env/site-packages/transformers/"
        "__init__.py)",
    ]
    assert diagnose_lines(own).category == "user_script"


def test_a_traceback_cut_before_its_exception_says_nothing_of_who_failed() -> None:
    """Watchdog timeouts followed by a stack the log cut before any exception line: where the code was is not
    what went wrong, so the job's own frames do not make it the job's fault (other)."""
    lines = [
        "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
        "OpType=BROADCAST, Timeout(ms)=1800000) ran for 1804371 milliseconds before timing out.",
        "Traceback (most recent call last):",
        '  File "/home/u/GCD/train/train.py", line 85, in main',
        "    trainer.train_loop(max_epochs)",
        '  File "/home/u/GCD/train/trainer.py", line 289, in train_loop',
        "    training_step_outputs = self.training_step(batch, batch_idx)",
    ]
    assert diagnose_lines(lines).category == "other"


def test_nccl_operations_that_failed_or_timed_out_start_the_failure() -> None:
    """`Some NCCL operations have failed or timed out` (plural) is the watchdog's own line: the failure starts there,
    not at the launcher's SIGTERM notices that follow an evaluation bar."""
    lines = [
        "[E ProcessGroupNCCL.cpp:341] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
        "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "",
        "  Class  Images  Labels  P  R  mAP@.5:  70%|7| 1210/1737 [31:06<13:38,  1.55s",
        "  Class  Images  Labels  P  R  mAP@.5:  70%|7| 1211/1737 [31:07<13:30,  1.54sWARNING:torch.distributed.elastic."
        "multiprocessing.api:Sending process 3584286 closing signal SIGTERM",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3584288 closing signal SIGTERM",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 3584287)",
    ]
    d = diagnose_lines(lines)
    assert (d.first_error_line, d.category) == (1, "other")


def test_a_data_loader_out_of_shared_memory_is_the_nodes() -> None:
    """DataLoader workers dying of a bus error from a full /dev/shm: the node's shared-memory limit (not ``other``),
    located at the worker's message, not at the traceback it triggers; without corroboration the job is only
    requeued."""
    lines = [
        *(f"Epoch 1 iter {i} loss 0.5" for i in range(1, 4)),
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "Traceback (most recent call last):",
        '  File "train.py", line 52, in <module>',
        "    for i, (images, labels) in enumerate(train_loader):",
        '  File "/usr/local/lib/python3.8/dist-packages/torch/utils/data/dataloader.py", line 1207, in _next_data',
        "    idx, data = self._get_data()",
        "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.",
    ]
    d = diagnose_lines(lines)
    assert (d.category, d.infra_component, d.first_error_line) == ("infrastructure", "node", 4)
    assert d.action == "requeue"


def test_colab_tracebacks_version_requirements_and_nccl_socket_setup() -> None:
    """A Colab traceback (frames as Markdown links, collapsed "4 frames") ending in a library's version requirement
    on another library is the framework's (version skew); NCCL failing to bind its bootstrap socket is the node's
    network, not the symptom of a peer going away."""
    colab = [
        "---------------------------------------------------------------------------",
        "ImportError                               Traceback (most recent call last)",
        "[<ipython-input-62-838a707a40f5>](https://localhost:8080/#) in <cell line: 1>()",
        "----> 1 training_args = TrainingArguments(",
        "      2         output_dir='finetuned_model',",
        "",
        "4 frames",
        "[/usr/local/lib/python3.10/dist-packages/transformers/training_args.py](https://localhost:8080/#) in "
        "_setup_devices(self)",
        '   1671             if not is_accelerate_available(min_version="0.20.1"):',
        "-> 1672                 raise ImportError(",
        "",
        "ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`: Please run "
        "`pip install accelerate -U`",
    ]
    tb = find_tracebacks(colab)[0]
    assert [f.func for f in tb.frames] == ["<cell line: 1>", "_setup_devices"] and tb.frames[-1].in_library
    d = diagnose_lines(colab)
    assert (d.category, d.first_error_line) == ("framework", 2)
    nccl = [
        "[2/20][4084/7614] Loss: 9.590029",
        "node1:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",
        "node1:140:140 [0] NCCL INFO bootstrap.cc:91 -> 2",
        "Traceback (most recent call last):",
        '  File "train.py", line 49, in average_gradients',
        "    dist.all_reduce(param.grad.data, op=dist.reduce_op.SUM, group=dist_group)",
    ]
    n = diagnose_lines(nccl)
    assert (n.category, n.infra_component, n.first_error_line) == ("infrastructure", "network", 2)


def test_a_traceback_pasted_without_indentation_or_function_names_is_still_one_traceback() -> None:
    """Frames whose source lines lost their indentation in a copy (and whose ``in <func>`` is empty) are read as
    one traceback that starts at its header, not as loose lines ending at the exception."""
    lines = [
        "Epoch Batch xy wh conf cls total nTargets time",
        "Traceback (most recent call last):",
        'File "train.py", line 221, in',
        "num_workers=opt.num_workers",
        'File "train.py", line 131, in train',
        "pred = model(imgs.to(device))",
        'File "/home/u/anaconda3/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 274, in handler',
        "_error_if_any_worker_fails()",
        "RuntimeError: DataLoader worker (pid 2064) is killed by signal: Killed.",
    ]
    (tb,) = find_tracebacks(lines)
    assert (tb.start, tb.end, len(tb.frames)) == (1, 8, 3)
    assert tb.exc_type == "RuntimeError" and tb.frames[0].func == "?"
    assert diagnose_lines(lines).first_error_line == 2


def test_a_traceback_cut_after_its_raise_statement_is_named_by_it() -> None:
    """A log cut before the exception line still shows ``raise ValueError(...)`` under the raising frame: the
    standard library raising at a library's call is the library's (version) fault, the job's own raise is the
    job's."""
    lines = [
        "Traceback (most recent call last):",
        '  File "run_clm.py", line 422, in main',
        "    trainer = Trainer(",
        '  File "/root/miniconda3/lib/python3.8/site-packages/transformers/trainer.py", line 295, in __init__',
        "    logging.set_verbosity(log_level)",
        '  File "/root/miniconda3/lib/python3.8/logging/__init__.py", line 194, in _checkLevel',
        '    raise ValueError("Unknown level: %r" % level)',
    ]
    (tb,) = find_tracebacks(lines)
    assert tb.exc_type == "ValueError" and tb.end == 6
    assert diagnose_lines(lines).category == "framework"
    own = [*lines[:2], '    raise ValueError("no data under --data_dir")']
    assert diagnose_lines(own).category == "user_script"


def test_a_cpp_exception_glued_to_the_progress_bar_starts_the_failure() -> None:
    """``terminate called after throwing an instance of 'c10::Error'`` printed right after a progress bar (no
    newline) makes that line the root cause, not the C++ stack that follows."""
    lines = [
        "Training 10% step: 5600 loss: 0.029 :: Speed: 0.18it/s",
        "Training 19% step: 5700 loss: 0.028 :: Speed: 0.18it/s :: Elapsed: 0:21:08terminate called after throwing "
        "an instance of 'c10::Error'",
        "  what():  CUDA error: unknown error",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        "",
        "Exception raised from c10_cuda_check_implementation at /opt/conda/c10/cuda/CUDAException.cpp:44 (most recent "
        "call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x75b3 in /x/torch/lib/libc10.so)",
    ]
    assert diagnose_lines(lines).first_error_line == 2


def test_a_path_the_job_may_not_access_is_the_jobs_and_a_read_only_file_system_the_storages() -> None:
    """TensorFlow's `Permission denied: /models` (the script saves under a root directory its user cannot write) is
    the job's path, with or without a Python exception after it; `Read-only file system` stays a storage fault."""
    denied = diagnose_lines([
        "2019-04-04 13:09:09.579104: W tensorflow/core/framework/op_kernel.cc:1273] OP_REQUIRES failed at "
        "save_restore_v2_ops.cc:109 : Permission denied: /models; Permission denied",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python2.7/dist-packages/tensorflow/python/training/saver.py", line 1441, in save',
        "    {self.saver_def.filename_tensor_name: checkpoint_file})",
    ])  # fmt: skip
    assert (denied.first_error_line, denied.category, denied.infra_component) == (1, "user_script", None)
    readonly = diagnose_lines(["OSError: [Errno 30] Read-only file system: '/models/ckpt'"])
    assert (readonly.category, readonly.infra_component) == ("infrastructure", "storage")


def test_the_oom_killer_named_in_the_log_is_the_jobs_memory_request_and_outranks_the_bare_kill() -> None:
    """A Slurm cgroup OOM kill (`Detected 1 oom-kill event(s)`, `task 0: Out Of Memory`) is the job asking for more
    host memory than it was given (user_script, like a CUDA OOM), located at the line that says so rather than at
    the bare `Killed` printed before it; a bare `Killed` alone stays other."""
    slurm = diagnose_lines([
        "Epoch: [0][511/1736]\t Loss 0.5117 MAE 0.6075 RMSE 0.7153",
        "/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py --epochs 400",
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your processes may have "
        "been killed by the cgroup out-of-memory handler.",
    ])  # fmt: skip
    assert (slurm.first_error_line, slurm.category, slurm.infra_component) == (3, "user_script", None)
    srun = diagnose_lines(["srun: error: gpu20-15: task 0: Out Of Memory"])
    assert srun.category == "user_script" and "host memory" in srun.explanation
    bare = diagnose_lines(["Epoch: [0][511/1736]\t Loss 0.5117", "Killed"])
    assert (bare.first_error_line, bare.category) == (2, "other")


def test_a_bar_at_step_zero_after_a_traceback_does_not_hide_it() -> None:
    """Another rank draws its `0%| | 0/168` bar after this rank's ZeRO-3 assertion: a bar before any step ran is no
    training progress, so the traceback before it is the failure, not the launcher's summary after it."""
    got = diagnose_lines([
        '[rank0]:   File "/env/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 1997, in no_sync',
        "[rank0]:     assert not self.zero_optimization_partition_gradients(), \\",
        "[rank0]: AssertionError: no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 3",
        "  0%|                                                  | 0/168 [00:00<?, ?it/s]",
        "W1126 23:28:07.821000 402381 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending "
        "process 402434 closing signal SIGTERM",
        "E1126 23:28:11.641000 402381 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed "
        "(exitcode: 1) local_rank: 1 (pid: 402435) of binary: /env/bin/python",
    ])  # fmt: skip
    assert got.first_error_line == 1 and got.category != "other"
    started = diagnose_lines([
        "  1%|▌                                                 | 2/168 [00:04<05:27,  2.00s/it]",
        "  2%|█                                                 | 3/168 [00:06<05:27,  2.00s/it]",
        "E1126 23:28:11.641000 402381 api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 402435) of binary: python",
    ])  # fmt: skip
    assert started.first_error_line == 3


def test_device_memory_exhausted_on_a_tpu_is_the_jobs_and_a_busy_gpu_the_nodes() -> None:
    """XLA's `RESOURCE_EXHAUSTED: Attempting to reserve 6.48G ...` is a device out of memory, the job's (like a CUDA
    OOM); `all CUDA-capable devices are busy or unavailable` before a traceback cut short is the node's GPUs, found at
    the line that says so."""
    tpu = diagnose_lines([
        "2022-04-04 00:27:49.642380: E tensorflow/compiler/xla/xla_client/xla_util.cc:88]   (1) RESOURCE_EXHAUSTED: "
        "Attempting to reserve 6.48G at the bottom of memory. That was not possible. There are 6.78G free.",
        "2022-04-04 00:27:49.642399: E tensorflow/compiler/xla/xla_client/xla_util.cc:88] 0 successful operations.",
    ])  # fmt: skip
    assert (tpu.first_error_line, tpu.category) == (1, "user_script")
    busy = diagnose_lines([
        "THCudaCheck FAIL file=/opt/conda/work/torch/lib/THC/THCStream.cpp line=40 error=46 : all CUDA-capable "
        "devices are busy or unavailable",
        "Traceback (most recent call last):",
        '  File "train.py", line 289, in train',
        "    output = model(input_var)",
        '  File "/env/lib/python3.6/site-packages/torch/nn/parallel/data_parallel.py", line 69, in forward',
        "    inputs, kwargs = self.scatter(inputs, kwargs, self.device_ids)",
    ])  # fmt: skip
    assert (busy.first_error_line, busy.category, busy.infra_component) == (1, "infrastructure", "gpu")


def test_an_exception_printed_before_the_chain_marker_starts_the_failure() -> None:
    """JAX prints only `jax.errors.SimplifiedTraceback: ...` (glued to a bar), then `The above exception was the
    direct cause of the following exception:` and the traceback with the message: the failure starts at the first
    exception of the chain, not at the traceback after the marker."""
    got = diagnose_lines([
        "Model Contain  1.100048384  Billion Parameters",
        "  0%|          | 0/12000 [00:00<?, ?it/s]jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its "
        "internal frames from the traceback of the following exception.",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/home/u/EasyDeL/1.py", line 101, in <module>',
        '    output = trainer.train(flax.core.FrozenDict({"params": params}))',
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 21.90G "
        "of 7.48G hbm.",
    ])  # fmt: skip
    assert (got.first_error_line, got.category) == (2, "user_script")


def test_ipython8_cell_frames_keep_a_notebook_traceback_whole() -> None:
    """IPython 8 names the notebook cell (`/p/02-train.ipynb Cell 36 line 1`, `Cell In[9], line 36`) where older
    versions printed `<ipython-input-…>`: the traceback starts at its header, the cell is the job's own code."""
    got = diagnose_lines([
        "RuntimeError                              Traceback (most recent call last)",
        "/Users/u/EmbedSeg/examples/2d/dsb-2018/02-train.ipynb Cell 36 line 1",
        "----> 1 begin_training(train_dataset_dict, val_dataset_dict, model_dict, loss_dict, configs)",
        "",
        "File .../EmbedSeg/criterions/my_loss.py:41, in SpatialEmbLoss.forward(self, prediction, instances)",
        "     39 for b in range(0, batch_size):",
        "---> 41     spatial_emb = torch.tanh(prediction[b, 0:2]) + xym_s  # 2 x h x w #TODO",
        "",
        "RuntimeError: The size of tensor a (96) must match the size of tensor b (0) at non-singleton dimension 2",
    ])  # fmt: skip
    assert (got.first_error_line, got.category) == (1, "user_script")
    (tb,) = find_tracebacks(["KeyError   Traceback (most recent call last)", "Cell In[9], line 36", "KeyError: 'x'"])
    assert tb.frames[0].func == "Cell In[9]" and not tb.frames[0].in_library


def test_a_host_side_cpp_assertion_inside_the_library_is_the_framework_a_kernels_is_not() -> None:
    """`torch/csrc/autograd/input_buffer.cpp:14: add: Assertion ... failed` raised from autograd's own C++ is the
    library's broken invariant (framework); a CUDA kernel's assert in a `.cu` file checks the data it is given."""
    host = classify_error(
        "RuntimeError", "torch/csrc/autograd/input_buffer.cpp:14: add: Assertion `pos >= 0 && pos < buffer.size()` "
        "failed.", (JOB, LIB_TORCH),
    )  # fmt: skip
    assert host.category == "framework"
    kernel = classify_error(
        "RuntimeError", "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu:112: sampleMultinomialOnce: block: "
        "[0,0,0], thread: [0,0,0] Assertion `sum > accZero` failed.", (JOB, LIB_TORCH),
    )  # fmt: skip
    assert kernel.category != "framework"


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        ("pytorch_lightning.utilities.exceptions.MisconfigurationException",
         "When overriding `LightningModule` optimizer_step, `accumulate_grad_batches` in `Trainer` should be 1."),
        ("wandb.errors.UsageError", "api_key not configured (no-tty). call wandb.login(key=[your_api_key])"),
        ("omegaconf.errors.ConfigKeyError", "Key 'lr' is not in struct"),
    ],
)  # fmt: skip
def test_an_exception_named_for_a_wrong_configuration_is_the_callers(exc: str, message: str) -> None:
    """A library's exception class named for misconfiguration or misuse says the caller's settings are wrong, like a
    ValueError: the job's when the job called the library."""
    lib = Frame("/env/lib/python3.10/site-packages/pytorch_lightning/trainer/configuration_validator.py", 83, "verify")
    assert classify_error(exc, message, (JOB, lib)).category == "user_script"
    assert classify_error(exc, message).category == "user_script"


def test_an_exception_behind_a_glog_header_and_named_for_a_compiler_failure_is_the_framework() -> None:
    """torch.compile logs `W1024 01:17:10.936000 140404233111360 torch/_dynamo/convert_frame.py:1009]
    torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:` then the wrapped `NameError`: the logger's
    header is not the message, the failure starts at the wrapper, and a class named for the library's compiler
    failing is the framework's (not the job's NameError)."""
    prefix = "[01:17:10.938]: W1024 01:17:10.936000 140404233111360 torch/_dynamo/convert_frame.py:1009] "
    got = diagnose_lines([
        prefix + "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        prefix + "NameError: name 's4' is not defined",
        prefix,
    ])  # fmt: skip
    assert (got.first_error_line, got.category) == (1, "framework")
