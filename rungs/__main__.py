"""``python -m rungs COMMAND``: the collection as a command line.

Each command lives in the room that owns its concept; this file only
dispatches, so ``--help`` of every command is written next to its code.
"""

from __future__ import annotations

import importlib
import sys

#: command → (module, what it is for). Every module's ``main`` takes the words after the command;
#: ``rungs.tools.cli`` serves three commands, so it is given the command's name first.
COMMANDS = {
    "index": ("rungs.tools.cli", "index a folder of your own documents (Markdown, text, HTML, PDF, Word)"),
    "search": ("rungs.tools.cli", "search the indexed folder with any rung, its knobs as options"),
    "ask": ("rungs.tools.cli", "answer a question from the indexed folder, with sources, or « je ne sais pas »"),
    "doctor": ("rungs.tools.doctor", "check this machine before a workshop: Python, disk, memory, CPU, model, encoder"),
    "workshop": ("rungs.tools.workshop", "copy the notebooks into a learner's own workspace, never overwriting an edit"),
    "export": ("rungs.tools.export", "print Elasticsearch / OpenSearch index settings and a request for a tuned setting"),
    "book": ("rungs.tools.book", "build the notebooks as a static site that opens offline (book build DIR)"),
    "model": ("rungs.model.__main__", "the local model: prepare | serve | status | stop | check-stopped"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: python -m rungs COMMAND [options]   (python -m rungs COMMAND --help for one)", ""]
    lines += [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    words = [name, *rest] if COMMANDS[name][0] == "rungs.tools.cli" else rest
    return int(module.main(words) or 0)


if __name__ == "__main__":
    sys.exit(main())
