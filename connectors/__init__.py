"""The edges: sources that publish (runner, log push and tailer over one line-chunk stream, NVML sampler) and
the subscriber client sinks and scheduler adapters are written on."""

__all__ = ["chunker", "nvml", "publisher", "push", "runner", "sim", "subscriber", "tailer"]
