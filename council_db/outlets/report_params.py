"""The window of a bias report asked for in a URL's query string (the Datasette plugin's
/<database>/-/bias-report?days=30&reviewer=...): the CLI's window options under the same names
and rules, each bad value refused with one line that names it and shows a good one."""

from __future__ import annotations

import math
from typing import Any

from council_db.analysis.loading.window import Window
from council_db.contract.fields import LineError
from council_db.contract.timestamps import timestamp_us

NUMBERS = {"sessions": "a whole number of at least 1, e.g. sessions=500",
           "days": "a number of at least 0, e.g. days=30"}
TIMES = ("since", "until", "as_of")
LISTS = {"reviewer": "reviewers", "model": "models", "config_version": "config_versions", "category": "categories"}
TEXTS = ("dimension",)  # a rubric dimension's scores in place of the overall ones (--dimension)
KNOWN = (*NUMBERS, *TIMES, *LISTS, *TEXTS)


class BadParameter(ValueError):
    """A query parameter that cannot be used; its message is the one line the page shows."""


def window_from_query(query: dict[str, list[str]]) -> tuple[Window, dict[str, Any]]:
    """The Window and the report's filters (as the CLI states them) for a query string given as
    name -> values. A blank value counts as not given (an empty form field)."""
    given = {name: [v for v in values if v.strip()] for name, values in query.items()}
    given = {name: values for name, values in given.items() if values}
    unknown = sorted(set(given) - set(KNOWN))
    if unknown:
        raise BadParameter(f"unknown parameter {unknown[0]!r}: the report takes {', '.join(KNOWN)}")
    single = {}
    for name in (*NUMBERS, *TIMES, *TEXTS):
        if name in given:
            if len(given[name]) > 1:
                raise BadParameter(f"{name} is given {len(given[name])} times: give it once")
            single[name] = given[name][0].strip()
    sessions = _number("sessions", single.get("sessions"), int, minimum=1)
    days = _number("days", single.get("days"), float, minimum=0)
    for name in TIMES:
        _time(name, single.get(name))
    lists = {field: [v.strip() for v in given.get(name, [])] for name, field in LISTS.items()}
    window = Window(sessions=sessions, days=days, since=single.get("since"), until=single.get("until"),
                    as_of=single.get("as_of"), dimension=single.get("dimension"), **lists)
    try:
        window.session_query()  # the same check the CLI makes: e.g. since not before until
    except LineError as error:
        raise BadParameter(error.problem.replace("--since ", "since=").replace("--until ", "until=")) from None
    filters = {name: value for name, value in dict(sessions=sessions, days=days, since=window.since, until=window.until,
                                                   **{name: lists[field] for name, field in LISTS.items()}).items()
               if value}
    return window, filters


def _number(name: str, text: str | None, kind: type, *, minimum: float) -> Any:
    if text is None:
        return None
    try:
        value = kind(text)
        if not math.isfinite(value) or value < minimum:
            raise ValueError(text)
    except ValueError:
        raise BadParameter(f"{name}={text!r} is not {NUMBERS[name]}") from None
    return value


def _time(name: str, text: str | None) -> None:
    try:
        timestamp_us(text)
    except LineError:
        raise BadParameter(f"{name}={text!r} is not an ISO-8601 time: give e.g. {name}=2025-12-17 "
                           f"or {name}=2025-12-17T10:30:00Z") from None
