"""Schema versions of the llm-council record: which 1.x version a line declares, and whether
its ``position`` is a display slot (only from 1.2.0 on; before, it held a ranking index)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from council_db.contract.fields import LineError


@dataclass(frozen=True)
class SchemaVersion:
    normalised: str  # "1.2.0"
    raw_literal: str | None  # the JSON literal when it differs from `normalised`
    display_order: bool  # position means display slot only from 1.2.0 on


def schema_version(value: int | str | None) -> SchemaVersion:
    """Integer 1, "1", "1.2", "1.2.0" and missing all name a 1.x version; 2.x is refused."""
    return _schema_version(type(value), value)


@lru_cache(maxsize=256)
def _schema_version(_kind: type, value: int | str | None) -> SchemaVersion:
    """Cached per value and type (1 and "1" are kept apart: their raw literals differ)."""
    if value is None:
        parts = [1, 0, 0]
    else:
        text = str(value).strip()
        if not re.fullmatch(r"\d+(\.\d+){0,2}", text):
            raise LineError("schema_version", f"{_described(value)} is not a version such as \"1.2.0\"")
        parts = [int(p) for p in text.split(".")] + [0, 0]
        parts = parts[:3]
    if parts[0] != 1:
        raise LineError("schema_version", f"{'.'.join(map(str, parts))} is newer than this council-db "
                                          "understands (1.x); upgrade council-db")
    normalised = ".".join(map(str, parts))
    raw = None if value is None or value == normalised else json.dumps(value)
    return SchemaVersion(normalised, raw, tuple(parts) >= (1, 2, 0))


def _described(value: int | str) -> str:
    """An integer as it is; a string by its length only, as it may be anything."""
    return str(value) if isinstance(value, int) else f"a string of {len(value):,} characters"


def export_schema_version(normalised: str, raw_literal: str | None) -> Any:
    """The schema_version value as it was imported (an absent one comes back as "1.0.0")."""
    return json.loads(raw_literal) if raw_literal is not None else normalised
