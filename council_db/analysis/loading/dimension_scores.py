"""One dimension of a rubric in place of the overall score (``--dimension NAME``).

A window's records normally carry their ``score_value``. With a dimension, sql/report_records.sql
reads that dimension's score instead (score_dimensions, revision 0017), judged against the
record's scale as the overall score is (0 on a scale above 0: unscored; outside it: out of
scale), and a record without the dimension is left out and counted (``without_dimension``). So
every analysis that reads records runs on the dimension, unchanged. The per-session statistics
(session_stats, window_totals) sum the overall scores only: a dimension's window reads its
records, never those sums.
"""

from __future__ import annotations

from typing import Any

from council_db.contract.fields import EXCLUSION_REASONS
from council_db.errors import UsageError
from council_db.store.reading import Reader

OVERALL = {"score": "sc.score_value", "exclusion": "COALESCE(sc.exclusion_id, -1)", "dimension": ""}
WITHOUT = "without_dimension"  # the reason a record without the dimension is left out
WITHOUT_ID = 1000  # its id among the exclusion reasons a window counts (the stored ones are small)
ONE_DIMENSION = {
    "score": "COALESCE(d.score, 0.0)",
    "exclusion": (f"CASE WHEN d.score IS NULL THEN {WITHOUT_ID} WHEN d.score BETWEEN scale.low AND scale.high THEN -1 "
                  f"WHEN d.score = 0 AND scale.low > 0 THEN {EXCLUSION_REASONS['unscored'][0]} "
                  f"ELSE {EXCLUSION_REASONS['out_of_scale'][0]} END"),
    "dimension": ("\nLEFT JOIN score_dimensions AS d ON d.session_id = sc.session_id AND d.reviewer_id = sc.reviewer_id"
                  " AND d.model_id = sc.model_id AND d.position = sc.position AND d.dimension_id = :dimension_id"
                  "\nJOIN scales AS scale ON scale.id = sc.scale_id"),
}
WINDOW_DIMENSIONS = ("SELECT n.name, COUNT(*) FROM report_window AS w "
                     "JOIN score_dimensions AS d ON d.session_id = w.id "
                     "JOIN dimension_names AS n ON n.id = d.dimension_id GROUP BY n.name ORDER BY n.name")


class UnknownDimension(UsageError):
    """--dimension names a dimension the window has no score of."""

    def __init__(self, name: str, known: dict[str, int]):
        listed = ", ".join(f"{other} ({count:,} scores)" for other, count in known.items())
        super().__init__(f"--dimension {name}: no record in this window has that dimension; "
                         + (f"its dimensions: {listed}" if listed else "no record in it has named scores "
                            "(score_dimensions); leave --dimension out for the overall score"))


def score_sql(reader: Reader, dimension: str | None, window: str,
              params: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """sql/report_records.sql's {score}, {exclusion} and {dimension}, and their parameters: the
    overall score, or ``dimension``'s (UnknownDimension when no record has it). ``window``: the
    report_window CTE, with ``params``, for listing the dimensions it has."""
    if dimension is None:
        return OVERALL, {}
    found = reader.rows("SELECT id FROM dimension_names WHERE name = :name", {"name": dimension})
    if not found:
        raise UnknownDimension(dimension, window_dimensions(reader, window, params))
    return ONE_DIMENSION, {"dimension_id": found[0][0]}


def window_dimensions(reader: Reader, window: str, params: dict[str, Any]) -> dict[str, int]:
    """Each dimension the window's records have, with its number of scores, by name."""
    return {name: int(count) for name, count in reader.rows(window + WINDOW_DIMENSIONS, params)}
