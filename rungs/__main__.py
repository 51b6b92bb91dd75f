"""``python -m rungs COMMAND``: the collection as a command line.

Each command lives in the module that owns its concept; this file only
dispatches, so ``--help`` of every command is written next to its code.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "doctor": ("rungs.doctor", "check this machine before a workshop: Python, disk, memory, CPU, model, encoder"),
    "index": ("rungs.cli", "index a folder of your own documents (Markdown, text, HTML, PDF, Word)"),
    "search": ("rungs.cli", "search the indexed folder with any rung, its knobs as options"),
    "ask": ("rungs.cli", "answer a question from the indexed folder, with sources, or « je ne sais pas »"),
    "workshop": ("rungs.workshop", "copy the notebooks into a learner's own workspace, never overwriting an edit"),
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
    return int(module.main([name, *rest]) or 0)


if __name__ == "__main__":
    sys.exit(main())
