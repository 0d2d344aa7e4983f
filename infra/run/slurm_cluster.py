"""A real Slurm cluster of several nodes on this machine, for tests, `schedmate demo --slurm` and trying SchedMate.

Debian's ``slurm-wlm`` (22.05) and ``munge``: one ``slurmctld`` and one ``slurmd -N <node>`` per node on
their own ports, each node with ``gpus_per_node`` fake GPUs (character devices like /dev/null, so Slurm
sets ``CUDA_VISIBLE_DEVICES`` as on a GPU node), ``jobcomp/filetxt`` recording finished jobs, state and
logs under ``root``. Commands reach it with ``SLURM_CONF=<root>/slurm.conf`` (:attr:`SlurmCluster.env`).
``start()`` is idempotent (a cluster already running at ``root`` is reused); ``stop()`` cancels its jobs
and stops its daemons (an orphaned slurmstepd would otherwise retry for ever); ``teardown()`` also
removes ``root``. Needs root (``SlurmUser=root``); installs the packages with apt when asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

from schedmate.infra.exceptions import InfraError
from schedmate.infra.lifecycle import AsyncLifecycle
from schedmate.infra.logging import get_logger
from schedmate.infra.processes import free_port

__all__ = ["SlurmCluster", "SlurmError", "ensure_slurm"]

log = get_logger(__name__)
_INSTALL = "apt-get install -y --no-install-recommends slurm-wlm munge"


class SlurmError(InfraError):
    """Slurm is missing, cannot start, or a Slurm command failed."""


def ensure_slurm(install: bool = False) -> None:
    """Check that Slurm and munge are installed; with ``install`` (root, apt), install them."""
    if shutil.which("slurmctld") and shutil.which("munged"):
        return
    if install and os.geteuid() == 0 and shutil.which("apt-get"):
        log.info("installing slurm-wlm and munge with apt")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        done = subprocess.run(_INSTALL.split(), env=env, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode == 0 and shutil.which("slurmctld"):
            return
        raise SlurmError(f"`{_INSTALL}` failed: {done.stderr.strip()[-400:]}")
    raise SlurmError(f"Slurm is not installed: run `sudo {_INSTALL}` (Debian/Ubuntu), or pass --install as root")


def _alive(pid_file: Path) -> bool:
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


class SlurmCluster(AsyncLifecycle):
    """``async with SlurmCluster(root, nodes=3) as c: subprocess.run(["sbatch", ...], env=c.env)``."""

    def __init__(
        self,
        root: Path,
        nodes: int = 3,
        gpus_per_node: int = 4,
        cpus_per_node: int | None = None,
        min_job_age_s: int = 300,
    ) -> None:
        if nodes < 1 or gpus_per_node < 0:
            raise SlurmError("a Slurm cluster needs at least one node")
        self.root = root.absolute()
        self.nodes = [f"node{i}" for i in range(1, nodes + 1)]
        self.gpus_per_node = gpus_per_node
        self.cpus_per_node = cpus_per_node or os.cpu_count() or 1  # slurmd drains a node claiming more than it has
        self.min_job_age_s = min_job_age_s  # how long squeue still shows a finished job
        self.conf = self.root / "slurm.conf"
        # slurmstepd fails to write a job's script under a long spool path ("File exists"): keep it short
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:10]
        self.spool = Path(tempfile.gettempdir()) / f"schedmate-slurmd-{digest}"
        self.jobcomp = self.root / "jobcomp.log"
        self._started_munged = False

    @property
    def env(self) -> dict[str, str]:
        """The environment Slurm commands need to reach this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def command(self, *args: str, timeout: float = 15.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command against this cluster (a controller that is down answers after a timeout)."""
        try:
            done = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise SlurmError(f"`{' '.join(args)}` did not answer within {timeout:.0f} s") from exc
        if check and done.returncode != 0:
            raise SlurmError(f"`{' '.join(args)}` failed: {(done.stderr or done.stdout).strip()[-400:]}")
        return done

    # --- configuration ------------------------------------------------------------------------------
    def _write_config(self) -> dict[str, Any]:
        host = socket.gethostname()
        for sub in ("state", "log", "run", "dev"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.spool.mkdir(parents=True, exist_ok=True)
        devices = []
        for i in range(self.gpus_per_node):
            dev = self.root / "dev" / f"gpu{i}"
            if not dev.exists():
                os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null
            devices.append(str(dev))
        ports = {"ctld": free_port(), **{n: free_port() for n in self.nodes}}
        r = self.root
        lines = [
            "ClusterName=schedmate", f"SlurmctldHost={host}(127.0.0.1)", f"SlurmctldPort={ports['ctld']}",
            "SlurmUser=root", "AuthType=auth/munge", "AuthInfo=cred_expire=10", "CommunicationParameters=NoInAddrAny",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "SchedulerType=sched/backfill", "PriorityType=priority/basic",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={self.jobcomp}", "GresTypes=gpu", f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={self.spool}/%n", f"SlurmctldPidFile={r}/run/slurmctld.pid",
            f"SlurmdPidFile={r}/run/slurmd-%n.pid", f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd-%n.log", "ReturnToService=2", f"MinJobAge={self.min_job_age_s}",
            "JobRequeue=1", "KillWait=5",
        ]  # fmt: skip
        gres = f" Gres=gpu:{self.gpus_per_node}" if self.gpus_per_node else ""
        lines += [f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={ports[n]} CPUs={self.cpus_per_node}"
                  f"{gres} State=UNKNOWN" for n in self.nodes]  # fmt: skip
        lines.append("PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        gres_conf = ["AutoDetect=off"]
        if devices:
            gres_conf.append(f"NodeName={','.join(self.nodes)} Name=gpu File={r}/dev/gpu[0-{len(devices) - 1}]")
        (self.root / "gres.conf").write_text("\n".join(gres_conf) + "\n")
        info = {"nodes": self.nodes, "ports": ports, "conf": str(self.conf), "gpus_per_node": self.gpus_per_node}
        (self.root / "cluster.json").write_text(json.dumps(info, indent=2))
        return info

    # --- lifecycle --------------------------------------------------------------------------------
    def running(self) -> bool:
        """Whether this root's controller and every slurmd are alive."""
        run = self.root / "run"
        return _alive(run / "slurmctld.pid") and all(_alive(run / f"slurmd-{n}.pid") for n in self.nodes)

    def _munge(self) -> None:
        if subprocess.run(["munge", "-n"], capture_output=True, timeout=10, check=False).returncode == 0:
            return
        sock_dir = Path("/run/munge")
        sock_dir.mkdir(parents=True, exist_ok=True)
        shutil.chown(sock_dir, "munge", "munge")
        started = subprocess.run(["runuser", "-u", "munge", "--", "munged"], capture_output=True, text=True,
                                 timeout=15, check=False)  # fmt: skip
        if started.returncode != 0:
            raise SlurmError(f"munged did not start: {started.stderr.strip()[-300:]} (is /etc/munge/munge.key there?)")
        self._started_munged = True

    def _wait(self, what: str, ok: Any, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(SlurmError):
                if ok():
                    return
            time.sleep(0.2)
        logs = sorted((self.root / "log").glob("*.log"))
        tail = "; ".join(f"{p.name}: {p.read_text(errors='replace')[-300:]}" for p in logs[:2])
        raise SlurmError(f"the Slurm cluster at {self.root}: {what} within {timeout_s:.0f} s ({tail})")

    def start_sync(self) -> Self:
        """Start (or reuse) the cluster; returns when every node is idle."""
        ensure_slurm()
        if os.geteuid() != 0:
            raise SlurmError("the local Slurm cluster runs its daemons as root: run this as root (or in a container)")
        if self.running():
            return self
        self.stop_sync()
        self._write_config()
        self._munge()
        self.command("slurmctld", "-c")  # a fresh controller state: no leftover jobs of an earlier run
        self._wait("the controller did not answer", lambda: "UP" in self.command("scontrol", "ping",
                                                                             timeout=5).stdout, 20)  # fmt: skip
        for node in self.nodes:
            self.command("slurmd", "-N", node)
        self._wait("not every node became idle", self._all_idle, 30)
        log.info("slurm cluster started", root=str(self.root), nodes=len(self.nodes))
        return self

    def _all_idle(self) -> bool:
        out = self.command("sinfo", "-h", "-N", "-o", "%N %t", timeout=5).stdout.split("\n")
        states = dict(line.split() for line in out if line.strip())
        return all(states.get(n, "").rstrip("*") in ("idle", "mix", "alloc") for n in self.nodes)

    def stop_sync(self) -> None:
        """Cancel this cluster's jobs and stop its daemons (a no-op when nothing runs)."""
        run = self.root / "run"
        if _alive(run / "slurmctld.pid"):
            with contextlib.suppress(SlurmError):
                ids = self.command("squeue", "-h", "-o", "%i", timeout=5).stdout.split()
                if ids:
                    self.command("scancel", *ids, timeout=10, check=False)
                    deadline = time.monotonic() + 15
                    while (
                        time.monotonic() < deadline
                        and self.command("squeue", "-h", "-t", "R,CG", "-o", "%i", timeout=5).stdout.strip()
                    ):
                        time.sleep(0.3)
        for pid_file in [*(run / f"slurmd-{n}.pid" for n in self.nodes), run / "slurmctld.pid"]:
            self._kill(pid_file)

    @staticmethod
    def _kill(pid_file: Path) -> None:
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        pid_file.unlink(missing_ok=True)

    def teardown(self) -> None:
        """Stop the cluster and remove its folder."""
        self.stop_sync()
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.spool, ignore_errors=True)

    async def start(self) -> Self:
        """Start (or reuse) the cluster."""
        return await asyncio.to_thread(self.start_sync)

    async def stop(self) -> None:
        """Cancel its jobs and stop its daemons."""
        await asyncio.to_thread(self.stop_sync)

    def restart_controller(self) -> None:
        """Stop and start slurmctld only (its state survives): what a controller outage looks like."""
        self._kill(self.root / "run" / "slurmctld.pid")
        self.command("slurmctld")
        self._wait("the controller did not come back", lambda: "UP" in self.command("scontrol", "ping",
                                                                                timeout=5).stdout, 20)  # fmt: skip
