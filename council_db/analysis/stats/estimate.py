"""The one result shape every estimator here returns, so the report can print any of them
the same way: a point estimate, its confidence interval, and how it was had."""

from __future__ import annotations

import math

import msgspec


class Estimate(msgspec.Struct, frozen=True):
    """A point estimate with its confidence interval.

    Missing values follow one rule: ``estimate``, ``ci_low`` and ``ci_high`` are ``math.nan``
    when the data cannot give them (too few sessions, no variation); ``se`` and ``p_value``
    are ``None`` when the method does not produce one, and ``math.nan`` when it does but the
    data cannot give it. ``n_sessions`` is the number of independent units (sessions) the
    estimate rests on, which is what its precision depends on, not the record count.
    """

    estimate: float
    ci_low: float
    ci_high: float
    se: float | None = None
    p_value: float | None = None
    level: float = 0.95
    n_sessions: int | None = None
    method: str = ""

    @property
    def computable(self) -> bool:
        """True when there is a point estimate at all."""
        return math.isfinite(self.estimate)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.ci_low) and math.isfinite(self.ci_high)

    def covers(self, value: float) -> bool:
        """True when ``value`` lies in the closed interval (False when there is no interval)."""
        return self.has_interval and self.ci_low <= value <= self.ci_high

    @classmethod
    def missing(cls, method: str = "", n_sessions: int | None = None, level: float = 0.95,
                estimate: float = math.nan, se: float | None = math.nan,
                p_value: float | None = math.nan) -> Estimate:
        """An estimate the data cannot give (or give an interval for)."""
        return cls(estimate, math.nan, math.nan, se, p_value, level, n_sessions, method)
