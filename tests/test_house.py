"""The house: the package's layout is its architecture, and these tests keep it so.

The import graph is read from the source, as a reader would draw it (every
``import`` and ``from … import``, at the top of a module or inside a function),
never from what happens to be imported at run time. Then:

- ``core`` imports nothing above it; ``model`` only ``core``;
- a rung imports ``core``, ``model`` and the rungs at its level or below — never
  the lab, your folder or the tools;
- the lab and your folder stand on the ladder, not on each other; the tools on all;
- no cycle anywhere;
- every module is held in one sitting, every refusal is a ``RungsError``.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest

import rungs
from rungs.core.errors import RungsError

PACKAGE = Path(rungs.__file__).resolve().parent

#: The ladder, bottom to top: a rung may import the rungs at its level or below.
LADDER = {"fts": 0, "bm25": 1, "fastbm25": 1, "feedback": 1, "passages": 1, "engine": 1, "vectors": 2,
          "hybrid": 2, "rag": 3, "decide": 4, "rerank": 4, "research": 5}
#: Which rooms a room may import (a rung's own rule is LADDER's).
MAY_IMPORT = {"core": {"core"}, "model": {"core", "model"},
              "grounding": {"core", "model", "grounding"},
              "ladder": {"core", "model", "grounding", "ladder"},
              "lab": {"core", "model", "grounding", "ladder", "lab"},
              "yours": {"core", "model", "grounding", "ladder", "yours"},
              "tools": {"core", "model", "grounding", "ladder", "lab", "yours", "tools"},
              "exercises": {"core", "model", "grounding", "ladder", "lab", "yours", "tools", "exercises"},
              "face": {"core", "model", "grounding", "ladder", "lab", "yours", "tools"}}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the package, found by walking its files (not by importing it)."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def room(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 1:
        return "face"
    if parts[1] in LADDER:
        return "ladder"
    if parts[1] == "__main__":
        return "tools"
    return parts[1]


def rank(name: str) -> int:
    return LADDER[name.split(".")[1]]


def imports(name: str, path: Path) -> set[str]:
    """The rungs modules ``name`` imports, resolved to full names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "rungs"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "rungs":
                continue
            found.add(target)
            known = modules()
            for alias in node.names:  # ``from . import fts``: a module, not a name
                if f"{target}.{alias.name}" in known:
                    found.add(f"{target}.{alias.name}")
    return {f for f in found if f != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {i for i in imports(name, path) if i in known and i != "rungs"} for name, path in known.items()}


def test_every_room_imports_only_what_it_may():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if room(target) not in MAY_IMPORT[room(name)]:
                wrong.append(f"{name} ({room(name)}) imports {target} ({room(target)})")
            elif room(name) == room(target) == "ladder" and rank(target) > rank(name):
                wrong.append(f"{name} (N{rank(name)}) imports {target}, a rung above it (N{rank(target)})")
    assert not wrong, "\n".join(wrong)


def test_the_layering_test_sees_an_upward_import(tmp_path, monkeypatch):
    # A negative control: the rule must catch what it forbids (core importing the lab).
    fake = {"rungs.core.text": {"rungs.lab.metrics"}, "rungs.fts": {"rungs.bm25"}}
    monkeypatch.setattr(sys.modules[__name__], "graph", lambda: fake)
    with pytest.raises(AssertionError, match="core.*imports rungs.lab.metrics.*\n.*a rung above it"):
        test_every_room_imports_only_what_it_may()


def test_no_import_cycle():
    edges = graph()
    state: dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " → ".join(trail[trail.index(nxt):] + [nxt]))
            if not state.get(nxt):
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if not state.get(node):
            visit(node, [node])


#: A module a reader holds in one sitting; a function on one screen.
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 450, 60


def test_every_module_is_held_in_one_sitting():
    long = [f"{name}: {len(path.read_text().splitlines())} lines" for name, path in modules().items()
            if "exercises" not in name and len(path.read_text().splitlines()) > MAX_MODULE_LINES]
    assert not long, long


def test_every_function_fits_on_a_screen():
    long = []
    for name, path in modules().items():
        if "exercises" in name:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert not long, long


BUILTIN_ERRORS = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}


def test_no_module_raises_a_builtin_exception():
    """Every refusal is a RungsError: ``raise ValueError(…)`` anywhere in the package is a leak."""
    leaks = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in BUILTIN_ERRORS:
                    leaks.append(f"{name}, line {node.lineno}: raise {exc.id}")
    assert not leaks, leaks


def test_every_error_class_of_every_module_has_one_root():
    # Every module imported by walking the package, not only those something happened to import.
    for info in pkgutil.walk_packages(rungs.__path__, "rungs."):
        importlib.import_module(info.name)
    classes = {c for name in modules() for c in vars(importlib.import_module(name)).values()
               if inspect.isclass(c) and issubclass(c, BaseException) and c.__module__.startswith("rungs")}
    assert len(classes) >= 30
    assert all(issubclass(c, RungsError) for c in classes), sorted(c.__name__ for c in classes
                                                                  if not issubclass(c, RungsError))


def test_every_import_inside_the_package_resolves():
    """An import a module does only inside a function is not run by importing it: check each one resolves,
    so a file moved to another room cannot leave a `from . import x` that fails on a learner's first call."""
    known, broken = modules(), []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("rungs")):
                continue
            base = package.split(".")
            target = ".".join(base[:len(base) - node.level + 1] + [node.module] if node.module else
                              base[:len(base) - node.level + 1]) if node.level else node.module
            if target not in known:
                broken.append(f"{name}, line {node.lineno}: no module {target}")
                continue
            module = importlib.import_module(target)
            for alias in node.names:
                if f"{target}.{alias.name}" not in known and not hasattr(module, alias.name):
                    broken.append(f"{name}, line {node.lineno}: {target} has no {alias.name}")
    assert not broken, "\n".join(broken)
