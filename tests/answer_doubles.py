"""The answer contract's model double, from its home in the package (``rungs.grounding.doubles``)."""

from rungs.grounding.doubles import BEHAVIOURS, PLANTED, Behaving

__all__ = ["BEHAVIOURS", "PLANTED", "Behaving"]
