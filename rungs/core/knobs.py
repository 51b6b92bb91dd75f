"""Knobs you can drag: a slider or a dropdown for each search-time knob, and the table it reshuffles.

What it is for: the knobs the lessons turn without a model — N1's k1, b and
title weight, N2's fusion constant and legs' weights, N4's support threshold
over stored scores, N5's ``per_section`` and ``fusion_k``, N7's vector weight —
are search-time arguments: nothing is rebuilt, so a control can redo the work
on every move. This is the one home of such a control. ``Slider`` and
``Choice`` say what a knob may take; a ``Panel`` shows what a function of the
knobs returns, for the knobs where they are now; ``reranking`` is the panel
the rungs need most, two rankings side by side (``display.side_by_side``): a
reference setting on the left, the knobs as dragged on the right, each page
saying how it moved. Taught in notebook 01, section 8, and notebook 02, section 4.

A static view cannot move a slider. GitHub, the book, nbval and a kernel
without ipywidgets see the panel's text at the knobs' starting values — the
side-by-side table, under one line naming the knobs — as the cell's
``text/plain``; a running JupyterLab draws the controls above that same table
and redraws the table on every move. So a committed output stays meaningful,
and a checked cell compares text that does not depend on a widget's id.

Cost: one call of the function per move (a re-rank of the handbook takes
milliseconds); ipywidgets is imported only when a panel is drawn.
"""

from __future__ import annotations

import html
import numbers
from dataclasses import dataclass
from typing import Callable

from .display import Table, side_by_side
from .errors import BadArgument, RungsError, short_repr, check_number

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _whole(*values) -> bool:
    return all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values)


@dataclass(frozen=True)
class Slider:
    """A number knob: where it starts, its range and its step (all whole numbers: a whole-number slider)."""

    start: float
    low: float
    high: float
    step: float

    def __post_init__(self):
        for name in ("start", "low", "high", "step"):
            value = check_number(getattr(self, name), f"slider {name}")
            if not _whole(getattr(self, name)):  # a Decimal or a Fraction kept as itself would not mix with a float
                object.__setattr__(self, name, value)
        if not self.low <= self.start <= self.high:
            raise BadArgument(f"a slider starts inside its range: {self.start:g} is not within "
                              f"[{self.low:g}, {self.high:g}]")
        if not 0 < self.step <= self.high - self.low:
            raise BadArgument(f"a slider's step is above 0 and at most its range, not {self.step:g}")
        if _whole(self.start, self.low, self.high, self.step) and (self.start - self.low) % self.step:
            raise BadArgument(f"a whole-number slider starts on one of its steps ({self._steps()}), "
                              f"not {self.start}")

    def _steps(self) -> str:
        """The values a whole-number slider stands on, as a message names them: « 0, 3, 6, … 99 »."""
        count = (self.high - self.low) // self.step + 1
        first = [self.low + n * self.step for n in range(min(count, 4))]
        return ", ".join(map(str, first)) + (f", … {self.low + (count - 1) * self.step}" if count > 4 else "")

    def check(self, value, name: str):
        """A value this knob may take (a whole number for a whole-number slider), else ``BadArgument``."""
        value = check_number(value, name, low=self.low, high=self.high)
        if not _whole(self.start, self.low, self.high, self.step):
            return value
        if value != int(value):  # 2.5 for RRF's k would be cut to 2 without a word
            raise BadArgument(f"{name} moves in whole steps: give a whole number, not {value:g}")
        if (int(value) - self.low) % self.step:  # the drawn slider cannot stand there: the text would show what no drag does
            raise BadArgument(f"{name} moves in steps of {self.step} from {self.low}: give one of "
                              f"{self._steps()}, not {int(value)}")
        return int(value)

    def widget(self, name: str):
        import ipywidgets

        # A whole-number knob (RRF's k, a count) moves in whole steps and is passed on as an int.
        kind = ipywidgets.IntSlider if _whole(self.start, self.low, self.high, self.step) else ipywidgets.FloatSlider
        return kind(value=self.start, min=self.low, max=self.high, step=self.step, description=name,
                    continuous_update=True, style={"description_width": "initial"})


@dataclass(frozen=True)
class Choice:
    """A knob with a few named values (``match``: any or all; a question among several)."""

    start: object
    options: tuple

    def __post_init__(self):
        if isinstance(self.options, (str, bytes)) or not isinstance(self.options, (list, tuple)) or not self.options:
            raise BadArgument(f"a choice needs a list of options, not {short_repr(self.options)}")
        object.__setattr__(self, "options", tuple(self.options))  # frozen, and a list would be shared
        if self.start not in self.options:
            raise BadArgument(f"a choice starts on one of its options: {short_repr(self.start)} is not in "
                              f"{short_repr(list(self.options))}")

    def check(self, value, name: str):
        if value not in self.options:
            raise BadArgument(f"{name} must be one of {short_repr(list(self.options))}, not {short_repr(value)}")
        return value

    def widget(self, name: str):
        import ipywidgets

        return ipywidgets.Dropdown(options=list(self.options), value=self.start, description=name,
                                   style={"description_width": "initial"})


def describe(values: dict) -> str:
    """Knob values as a column label: « k1=0.3 b=0.75 match=any » (numbers in their shortest form)."""
    return " ".join(f"{name}={_shortest(value)}" for name, value in values.items())


def _shortest(value) -> str:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):  # a whole number as itself: « g » would make it a float, and overflow
        return str(int(value)) if int(value).bit_length() < 64 else short_repr(int(value))
    return f"{value:g}"


