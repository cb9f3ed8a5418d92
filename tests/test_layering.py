"""The package's layering, read from its imports.

Every module of ``mrsteve`` is parsed with :mod:`ast`; every ``import`` counts, at module level,
under ``if TYPE_CHECKING:`` and inside functions alike. The rules (lowest layer first):

    memory, world  <  env  <  perception, control  <  agent  <  tasks  <  minecraft
    <  eval, bench, calibration  <  train  <  cli

* a module never imports a higher layer, nor a sibling package of its own layer (so perception and
  control do not import each other, nor memory and world);
* ``tasks`` imports no ``agent`` or ``control``; ``perception`` of the world only
  ``world.content``; the agent's parts (``perception``, ``control``, ``agent``) no ``env`` and of
  the world only its camera, content and crafting recipes: what the agent sees comes through the
  observation;
* the root leaf modules (``naming``, ``registry``, ``seeding``, ``spaces``, ``protocols``,
  ``fileio``, ``digests``, ``visibility``, ``jitcache``, ``nn``, ``workers``) may be imported by
  anyone and import no other module of the package but leaves;
* no import cycles between modules.

Known violations that other branches of the redesign remove are listed in
:data:`KNOWN_VIOLATIONS` and :data:`KNOWN_CYCLES`; the test fails on any violation not listed there
and on any listed one that no longer occurs, so both lists shrink to empty.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = "mrsteve"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

LAYERS: dict[str, int] = {
    "memory": 0,
    "world": 0,
    "env": 1,
    "perception": 2,
    "control": 2,
    "agent": 3,
    "tasks": 4,
    "minecraft": 4.5,  # Minecraft's parts and simulator: above the tasks, under the experiments
    "eval": 5,
    "bench": 5,
    "calibration": 5,
    "train": 6,
    "cli": 7,
    "__main__": 8,
    "": 9,
}
"""Rank of each subpackage: a module imports only lower ranks (and its own package). The package
itself (``""``, its ``__init__``) is on top: it registers the environment."""

LEAVES = frozenset({"naming", "registry", "seeding", "spaces", "protocols", "fileio", "digests",
                    "visibility", "jitcache", "nn", "workers", "progress"})
"""Root modules anyone may import; they import nothing else of the package."""

FORBIDDEN: tuple[tuple[str, str], ...] = (
    ("tasks", "agent"),
    ("tasks", "control"),
    ("perception", "env"),
    ("control", "env"),
    ("agent", "env"),
)
"""``(importer, imported)`` prefixes below ``mrsteve.`` that may not import each other at all
(the ranks allow the first three; the agent's parts see the world only through observations)."""

AGENT_PARTS = ("perception", "control", "agent")
"""What the agent is made of: it sees the world only through observations."""

WORLD_FOR_AGENTS = ("world.camera", "world.content", "world.crafting")
"""The world modules agent parts may import: the camera's intrinsics (the frame's geometry), the
names of the blocks, items and semantic classes, and the crafting recipes (public knowledge, as a
player's recipe book); never the world's state, its maps or the renderer."""

ONLY_FROM_LOWER: dict[str, tuple[str, ...]] = {"perception": ("world.content",)}
"""Packages that import nothing of lower layers but these modules (and the leaves): the encoders
need the names of the world's semantic classes, and nothing else of it."""

# ----------------------------------------------------------------------------- allowlists

KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset()
"""``(importer, imported)`` module pairs that break a rule today and that another branch of the
redesign removes. Empty this once those branches are merged."""

KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
"""Sets of modules that import each other in a circle today (strongly connected components) and
that another branch removes. Empty this once those branches are merged."""


# ----------------------------------------------------------------------------- the graph


def module_name(path: Path, root: Path = ROOT) -> str:
    """``mrsteve.world.world`` for ``mrsteve/world/world.py`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of the package that ``tree`` imports anywhere (functions included), and those
    it names to import later: a string ``"mrsteve.a.b:name"`` (a registry entry's builder,
    :func:`mrsteve.naming.entry_point`) counts as importing ``mrsteve.a.b``.

    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``.
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and re.fullmatch(rf"{PACKAGE}(\.\w+)+:\w+", node.value)):
            found.add(node.value.partition(":")[0])
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                found.add(candidate if candidate in known else source)
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}`` for every module under ``root``."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = set(paths)
    graph = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        imports = imported_modules(tree, name, path.name == "__init__.py", known)
        graph[name] = {target for target in imports if target != name}
    return graph


# ----------------------------------------------------------------------------- the rules


def _part(module: str) -> str:
    """``world.render`` for ``mrsteve.world.render``; ``""`` for the package itself."""
    return module[len(PACKAGE) + 1:] if module != PACKAGE else ""


def rule_broken(importer: str, imported: str) -> str | None:
    """Which rule ``importer`` importing ``imported`` breaks, if any."""
    source, target = _part(importer), _part(imported)
    source_top, target_top = source.split(".")[0], target.split(".")[0]
    if source_top in LEAVES:
        if target and target_top not in LEAVES:
            return f"leaf module {importer} imports {imported}"
        return None
    if not target or target_top in LEAVES or source_top == target_top:
        return None
    for lower, higher in FORBIDDEN:
        if (source == lower or source.startswith(lower + ".")) and (
            target == higher or target.startswith(higher + ".")
        ):
            return f"{lower} may not import {higher}"
    if source_top in AGENT_PARTS and target_top == "world" and not any(
        target == allowed or target.startswith(allowed + ".") for allowed in WORLD_FOR_AGENTS
    ):
        return f"agent part {source_top} imports {target} (only {', '.join(WORLD_FOR_AGENTS)})"
    if source_top not in LAYERS or target_top not in LAYERS:
        return f"{importer} or {imported} is in no layer (add it to LAYERS)"
    if LAYERS[target_top] > LAYERS[source_top]:
        return f"{source_top} (layer {LAYERS[source_top]}) imports higher {target_top} " \
               f"(layer {LAYERS[target_top]})"
    if LAYERS[target_top] == LAYERS[source_top]:
        return f"{source_top} imports its sibling layer {target_top}"
    allowed = ONLY_FROM_LOWER.get(source_top)
    if allowed is not None and not any(target == a or target.startswith(a + ".") for a in allowed):
        return f"{source_top} imports of lower layers only {', '.join(allowed)}"
    return None


def violations(graph: Mapping[str, Iterable[str]]) -> dict[tuple[str, str], str]:
    """``{(importer, imported): rule}`` for every import that breaks a layering rule."""
    found = {}
    for importer, targets in graph.items():
        for imported in targets:
            rule = rule_broken(importer, imported)
            if rule is not None:
                found[importer, imported] = rule
    return found


def cycles(graph: Mapping[str, Iterable[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layering_problems(
    graph: Mapping[str, Iterable[str]],
    known_violations: Iterable[tuple[str, str]] = KNOWN_VIOLATIONS,
    known_cycles: Iterable[frozenset[str]] = KNOWN_CYCLES,
) -> list[str]:
    """What is wrong with ``graph``: new violations and cycles, and allowlist entries gone stale."""
    known_violations, known_cycles = set(known_violations), set(known_cycles)
    broken, circles = violations(graph), cycles(graph)
    problems = [f"{a} -> {b}: {rule}" for (a, b), rule in sorted(broken.items())
                if (a, b) not in known_violations]
    problems += [f"import cycle: {' <-> '.join(sorted(c))}" for c in circles - known_cycles]
    problems += [f"{a} -> {b} is allowed in KNOWN_VIOLATIONS but no longer breaks a rule: "
                 "remove it" for a, b in sorted(known_violations - set(broken))]
    problems += [f"cycle {sorted(c)} is allowed in KNOWN_CYCLES but no longer occurs: remove it"
                 for c in known_cycles - circles]
    return problems


# ----------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return module_graph()


def test_the_package_keeps_its_layers(graph):
    problems = layering_problems(graph)
    assert not problems, "\n".join(problems)


def test_every_subpackage_has_a_layer(graph):
    tops = {_part(name).split(".")[0] for name in graph if name != PACKAGE}
    assert tops - LEAVES <= set(LAYERS), sorted(tops - LEAVES - set(LAYERS))


def test_the_graph_sees_function_level_and_type_checking_imports(tmp_path):
    package = tmp_path / PACKAGE
    (package / "world").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "world" / "__init__.py").write_text("from mrsteve.world.a import A\n")
    (package / "world" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mrsteve.world.b import B\n"
        "class A:\n    def f(self):\n        from . import b\n        import mrsteve.naming\n"
    )
    (package / "world" / "b.py").write_text("from .a import A\nfrom mrsteve.env import x\n")
    fake = module_graph(package)
    assert fake["mrsteve.world"] == {"mrsteve.world.a"}
    assert fake["mrsteve.world.a"] == {"mrsteve.world.b", "mrsteve.naming"}
    assert fake["mrsteve.world.b"] == {"mrsteve.world.a", "mrsteve.env"}


def test_new_violations_and_cycles_fail_and_stale_allowances_are_reported():
    fake = {
        "mrsteve.naming": {"mrsteve.world.content"},  # a leaf reaching into a layer
        "mrsteve.world.content": {"mrsteve.naming"},
        "mrsteve.world.world": {"mrsteve.env.voxel_env"},  # world -> env: up
        "mrsteve.env.voxel_env": {"mrsteve.world.world", "mrsteve.world.render"},
        "mrsteve.world.render": set(),
        "mrsteve.perception.semantic": {"mrsteve.env.voxel_env", "mrsteve.control.goals",
                                        "mrsteve.world.content", "mrsteve.world.render"},
        "mrsteve.control.goals": {"mrsteve.world.render", "mrsteve.spaces"},
        "mrsteve.tasks.episode": {"mrsteve.agent.factory", "mrsteve.perception.semantic"},
        "mrsteve.agent.factory": {"mrsteve.control.goals", "mrsteve.memory.fifo"},
        "mrsteve.memory.fifo": set(),
        "mrsteve.cli.eval": {"mrsteve.eval.runner", "mrsteve"},
        "mrsteve.eval.runner": {"mrsteve.tasks.episode", "mrsteve.agent.factory"},
        "mrsteve.spaces": set(),
        "mrsteve": set(),
    }
    found = violations(fake)
    assert set(found) == {
        ("mrsteve.naming", "mrsteve.world.content"),
        ("mrsteve.world.world", "mrsteve.env.voxel_env"),
        ("mrsteve.perception.semantic", "mrsteve.env.voxel_env"),
        ("mrsteve.perception.semantic", "mrsteve.control.goals"),
        ("mrsteve.perception.semantic", "mrsteve.world.render"),
        ("mrsteve.control.goals", "mrsteve.world.render"),
        ("mrsteve.tasks.episode", "mrsteve.agent.factory"),
    }
    circle = frozenset({"mrsteve.world.world", "mrsteve.env.voxel_env"})
    assert cycles(fake) == {circle, frozenset({"mrsteve.naming", "mrsteve.world.content"})}

    allowed = set(found)
    cycles_allowed = cycles(fake)
    assert layering_problems(fake, allowed, cycles_allowed) == []
    # one import more breaks the test ...
    worse = {**fake, "mrsteve.memory.dpmeans": {"mrsteve.agent.factory"}}
    assert layering_problems(worse, allowed, cycles_allowed) == [
        "mrsteve.memory.dpmeans -> mrsteve.agent.factory: memory (layer 0) imports higher agent "
        "(layer 3)"
    ]
    looped = {**fake, "mrsteve.memory.fifo": {"mrsteve.memory.dpmeans"},
              "mrsteve.memory.dpmeans": {"mrsteve.memory.fifo"}}
    assert layering_problems(looped, allowed, cycles_allowed) == [
        "import cycle: mrsteve.memory.dpmeans <-> mrsteve.memory.fifo"
    ]
    # ... and so does an allowance whose violation is gone
    better = {**fake, "mrsteve.tasks.episode": {"mrsteve.perception.semantic"}}
    (stale,) = layering_problems(better, allowed, cycles_allowed)
    assert "mrsteve.tasks.episode -> mrsteve.agent.factory" in stale and "remove it" in stale
    fixed = {**fake, "mrsteve.env.voxel_env": {"mrsteve.world.render"}}
    (gone,) = layering_problems(fixed, allowed, cycles_allowed)
    assert "KNOWN_CYCLES" in gone
