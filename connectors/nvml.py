"""NVML sampler: per-GPU utilisation, memory, power, temperature, ECC counters and Xid events.

On a host without an NVIDIA driver or GPU it says so once and stops cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass, field
from typing import Any

from schedmate.connectors.exceptions import ConnectorError
from schedmate.connectors.publisher import Publisher
from schedmate.infra.logging import get_logger
from schedmate.schemas import gpu_samples
from schedmate.schemas.gpu_samples import GpuSample

__all__ = ["NvmlSampler", "NvmlUnavailableError"]

log = get_logger(__name__)


class NvmlUnavailableError(ConnectorError):
    """No NVIDIA driver or GPU on this host."""


def _try(fn: Any, *args: Any) -> Any:
    import pynvml  # noqa: PLC0415

    try:
        return fn(*args)
    except pynvml.NVMLError:
        return None


@dataclass
class NvmlSampler:
    """Reads every GPU of this host; ``async with`` or start()/stop()."""

    node: str = field(default_factory=socket.gethostname)
    job_id: str | None = None
    _handles: list[Any] = field(default_factory=list)
    _events: Any = None
    _nvml: Any = None

    def start(self) -> NvmlSampler:
        """Initialise NVML, or raise :class:`NvmlUnavailableError` with what to do."""
        try:
            import pynvml  # noqa: PLC0415
        except ModuleNotFoundError as exc:
            raise NvmlUnavailableError("GPU sampling needs nvidia-ml-py: pip install nvidia-ml-py") from exc
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise NvmlUnavailableError(
                f"no NVIDIA driver/GPU on this host (NVML: {exc}); GPU sampling is off here — run the sampler "
                "on GPU nodes"
            ) from exc
        self._nvml = pynvml
        count = pynvml.nvmlDeviceGetCount()
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        with contextlib.suppress(pynvml.NVMLError):
            self._events = pynvml.nvmlEventSetCreate()
            for h in self._handles:
                with contextlib.suppress(pynvml.NVMLError):
                    pynvml.nvmlDeviceRegisterEvents(h, pynvml.nvmlEventTypeXidCriticalError, self._events)
        if count == 0:
            self.stop()
            raise NvmlUnavailableError("NVML found no GPU on this host; GPU sampling is off here")
        return self

    def stop(self) -> None:
        """Release NVML."""
        if self._nvml is not None:
            with contextlib.suppress(Exception):
                if self._events is not None:
                    self._nvml.nvmlEventSetFree(self._events)
                self._nvml.nvmlShutdown()
            self._nvml = None

    def _xids(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        if self._events is None:
            return out
        nv = self._nvml
        for _ in range(64):
            try:
                data = nv.nvmlEventSetWait_v2(self._events, 0)
            except nv.NVMLError:
                break
            if data.eventType == nv.nvmlEventTypeXidCriticalError:
                idx = _try(nv.nvmlDeviceGetIndex, data.device)
                out.setdefault(int(idx or 0), []).append(int(data.eventData))
        return out

    def sample(self) -> list[GpuSample]:
        """One reading of every GPU (blocking; call it in a thread)."""
        nv = self._nvml
        if nv is None:
            raise NvmlUnavailableError("sampler is not started")
        xids = self._xids()
        out = []
        for i, h in enumerate(self._handles):
            util = _try(nv.nvmlDeviceGetUtilizationRates, h)
            mem = _try(nv.nvmlDeviceGetMemoryInfo, h)
            power = _try(nv.nvmlDeviceGetPowerUsage, h)
            temp = _try(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU)
            ecc_c = _try(nv.nvmlDeviceGetTotalEccErrors, h, nv.NVML_MEMORY_ERROR_TYPE_CORRECTED, nv.NVML_VOLATILE_ECC)
            ecc_u = _try(nv.nvmlDeviceGetTotalEccErrors, h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC)
            name = _try(nv.nvmlDeviceGetName, h)
            out.append(
                GpuSample(
                    node=self.node,
                    gpu_index=i,
                    uuid=str(_try(nv.nvmlDeviceGetUUID, h) or ""),
                    name=name.decode() if isinstance(name, bytes) else str(name or ""),
                    job_id=self.job_id,
                    util_pct=None if util is None else float(util.gpu),
                    mem_util_pct=None if util is None else float(util.memory),
                    mem_used_mb=None if mem is None else mem.used / 2**20,
                    mem_total_mb=None if mem is None else mem.total / 2**20,
                    power_w=None if power is None else power / 1000.0,
                    temp_c=None if temp is None else float(temp),
                    ecc_corrected=None if ecc_c is None else int(ecc_c),
                    ecc_uncorrected=None if ecc_u is None else int(ecc_u),
                    xid_events=xids.get(i, []),
                )
            )
        return out

    async def run(self, publisher: Publisher, interval_s: float = 5.0, count: int | None = None) -> int:
        """Publish samples every ``interval_s`` (``count`` rounds, or until cancelled)."""
        rounds = 0
        while count is None or rounds < count:
            for s in await asyncio.to_thread(self.sample):
                await publisher.publish(gpu_samples.TOPIC, s, wait=False)
            await publisher.flush()
            rounds += 1
            if count is None or rounds < count:
                await asyncio.sleep(interval_s)
        return rounds

    def __enter__(self) -> NvmlSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
