"""What a value of a row becomes in a record, role by role (formats/table_rows.py reads the
rows): a name, a score, a display slot or length, a time, a reviewer's kind, a category, an
answer's length. Each converter takes the column (or path) the value came from, to name it in
the LineError of a value that cannot be what its role needs; none quotes the value, which may
be anything. A batch's column is converted in one pass where its values are plainly fine
(``whole_column``), else value by value.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable

from council_db.contract.fields import METADATA_VALUE_MAX_CHARS, REVIEWER_KINDS, LineError
from council_db.contract.timestamps import timestamp_us
from council_db.ingest.formats.judge_lines import iso_time

MAX_COUNT = 2**31 - 1  # a display slot or a length, as the record holds it


def plain(number: float) -> str:
    """A number as a scale writes it: no exponent, no trailing zeros."""
    return format(number, "f").rstrip("0").rstrip(".") or "0"


def name(column: str, value: Any) -> str:
    """A session, candidate or reviewer: text, or a number written as text."""
    if type(value) is str and value:
        return value
    if isinstance(value, bool) or value is None or value == "":
        raise LineError(column, f"{'empty' if value in (None, '') else 'true or false'}; every row needs one "
                                "(a name or an id)")
    if isinstance(value, (int, float)):
        return str(value)
    raise LineError(column, f"got {_kind_of(value)}; expected a name or an id")


def score(column: str, value: Any) -> float:
    """A score: a finite number (text of one in a CSV)."""
    number = _number(column, value, "the score as a number, e.g. 7 or 0.5")
    if number is None:
        raise LineError(column, "empty; every row needs its score (a number, e.g. 7 or 0.5)")
    return number


def count(column: str, value: Any) -> int | None:
    """A display slot or a length: a whole number from 0; None when not given."""
    number = _number(column, value, "a whole number from 0")
    if number is None:
        return None
    if number < 0 or number != int(number) or number > MAX_COUNT:
        raise LineError(column, f"{plain(number)} is not a whole number from 0 to {MAX_COUNT:,}")
    return int(number)


def time_of(column: str, value: Any) -> str | None:
    """An ISO-8601 time, or the seconds since 1970 (as an ISO-8601 time); None when not given."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise LineError(column, f"got {_kind_of(value)}; expected an ISO-8601 time or the seconds since 1970")
    try:
        return _time_text(value)
    except LineError as error:
        raise LineError(column, error.problem) from None


@lru_cache(maxsize=65_536)
def _time_text(value: str | int | float) -> str:
    """A time as a record stores it; cached, as a session's rows mostly share their time."""
    try:
        seconds = float(value)
    except ValueError:
        timestamp_us(str(value))  # a LineError when it is no ISO-8601 time either
        return str(value)
    if not math.isfinite(seconds) or not 0 <= seconds < 253_402_300_800:
        raise LineError(None, f"{seconds:g} seconds since 1970 is outside years 1970-9999; expected an ISO-8601 "
                              "time or the seconds since 1970")
    return iso_time("time", seconds)


def kind(column: str, value: Any) -> str | None:
    """The reviewer's kind as the row states it; None when it does not."""
    if value is None or value == "":
        return None
    if value not in REVIEWER_KINDS:
        raise LineError(column, f"not a reviewer kind; expected one of {', '.join(REVIEWER_KINDS)}")
    return value


def category(column: str, value: Any) -> dict[str, str] | None:
    """The session's category, as query_metadata holds it; None when not given."""
    found = _text(column, value)
    if found is not None and len(found) > METADATA_VALUE_MAX_CHARS:
        raise LineError(column, f"has {len(found):,} characters; at most {METADATA_VALUE_MAX_CHARS} are kept (a "
                                "category is a word or two)")
    return None if found is None else {"category": found}


def text_length(column: str, value: Any) -> int | None:
    """The characters of an answer's text (the text itself is not kept); None when not given."""
    found = _text(column, value)
    return None if found is None else len(found)


def _text(column: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if type(value) is not str:
        raise LineError(column, f"got {_kind_of(value)}; expected text")
    return value


def _number(column: str, value: Any, expected: str) -> float | None:
    """A finite number from a JSON number or its text; None when empty."""
    if value is None or value == "":
        return None
    if type(value) is str:
        try:
            value = float(value)
        except ValueError:
            raise LineError(column, f"a text of {len(value):,} characters that is no number; expected "
                                    f"{expected}") from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LineError(column, f"got {_kind_of(value)}; expected {expected}")
    if not math.isfinite(value):
        raise LineError(column, f"not a finite number; expected {expected}")
    return float(value)


def whole_column(column: str, convert: Callable[[str, Any], Any], values: list) -> list:
    """A column's values converted, in one pass for the common cases (names, numbers, times,
    categories and answers as text; numbers of JSON); else value by value, raising LineError
    at the first bad one."""
    whole = _AT_ONCE.get(convert)
    found = None if whole is None else whole(values)
    return [convert(column, value) for value in values] if found is None else found


def _texts(values: list) -> bool:
    """Every value is text, none empty."""
    return all([type(value) is str and value for value in values])


def _names(values: list) -> list | None:
    return values if _texts(values) else None


def _scores(values: list) -> list | None:
    if any([type(value) is bool for value in values]):
        return None
    try:
        numbers = list(map(float, values))
    except (TypeError, ValueError):
        return None
    return numbers if all(map(math.isfinite, numbers)) else None


def _counts(values: list) -> list | None:
    if not all([type(value) is str or type(value) is int for value in values]):  # no bool, no 3.7 cut to 3
        return None
    try:
        numbers = list(map(int, values))
    except ValueError:
        return None
    return numbers if numbers and 0 <= min(numbers) and max(numbers) <= MAX_COUNT else None


def _times(values: list) -> list | None:
    if not _texts(values):
        return None
    try:
        return list(map(_time_text, values))
    except LineError:
        return None


def _categories(values: list) -> list | None:
    if not _texts(values) or max(map(len, values)) > METADATA_VALUE_MAX_CHARS:
        return None
    held = {value: {"category": value} for value in set(values)}
    return [held[value] for value in values]


def _lengths(values: list) -> list | None:
    return list(map(len, values)) if _texts(values) else None


# Each role's record field, and how a row's value becomes that field's value
ROLE_FIELDS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "session": ("session_id", name), "candidate": ("model_id", name), "reviewer": ("reviewer_id", name),
    "score": ("score_value", score), "position": ("position", count), "length": ("response_length_chars", count),
    "answer_text": ("response_length_chars", text_length), "time": ("timestamp", time_of),
    "reviewer_kind": ("reviewer_kind", kind), "category": ("query_metadata", category),
}
_AT_ONCE: dict[Callable, Callable[[list], list | None]] = {
    name: _names, score: _scores, count: _counts, time_of: _times, category: _categories, text_length: _lengths}


def _kind_of(value: Any) -> str:
    """A JSON value's type in words, never the value (it may be anything)."""
    return {bool: "true or false", dict: "an object", list: "a list", str: "text", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)
