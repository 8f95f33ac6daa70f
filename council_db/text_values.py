"""The small values users type on a command line or in a config: name lists, NAME=NUMBER
maps, numbers and UTC dates. Errors say what was expected, with an example."""

from __future__ import annotations

import math
import os
from datetime import datetime, timezone


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def parse_names(text: str) -> list[str]:
    """Parse "a,b,c" into ids (blanks dropped)."""
    return _items(text)


def parse_mapping(text: str) -> dict[str, float]:
    """Parse "a=0.5,b=-1" into {"a": 0.5, "b": -1.0}."""
    result: dict[str, float] = {}
    for item in _items(text):
        name, sep, value = item.rpartition("=")
        name = name.strip()
        try:
            if not sep or not name:
                raise ValueError(item)
            number = _finite(value)
        except ValueError:
            raise ValueError(
                f"bad item {item!r}: expected NAME=NUMBER pairs separated by commas, "
                "e.g. openai/gpt-4o=0.5,google/gemini-1.5-pro=-0.3"
            ) from None
        if name in result:
            raise ValueError(f"{name!r} is given twice: expected each NAME once")
        result[name] = number
    return result


def parse_floats(text: str) -> list[float]:
    """Parse "0.3,0,-0.2" into [0.3, 0.0, -0.2]."""
    values = []
    for item in _items(text):
        try:
            values.append(_finite(item))
        except ValueError:
            raise ValueError(
                f"bad number {item!r}: expected numbers separated by commas, e.g. 0.3,0,-0.2"
            ) from None
    return values


def parse_utc_datetime(text: str) -> datetime:
    """Parse an ISO date or date-time; one without a zone is taken as UTC."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"bad date/time {text!r}: expected ISO 8601, e.g. 2025-12-17 or 2025-12-17T10:30:00+00:00"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-14:00 is in year 10000 in UTC
        raise ValueError(f"date/time {text!r} is outside years 0001-9999 in UTC; "
                         "write the time in UTC within years 0001-9999") from None


def printable_path(name: str) -> str:
    """A file name as text that can be printed and stored: bytes that are not UTF-8 (Python
    keeps them as surrogates) are shown as \\xNN, so caf\\xe9.jsonl is read, not refused."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")
