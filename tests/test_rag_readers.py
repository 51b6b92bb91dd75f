"""N3's readers are read from one table (``rungs.rag.readers``): no module tests a mode's name itself.

A mode tested by its name (« mode.startswith("pointing") », « mode == "quoted" ») in five modules is how a new
reader was once half-added: these tests find any such test in the package, and hold what the table promises.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rungs import rag
from rungs.core.errors import BadArgument
from rungs.rag import readers

PACKAGE = Path(rag.__file__).resolve().parent.parent
NAMES = set(readers.READERS) | {"pointing"}  # « startswith("pointing") » tested two readers at once


def mode_tests(root: Path) -> list[str]:
    """Where a module of ``root`` compares something with a reader's name, or asks if it starts with one."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "readers.py" and path.parent.name == "rag":
            continue  # the table itself
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                said = [s.value for s in sides if isinstance(s, ast.Constant) and s.value in NAMES]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "startswith" and node.args):
                arg = node.args[0]
                options = arg.elts if isinstance(arg, ast.Tuple) else [arg]
                said = [o.value for o in options if isinstance(o, ast.Constant) and o.value in NAMES]
            else:
                continue
            if said:
                found.append(f"{path.relative_to(root)}:{node.lineno} tests {said}")
    return found


def test_no_module_tests_a_readers_name():
    assert mode_tests(PACKAGE) == [], "read the reader's fields (rag.reader(mode).numbered, .quotes, …) instead"


def test_the_scan_sees_a_test_of_a_name(tmp_path):
    (tmp_path / "m.py").write_text('def f(mode):\n    return mode == "quoted" or mode.startswith(("pointing", "x"))\n')
    assert len(mode_tests(tmp_path)) == 2


def test_the_table_is_what_answer_and_the_cli_offer():
    assert rag.READERS == tuple(readers.TABLE) and set(rag.MODES) == {n for n, r in readers.TABLE.items() if r.model}
    assert rag.DEFAULT_MODE in rag.READERS and rag.MODEL_MODE in rag.MODES
    assert not rag.reader(rag.COPY).model  # the floor asks no model to read


def test_each_fact_of_a_row_changes_what_is_sent_or_read():
    passages = [{"id": "a", "text": "Le télétravail est possible deux jours par semaine. Il faut l'accord du manager."}]
    for name in rag.MODES:
        row = rag.reader(name)
        schema = rag.schema_for(passages, name)
        prompt = rag.build_prompt("Combien de jours ?", passages, mode=name)
        assert ("[1]" in prompt) == row.numbered, name  # numbered sentences, or the extract whole
        assert ("reponse" in schema["properties"]) == row.lead, name
        assert ("quotes" in schema["properties"]) == row.quotes, name
        assert ("quotes" in rag.repair_message([], name)) == row.quotes, name


@pytest.mark.parametrize("bad", ["copy", "Pointing", "", None, 3])
def test_a_model_step_refuses_what_no_model_reads(bad):
    with pytest.raises(BadArgument, match="mode must be one of"):
        rag.schema_for([{"id": "a", "text": "x"}], bad)
