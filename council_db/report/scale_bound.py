"""No finding larger than the scale: an effect in score points beyond the scale's whole range
(high - low) is more than any judge's bias can move a score, so it says the data cannot
support the figure (a slope through one far instant, an extrapolation), not that a judge is
biased. Such an effect is shown where its section lists it, never tested or flagged, and a
warning says why (one rule for every flag stated in points)."""

from __future__ import annotations

from council_db.contract.fields import LineError
from council_db.contract.scales import score_scale


def scale_span(scale: str) -> float | None:
    """The scale's whole range in points (None when its name is not a LOW-HIGH range)."""
    try:
        found = score_scale(scale)
    except LineError:
        return None
    return found.high - found.low


def beyond_scale(points: float, scale: str, what: str) -> str | None:
    """None when ``points`` fits in the scale's range; else the warning for ``what`` (the
    effect, in words), which is then not tested."""
    span = scale_span(scale)
    if span is None or abs(points) <= span:
        return None
    return (f"{what} is not tested: {points:+.2f} points is more than the whole {scale} scale ({span:g} points), "
            "a figure the data cannot support")
