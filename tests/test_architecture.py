"""The layout's rules, checked on the import graph of the package (every import, lazy ones included)."""

from __future__ import annotations

import ast
import importlib
import inspect
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedmate.schemas import Event
from tests.conftest import REPO

PACKAGES = ("schemas", "connectors", "streams", "agents", "infra")
FLOOR = {
    f"schedmate.infra.{m}"
    for m in ("settings", "logging", "exceptions", "processes", "lifecycle", "kafka", "redact", "signing")
}
FEATURES = ("tracker", "failures", "advisor")
SHARED_KERNELS = ("logtext", "ml")
# Events that carry results: only streams/ builds them.
RESULT_EVENTS = ("JobMetrics", "JobFailure", "SchedulerAction", "JobMetadata", "JobEstimate", "DeadLetter", "JobState")


def _modules() -> Iterator[tuple[str, Path]]:
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).with_suffix("")
            if "jobs" in rel.parts:  # the demo's training scripts are user code, not the package
                continue
            parts = [p for p in rel.parts if p != "__init__"]
            yield "schedmate." + ".".join(parts), path


MODULES = dict(_modules())
TREES = {name: ast.parse(path.read_text()) for name, path in MODULES.items()}


def _imports(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


IMPORTS = {name: _imports(tree) for name, tree in TREES.items()}


def _in(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _violations(importers: tuple[str, ...], forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        f"{m} imports {i}"
        for m, imps in IMPORTS.items()
        if _in(m, *importers)
        for i in imps
        if _in(i, *forbidden) and not _in(i, *allowed) and i in MODULES
    )


def test_the_graph_sees_every_module() -> None:
    """The test reads the real package (a rule checked on nothing would pass vacuously)."""
    assert len(MODULES) > 60
    assert "schedmate.agents.failures.tail" in MODULES and "schedmate.infra.cli.stack" in MODULES
    assert "schedmate.agents.failures.diagnosis" in IMPORTS["schedmate.streams.diagnose"]


def test_lower_folders_use_only_the_infra_floor() -> None:
    """connectors, streams, agents and schemas import from infra only its floor (settings, logging, exceptions,
    processes, lifecycle, kafka)."""
    roof = [m for m in MODULES if _in(m, "schedmate.infra") and m not in FLOOR and m != "schedmate.infra"]
    assert _violations(("schedmate.connectors", "schedmate.streams", "schedmate.agents", "schedmate.schemas"),
                       tuple(roof)) == []  # fmt: skip


def test_the_floor_imports_nothing_above_it() -> None:
    """infra's floor imports only itself and the contract (schemas)."""
    above = ("schedmate.connectors", "schedmate.streams", "schedmate.agents", "schedmate.infra.run",
             "schedmate.infra.cli", "schedmate.infra.measure", "schedmate.infra.demo")  # fmt: skip
    assert _violations(tuple(FLOOR), above) == []


def test_schemas_are_the_bottom() -> None:
    """The contract imports nothing else of SchedMate, and no Kafka client."""
    bad = _violations(("schedmate.schemas",), ("schedmate",), ("schedmate.schemas",))
    kafka = [m for m, imps in IMPORTS.items() if _in(m, "schedmate.schemas") for i in imps
             if _in(i, "aiokafka", "faust", "mode")]  # fmt: skip
    assert bad == [] and kafka == []


def _importers_of(prefix: str) -> set[str]:
    """Modules outside ``prefix`` that import something inside it."""
    return {m for m, imps in IMPORTS.items() if not _in(m, prefix) and any(_in(i, prefix) for i in imps)}


def _under(modules: set[str], *prefixes: str) -> list[str]:
    return sorted(m for m in modules if not _in(m, *prefixes))


def test_only_the_cli_reaches_the_roof() -> None:
    """measure/ and demo/ are reached only from cli/; run/ only from cli/, measure/ and demo/."""
    cli, measure, demo = "schedmate.infra.cli", "schedmate.infra.measure", "schedmate.infra.demo"
    assert _importers_of(measure) and _importers_of(demo)  # the rule is not vacuous
    assert _under(_importers_of(measure), cli) == []
    assert _under(_importers_of(demo), cli) == []
    assert _under(_importers_of("schedmate.infra.run"), cli, measure, demo) == []


@pytest.mark.parametrize("feature", FEATURES)
def test_features_share_only_the_kernels(feature: str) -> None:
    """Tracker, failures and advisor never import each other; the kernels import no feature."""
    others = tuple(f"schedmate.agents.{f}" for f in FEATURES if f != feature)
    assert _violations((f"schedmate.agents.{feature}",), others) == []
    kernels = tuple(f"schedmate.agents.{k}" for k in SHARED_KERNELS)
    assert _violations(kernels, (f"schedmate.agents.{feature}",)) == []


def test_agents_have_no_kafka() -> None:
    """agents/ never imports aiokafka, faust or mode."""
    found = [f"{m} imports {i}" for m, imps in IMPORTS.items() if _in(m, "schedmate.agents") for i in imps
             if _in(i, "aiokafka", "faust", "mode")]  # fmt: skip
    assert found == []


def _result_event_callers() -> dict[str, set[str]]:
    """For each result event class, the modules that construct or validate one."""
    callers: dict[str, set[str]] = {n: set() for n in RESULT_EVENTS}
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else None
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.attr.startswith("model_"):
                name = f.value.id
            if name in callers:
                callers[name].add(module)
    return callers


def test_streams_build_every_result_event() -> None:
    """Metrics, failures, actions, metadata, estimates, dead letters and job states are built only in streams/
    (the contract's own classmethods aside)."""
    callers = _result_event_callers()
    assert callers["JobFailure"] and callers["JobEstimate"], "the check found no construction at all"
    outside = {n: sorted(m for m in ms if not _in(m, "schedmate.streams", "schedmate.schemas"))
               for n, ms in callers.items()}  # fmt: skip
    assert all(not v for v in outside.values()), outside


def test_agents_import_no_result_event() -> None:
    """Domain code imports contract vocabulary (field types, input events), never an output event."""
    found = []
    for module, tree in TREES.items():
        if not _in(module, "schedmate.agents"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("schedmate.schemas"):
                for a in node.names:
                    obj = getattr(importlib.import_module(node.module), a.name)
                    if inspect.isclass(obj) and issubclass(obj, Event) and a.name != "JobSubmitted":
                        found.append(f"{module} imports {a.name}")
    assert found == []


def test_every_package_folder_is_packaged() -> None:
    """Every folder with an __init__.py is listed in pyproject (else a non-editable install loses it); the
    simulator's workload catalogue is data (users' projects, shipped as package data), not our packages."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(cfg["tool"]["setuptools"]["packages"])
    catalogue = REPO / "connectors" / "sim" / "catalogue"
    found = {"schedmate." + ".".join(p.parent.relative_to(REPO).parts)
             for pkg in PACKAGES for p in (REPO / pkg).rglob("__init__.py") if catalogue not in p.parents}  # fmt: skip
    assert found == listed


def test_public_api_of_agents_resolves() -> None:
    """Every name agents/ exports resolves to the object of the module it names."""
    from schedmate import agents  # noqa: PLC0415

    for name in agents.__all__:
        assert getattr(agents, name).__name__ == name
    with pytest.raises(AttributeError):
        _ = agents.not_a_name
