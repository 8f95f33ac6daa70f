"""The report contract's base shapes, which every part of it builds on: a part (``Contract``)
and a figure (``Metric``). model.py assembles the report from them; contracts kept in their
own modules (pairwise_model) import them from here, not from model.py, which imports those."""

from __future__ import annotations

from typing import Literal

import msgspec

Tier = Literal["insufficient", "preliminary", "moderate", "high"]


class Contract(msgspec.Struct, kw_only=True):
    """A part of the report: keyword fields (every subclass says so again: msgspec does not
    inherit it), in the JSON in the order they are declared."""


class Metric(Contract, kw_only=True):
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_sessions: int
    n_records: int
    confidence: Tier
    p_value: float | None = None
