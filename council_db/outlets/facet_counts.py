"""Records counted per reviewer, candidate or scale from the day totals: the facets of the
record views without reading the records.

A facet on reviewer over score_records groups every record: 6-9 s at a million sessions,
where Datasette gives a facet 200 ms. pair_day_totals counts the usable scores per (day,
reviewer, candidate, scale), and the partial index ix_scores_excluded (revision 0011) holds
the excluded ones, so the same counts are a sum over a few thousand rows. score_records and
scores show every record; within_session_scores the usable ones only. A filter is answered
when it is equality on a column these counts carry; anything else is the caller's to count.
"""

from __future__ import annotations

from dataclasses import dataclass

# A column of the counts, as each relation names it: the name of its model or scale, or its id.
_NAMES = {"reviewer": "reviewer.name", "model": "candidate.name", "score_scale": "scale.name"}
_IDS = {"reviewer_id": "t.reviewer_id", "model_id": "t.model_id", "scale_id": "t.scale_id"}
SQLITE_MAX_INTEGER = 2**63 - 1


@dataclass(frozen=True)
class Counted:
    """A relation whose rows the day totals count: its countable columns and whether it shows
    excluded scores."""

    columns: dict[str, str]
    with_excluded: bool

    def counts(self, column: str, filters: dict[str, str | int], limit: int | None) -> tuple[str, dict[str, object]]:
        """SQL and parameters of (value, count) for ``column`` under equality ``filters``,
        largest count first, as Datasette orders a facet; every value when ``limit`` is None."""
        usable = "SELECT reviewer_id, model_id, scale_id, records FROM pair_day_totals"
        excluded = ("SELECT reviewer_id, model_id, scale_id, COUNT(*) FROM scores WHERE exclusion_id IS NOT NULL "
                    "GROUP BY reviewer_id, model_id, scale_id")
        rows = f"{usable} UNION ALL {excluded}" if self.with_excluded else usable
        where = " AND ".join(f"{self.columns[name]} = :f{i}" for i, name in enumerate(filters)) or "1"
        sql = (f"SELECT {self.columns[column]} AS value, SUM(t.records) AS count FROM ({rows}) AS t "
               "JOIN models AS reviewer ON reviewer.id = t.reviewer_id "
               "JOIN models AS candidate ON candidate.id = t.model_id "
               "JOIN scales AS scale ON scale.id = t.scale_id "
               f"WHERE {where} GROUP BY value HAVING SUM(t.records) > 0 ORDER BY count DESC, value LIMIT :limit")
        values = {f"f{i}": value for i, value in enumerate(filters.values())}
        return sql, {**values, "limit": -1 if limit is None else limit}

    def filter_value(self, column: str, value: str) -> str | int | None:
        """The value to compare ``column`` with, or None when it cannot be compared here: an id
        that is not a whole number of ASCII digits SQLite can hold (Datasette then counts it,
        comparing the text as its rows do)."""
        if column not in _IDS:
            return value
        number = int(value) if value.isascii() and value.isdigit() else None
        return number if number is not None and number <= SQLITE_MAX_INTEGER else None


COUNTED = {
    "score_records": Counted(_NAMES, with_excluded=True),
    "within_session_scores": Counted(_NAMES, with_excluded=False),
    "scores": Counted(_IDS, with_excluded=True),
}
