"""Static metadata extraction: read (never run) a job's working directory and command.

``workspace`` confines reads; ``launch`` parses the command; ``config_sources``, ``hydra`` and ``structured``
(Hydra's dataclass configs) read settings that ``collect`` merges in override order; ``identity`` and
``workload`` say what is trained on what; ``param_count`` counts parameters (``evaluator``, ``values``,
``torch_layers``); ``metadata`` maps it all onto the fields; ``syntax`` holds small readings of Python syntax they
share."""

__all__ = [
    "collect",
    "config_sources",
    "evaluator",
    "hydra",
    "identity",
    "launch",
    "metadata",
    "param_count",
    "structured",
    "syntax",
    "torch_layers",
    "values",
    "workload",
    "workspace",
]
