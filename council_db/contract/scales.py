"""Score scales ("1-10", "0-1", ...): a score outside its scale, or llm-council's 0 for "ranked
but never scored", is kept but excluded from analyses, with its reason."""

from __future__ import annotations

import re

import msgspec

from council_db.contract.fields import EXCLUSION_REASONS, LineError


class ScoreScale(msgspec.Struct, frozen=True):
    name: str
    low: float
    high: float

    def exclusion(self, score: float) -> int | None:
        """Why a score is left out of analyses (a reason id), or None when it is usable."""
        if self.low <= score <= self.high:
            return None
        if score == 0 and self.low > 0:
            return EXCLUSION_REASONS["unscored"][0]
        return EXCLUSION_REASONS["out_of_scale"][0]


_SCALE = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*")


def score_scale(name: str) -> ScoreScale:
    match = _SCALE.fullmatch(name)
    if not match or float(match[1]) >= float(match[2]):
        raise LineError("score_scale", f"a string of {len(name):,} characters that is not a range LOW-HIGH "
                                       'such as "1-10"')
    return ScoreScale(name, float(match[1]), float(match[2]))
