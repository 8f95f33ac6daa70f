"""The score rows' columns, and SQLite's choice among them for one statement."""

from __future__ import annotations

import numpy as np

from council_db.contract.score_batch import ScoreColumns

SCORE_COLUMNS = ("session_id", "reviewer_id", "model_id", "position", "response_length_chars",
                 "score_value", "scale_id", "display_order", "self_review", "exclusion_id", "envelope_id", "import_id",
                 "ts_us")
SCORE_KEY = "session_id, reviewer_id, model_id, position"


# Integer columns that often hold one value in every row of a batch (its scale, whether
# positions are display slots, the import): SQLite takes such a value once, as a literal.
_LITERAL_COLUMNS = ("scale_id", "display_order", "self_review", "import_id")


def given_score_columns(columns: ScoreColumns, envelope_ids: np.ndarray | None, times: np.ndarray | None,
                        import_id: int | None) -> tuple[tuple[str, ...], list[list], tuple[tuple[str, int], ...]]:
    """SQLite: the score columns with their values, leaving out those NULL in every row (no
    exclusion, own envelope, own time or import): each bound NULL cost SQLite about a
    microsecond a row (200,000 llm-council rows: 4.7 against 2.0-2.3 us a row with three left
    out); and, apart, the integer columns holding one value in every row, which the statement
    states once instead of binding in each row (bare sqlite3, 200,000 rows, three of them: 1.9-2.2
    against 1.5-1.8 us a row)."""
    values = dict(zip(SCORE_COLUMNS, columns.as_lists()))
    if not columns.exclusion.any():
        del values["exclusion_id"]
    for name, column in (("envelope_id", envelope_ids), ("ts_us", times)):
        if column is not None and column.any():
            values[name] = [value or None for value in column.tolist()]
    literals = [(name, int(getattr(columns, name)[0])) for name in _LITERAL_COLUMNS[:-1]
                if len(columns.session_id) and _one_value(getattr(columns, name))]
    if import_id is not None:
        literals.append(("import_id", int(import_id)))
    for name, _ in literals:
        values.pop(name, None)  # import_id is not among the columns
    return tuple(values), list(values.values()), tuple(literals)


def _one_value(column: np.ndarray) -> bool:
    return bool(column.min() == column.max())