class Panel:
    """What ``render(**knobs)`` returns, for knobs a reader can drag; its text shows wherever a widget cannot.

        panel = Panel(lambda k1, b: ranking_table(index.search(q, k1=k1, b=b)),
                      k1=Slider(1.2, 0, 3, 0.1), b=Slider(0.75, 0, 1, 0.05))
        panel                      # the cell's output: the controls, and the text they reshuffle
        panel.text(k1=0.3)         # the text at another setting, as a drag would show it
    """

    def __init__(self, render: Callable[..., object], **knobs):
        if not callable(render):
            raise BadArgument(f"render must be a function of the knobs, not {type(render).__name__}")
        if not knobs:
            raise BadArgument("a panel needs at least one knob: name=Slider(…) or name=Choice(…)")
        for name, knob in knobs.items():
            if not isinstance(knob, (Slider, Choice)):
                raise BadArgument(f"knob {name!r} must be a Slider or a Choice, not {type(knob).__name__}")
        self.render, self.knobs = render, dict(knobs)
        self.values = {name: knob.start for name, knob in knobs.items()}
        self._controls, self._view, self._box = {}, None, None

    def _checked(self, values: dict) -> dict:
        unknown = sorted(set(values) - set(self.knobs))
        if unknown:
            raise BadArgument(f"this panel has no knob {unknown[0]!r} (its knobs: {', '.join(self.knobs)})")
        return {**self.values, **{name: self.knobs[name].check(v, name) for name, v in values.items()}}

    def text(self, **values) -> Table:
        """The panel's text with these knobs moved (the others where they are); the panel itself does not move."""
        return Table(str(self.render(**self._checked(values))))

    def set(self, **values) -> "Panel":
        """Move knobs as a drag would: the values change, and so do the drawn controls and table."""
        self.values = self._checked(values)
        for name, control in self._controls.items():
            control.value = self.values[name]  # each control's observer redraws the table
        return self

    def header(self) -> str:
        kinds = " · ".join(self.knobs)
        return f"[controls {kinds}: drag them in a running notebook; shown here at {describe(self.values)}]"

    def __repr__(self) -> str:
        return f"{self.header()}\n{self._shown()}"

    def widget(self):
        """The controls and the table under them (an ipywidgets box), made once; ``RungsError`` without ipywidgets."""
        if self._box is not None:
            return self._box
        try:
            import ipywidgets
        except ImportError:
            raise KnobsUnavailable("ipywidgets is not installed here: the panel shows its text only "
                                   "(pip install ipywidgets, then restart the kernel)") from None
        self._view = ipywidgets.HTML(self._html())
        for name, knob in self.knobs.items():
            control = knob.widget(name)
            control.observe(lambda change, name=name: self._moved(name, change["new"]), names="value")
            self._controls[name] = control
        self._box = ipywidgets.VBox([*self._controls.values(), self._view])
        return self._box

    def _moved(self, name: str, value) -> None:
        self.values[name] = value
        self._view.value = self._html()

    def _shown(self) -> str:
        """The text at the knobs' values, or what stopped it, said in the table's place (never raised: a drag
        or a cell's display would otherwise show a traceback, or leave the last table standing)."""
        try:
            return str(self.text())
        except RungsError as err:  # a setting the function refuses
            return f"{type(err).__name__}: {err}"
        except Exception as err:  # your function's own failure
            return (f"your function raised {type(err).__name__} at {describe(self.values)}: {err}\n"
                    f"(call panel.text({', '.join(f'{k}={v!r}' for k, v in self.values.items())}) to see its traceback)")

    def _html(self) -> str:
        return f"<pre style='font-size: 12px; line-height: 1.3'>{html.escape(self._shown())}</pre>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        # text/plain is the table: what a static view, the book and nbval show; the view is what JupyterLab draws.
        bundle = {"text/plain": repr(self)}
        try:
            view = self.widget()._repr_mimebundle_(include=include, exclude=exclude) or {}
        except KnobsUnavailable:
            return bundle
        if WIDGET_VIEW in view:
            bundle[WIDGET_VIEW] = view[WIDGET_VIEW]
        return bundle


class KnobsUnavailable(RungsError, ImportError):
    """The controls cannot be drawn (no ipywidgets): the panel still shows its text."""


def reranking(search: Callable[..., list], *, reference: dict | None = None, **knobs) -> Panel:
    """Two rankings side by side: on the left the knobs of ``reference`` held at its values, on the right
    every knob as dragged; each page on the right says how it moved (↑2, ↓1, =, new).

    ``search`` takes every knob by name and returns a ranking (hits, best first). A knob ``reference``
    does not name (a question to ask, say) moves both columns. ``reference`` defaults to every knob's
    starting value; give it the defaults and start the knobs elsewhere, and a static view shows what that
    move reshuffles.
    """
    if not callable(search):
        raise BadArgument(f"search must be a function of the knobs, not {type(search).__name__}")
    panel = Panel(lambda **now: None, **knobs)
    reference = dict(panel.values) if reference is None else reference
    if not isinstance(reference, dict) or set(reference) - set(knobs):
        raise BadArgument(f"reference must be a dict of some of the knobs ({', '.join(knobs)}) and their values, "
                          f"not {short_repr(reference)}")
    held = {name: panel.knobs[name].check(value, name) for name, value in reference.items()}

    def render(**now):
        left, right = search(**{**now, **held}), search(**now)
        return side_by_side(left, right, labels=(describe(held), describe({k: now[k] for k in held})))

    panel.render = render
    return panel
