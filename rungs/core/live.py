"""Output that grows while a cell runs, saved once: ``LiveText`` (a streamed answer) and ``progress`` (the one bar).

What it is for: a notebook saves what a cell printed, and a static view of a
committed notebook (GitHub, the book) shows exactly that. Text printed token by
token is saved as a column of fragments; a progress bar drawn with carriage
returns is saved as a smear of them, and a widget as its first state (« 0% »).
Here each is ONE display, updated in place, whose last state is what is saved.
In a terminal, the progress bar is tqdm's own, with the time left.

Taught in passing: notebook 03 (an answer streamed), 04 and 07 (a line per long
cell); ``rungs.core.display`` re-exports both.

Cost: one display update every few tenths of a second; tqdm is imported on a
bar's first use (about 0.05 s).
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Iterable

from .errors import BadArgument, check_bool, check_int, check_number


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (where a display can be updated in place); False in a terminal or a script."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class LiveText:
    """Text that arrives piece by piece (a streamed answer) shown as ONE output that grows.

    ``print(token, end="")`` per token leaves one output per token in the saved
    notebook: a static view (GitHub, the book) shows a column of fragments. In a
    kernel this displays once (``display(..., display_id=True)``) and then updates
    that display, at most every ``every`` seconds and once more at ``close()``; so
    the saved notebook holds one output with the whole text. Outside a kernel it
    prints as it goes. nbval does not see display updates: never mark a cell that
    uses it ``# NBVAL_CHECK_OUTPUT``; check the result in the next cell.

        with LiveText() as live:
            for token in client.stream(messages):
                live.write(token)
    """

    def __init__(self, text: str = "", *, every: float = 0.1):
        import time

        self.text, self.every, self._clock = text, every, time.monotonic
        self._last = 0.0
        self._handle = None
        if _in_kernel():
            from IPython.display import display

            self._handle = display({"text/plain": text}, raw=True, display_id=True)
        elif text:
            print(text, end="", flush=True)

    _by_cell: dict = {}

    @classmethod
    def per_cell(cls) -> "LiveText":
        """The LiveText of the notebook cell now running, made on first use: for a callback that sees one
        event at a time (``rungs.research.printing_sink``). Outside a kernel, a new one that prints."""
        if not _in_kernel():
            return cls()
        from IPython import get_ipython

        cell = get_ipython().execution_count
        if cell not in cls._by_cell:
            cls._by_cell.clear()  # only the running cell's display may still grow
            cls._by_cell[cell] = cls()
        return cls._by_cell[cell]

    def write(self, piece: str) -> None:
        """Add text; the display catches up at most every ``every`` seconds."""
        self.text += piece
        if self._handle is None:
            print(piece, end="", flush=True)
        elif self._clock() - self._last >= self.every:
            self._show()

    __call__ = write  # a LiveText is also a callback: on_delta=live

    def _show(self) -> None:
        self._last = self._clock()
        self._handle.update({"text/plain": self.text}, raw=True)

    def close(self) -> str:
        """Show the whole text; returns it."""
        if self._handle is not None:
            self._show()
        elif self.text and not self.text.endswith("\n"):
            print(flush=True)
        return self.text

    def __enter__(self) -> "LiveText":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(items: Iterable | None = None, *, desc: str = "", total: int | None = None, unit: str = "it",
             every: float = 0.25, enabled: bool = True, leave: bool = True):
    """The collection's one progress bar: tqdm's, shown where it is watched; over ``items``, or updated by hand.

    ``for x in progress(items, desc="sweep")`` counts the items; without ``items`` it returns the bar itself, to
    ``update(n)``, ``reset(total=…)`` and ``close()`` (an index run: reading, then encoding).

    - In a terminal: tqdm's own bar on stderr, with the rate and the time left (``leave``: it stays at the end).
    - In a notebook: ONE plain-text output, « desc: 37/200 (18 %) · 0:12 left », updated in place, that ends
      as « desc: 200/200 (100 %) in 3.4 s ». Why not tqdm's widget or its text: a widget saves its first state
      (« 0% ») as the notebook's text, and tqdm's text is a stream of carriage returns — a static view of a
      committed notebook (GitHub, the book) would show a bar that never moved, or a smear of them. A display
      updated in place is saved once, in its last state.
    - Anywhere else (a log, a pipe, a test): only the last line, once, on stderr (``leave``), never a bar.

    ``enabled=False``: no bar at all. ``every``: the least time between two updates.
    """
    if items is not None and (isinstance(items, (str, bytes)) or not isinstance(items, Iterable)):
        raise BadArgument(f"items must be a list (or any iterable) of what to count, not {type(items).__name__}")
    for name, value in (("desc", desc), ("unit", unit)):
        if not isinstance(value, str):
            raise BadArgument(f"{name} must be text, not {type(value).__name__}")
    total = None if total is None else check_int(total, "total", low=0)
    every = check_number(every, "every", low=0.0, high=3600.0)
    check_bool(enabled, "enabled")
    check_bool(leave, "leave")
    if total is None and items is not None and hasattr(items, "__len__"):
        total = len(items)
    bar = _bar_class()(desc=desc, total=total, unit=unit, mininterval=every, disable=not enabled, leave=leave,
                       where=_where())
    if items is None:
        return bar
    if total is None and not hasattr(items, "__len__"):
        items = list(items)  # the total is what makes a line say how far it is
        bar.reset(total=len(items))
    return _counted(bar, items)


def _counted(bar, items):
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:  # the end, or a loop left early: the line says where it stopped, and how long it took
        bar.close()


def _where() -> str:
    if _in_kernel():
        return "kernel"
    return "terminal" if getattr(sys.stderr, "isatty", lambda: False)() else "log"


class _Nowhere:
    """Where tqdm writes when it is not the one showing the bar (a notebook's display, a log's last line)."""

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


@lru_cache(maxsize=1)
def _bar_class():
    from tqdm.std import tqdm  # here: tqdm costs a search that shows no bar a twentieth of a second

    class Bar(tqdm):
        """tqdm, with its display replaced where a terminal is not the one watching (``progress``)."""

        def __init__(self, *args, where: str, **kwargs):
            self._where, self._live = where, None
            super().__init__(*args, file=None if where == "terminal" else _Nowhere(), **kwargs)

        def line(self, final: bool = False) -> str:
            d = self.format_dict
            label = f"{self.desc}: " if self.desc else ""
            if not d["total"]:
                return f"{label}{d['n']} {self.unit}s" + (f" in {d['elapsed']:.1f} s" if final else "")
            done = f"{label}{d['n']}/{d['total']} ({100 * d['n'] // max(d['total'], 1)} %)"
            if final:
                return f"{done} in {d['elapsed']:.1f} s"
            left = (d["total"] - d["n"]) * d["elapsed"] / d["n"] if d["n"] and d["elapsed"] > 0 else None
            return done + (f" · {self.format_interval(left)} left" if left is not None else "")

        def display(self, msg=None, pos=None):
            if self._where == "terminal":
                return super().display(msg, pos)
            if self._where == "kernel" and msg is None and (self.n or self.total):
                self._show(self.line())
            return True

        def _show(self, text: str) -> None:
            if self._live is None:
                self._live = LiveText(text, every=0)
            else:
                self._live.text = text
                self._live._show()

        def close(self):
            if self.disable:
                return
            final = self.line(final=True)
            super().close()
            if self._where == "kernel" and (self._live is not None or self.n):
                self._show(final)  # in a notebook the last state is kept: it is what a static view shows
            elif self._where == "log" and self.leave and (self.n or self.total):
                print(final, file=sys.stderr, flush=True)

    return Bar
