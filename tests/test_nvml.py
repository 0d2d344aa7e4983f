"""The NVML sampler: real GPUs where present, one clear message where not."""

from __future__ import annotations

import pytest

from schedmate.connectors.nvml import NvmlSampler, NvmlUnavailableError


def _has_gpu() -> bool:
    try:
        NvmlSampler().start().stop()
    except NvmlUnavailableError:
        return False
    return True


HAS_GPU = _has_gpu()


@pytest.mark.skipif(HAS_GPU, reason="this host has an NVIDIA GPU")
def test_no_gpu_says_so_and_what_to_do() -> None:
    """Without a driver/GPU the sampler raises one error that explains the situation."""
    with pytest.raises(NvmlUnavailableError, match="no NVIDIA driver/GPU"):
        NvmlSampler().start()


@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_samples_every_gpu() -> None:
    """On a GPU host every device yields a sample with utilisation, memory and temperature."""
    with NvmlSampler(node="n1") as s:
        samples = s.sample()
    assert samples and all(x.node == "n1" and x.mem_total_mb and x.temp_c is not None for x in samples)
