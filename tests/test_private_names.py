"""No module of rungs imports a neighbour's private names: a seam used across modules is public, or the files are one.

Read from the source (the AST of every module, every import wherever it stands): an
``from x import _name``, an ``import rungs.x as m`` / ``from . import m`` followed by ``m._name``.
A name is private when it starts with one underscore (``__dunder__`` names are the language's).
No module of the package has such a use: the model room's seams were made public first (the first test),
then every other room's (the second).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rungs"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(importer: str, is_package: bool, module: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><module> import …`` written in ``importer``."""
    if not level:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def private_uses(root: Path = PACKAGE) -> list[tuple[str, str, str, int]]:
    """(importer, defining module, private name, line) for every private name one module takes from another."""
    top = root.name
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    found = []
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        aliases = {}  # a local name bound to one of our modules → that module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = resolve(name, is_package, node.module, node.level)
                if source != top and not source.startswith(top + "."):
                    continue
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:  # ``from . import bundle``: a module, not a name
                        aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
                    elif alias.name.startswith("_") and not alias.name.startswith("__") and source != name:
                        found.append((name, source, alias.name, node.lineno))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                if node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != name:
                    found.append((name, aliases[node.value.id], node.attr, node.lineno))
    return found


def _said(uses) -> str:
    return "\n".join(f"  {importer} (line {line}) uses {source}.{private}" for importer, source, private, line in uses)


def test_no_module_uses_a_private_name_of_the_model_room():
    uses = [u for u in private_uses() if u[1].startswith("rungs.model")]
    assert not uses, "private names of rungs.model used from another module (make them public):\n" + _said(uses)


def test_no_module_uses_a_private_name_of_another():
    uses = private_uses()
    assert not uses, "private names used from another module:\n" + _said(uses)


def test_the_check_sees_every_way_of_taking_a_private_name(tmp_path):
    """The negative control: a planted package that takes private names each way is caught each time."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("from .a import _hidden\n")
    (root / "sub" / "a.py").write_text("_hidden = 1\n_own = 2\nprint(_own)\n")
    (root / "sub" / "b.py").write_text("from . import a\nfrom .a import _hidden as h\nimport pkg.sub.a as m\n"
                                       "def f():\n    from ..sub.a import _own\n    return a._own, m._hidden, a.__name__\n")
    (root / "c.py").write_text("from pkg.sub.a import _hidden\nfrom .sub import a\nx = a.public\n")
    uses = sorted((i, s, n) for i, s, n, _ in private_uses(root))
    assert uses == [("pkg.c", "pkg.sub.a", "_hidden"), ("pkg.sub", "pkg.sub.a", "_hidden"),
                    ("pkg.sub.b", "pkg.sub.a", "_hidden"), ("pkg.sub.b", "pkg.sub.a", "_hidden"),
                    ("pkg.sub.b", "pkg.sub.a", "_own"), ("pkg.sub.b", "pkg.sub.a", "_own")]
