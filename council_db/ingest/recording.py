"""Recording one council session: check what the caller gave, build llm-council's records,
and store them through the same validation, normalisation and writer as ``import``, under
an ``imports`` row of kind "session" (provenance, and so ``--as-of`` reports see when).

One session is one transaction: a record that fails validation stores nothing and raises
an error naming the field, since the caller can fix its input and call again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError
from typing_extensions import Required, TypedDict

from council_db import __version__
from council_db.contract.fields import REVIEWER_KINDS
from council_db.errors import CouncilDbError
from council_db.ingest.council_records import build_records
from council_db.ingest.validation import shown, template_message
from council_db.store.database import Database

SESSION_KIND = "session"


class _Stage1(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    model: Required[str]
    response: str | None


class _ParsedRanking(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    ranking: list[str] | None
    scores: dict[str, Any] | None
    abstained: bool | None


class _Stage2(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    model: Required[str]
    parsed_ranking: _ParsedRanking | None


class SessionInput(TypedDict, total=False):
    """What ``record_session`` and ``council-db ingest`` take (the same names)."""

    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    session_id: Required[Annotated[str, StringConstraints(min_length=1, max_length=500)]]
    stage1_results: Required[list[_Stage1]]
    stage2_results: Required[list[_Stage2]]
    label_to_model: Required[dict[str, Any]]
    query: str | None
    consent_level: Annotated[int, Field(ge=0, le=4)]
    timestamp: str | None
    reviewer_kinds: dict[str, str] | None  # reviewer -> "judge", "human" or "gold" (council-db's own)


_SESSION = TypeAdapter(SessionInput)
_EXPECTED = {
    "session_id": "a non-empty string",
    "stage1_results": 'a list of {"model": ..., "response": ...} objects',
    "stage2_results": 'a list of {"model": ..., "parsed_ranking": {"ranking": [...], "scores": {...}}} objects',
    "label_to_model": 'an object such as {"Response A": {"model": "m", "display_index": 0}} or {"Response A": "m"}',
    "query": "a string or null",
    "consent_level": "an integer 0-4",
    "timestamp": 'an ISO-8601 time such as "2025-12-17T10:30:00Z", or null for now',
    "reviewer_kinds": 'an object such as {"expert_1": "human"}: a reviewer\'s kind, "judge", "human" or "gold"',
}


@dataclass
class Recorded:
    """What one ``record_session`` did."""

    session_id: str
    records: list[dict[str, Any]] = field(default_factory=list)  # as llm-council would write them
    inserted: int = 0
    duplicates: int = 0
    skipped: int = 0  # consent level 0: nothing is kept
    excluded: int = 0  # stored, but out of scale (e.g. 0.0, "ranked but never scored")
    warnings: list[str] = field(default_factory=list)
    import_id: int | None = None


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def check_session(data: Any) -> SessionInput:
    """The session input, or a CouncilDbError naming the field and what was expected."""
    try:
        checked = _SESSION.validate_python(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = _path(first["loc"])
        top = first["loc"][0] if first["loc"] else None
        if first["type"] == "missing":
            raise CouncilDbError(f"{where}: missing; expected {_EXPECTED.get(top, 'a value')}") from None
        if not first["loc"]:
            raise CouncilDbError("a session must be one JSON object with session_id, stage1_results, "
                                 "stage2_results and label_to_model") from None
        raise CouncilDbError(f"{where}: got {shown(first.get('input'))}: {template_message(first)}"
                             + (f"; expected {_EXPECTED[top]}" if top in _EXPECTED and where == top else "")) from None
    for label, value in checked["label_to_model"].items():
        _check_label(label, value)
    for reviewer, kind in (checked.get("reviewer_kinds") or {}).items():
        if kind not in REVIEWER_KINDS:
            raise CouncilDbError(f"reviewer_kinds[{json.dumps(reviewer)}]: got {shown(kind)}; expected "
                                 '"judge", "human" or "gold"')
    return checked


def _check_label(label: str, value: Any) -> None:
    where = f"label_to_model[{json.dumps(label)}]"
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, dict):
        raise CouncilDbError(f"{where}: got {shown(value)}; expected a model id or "
                             '{"model": ..., "display_index": N}')
    if not isinstance(value.get("model"), (str, type(None))):
        raise CouncilDbError(f"{where}.model: got {shown(value.get('model'))}; expected a model id string")
    index = value.get("display_index")
    if index is not None and (type(index) is not int or not 0 <= index <= 1000):
        raise CouncilDbError(f"{where}.display_index: got {shown(index)}; expected an integer >= 0 "
                             "(the slot the answer was shown in, 0 = first)")


def record(db: Database, session: Any, *, source: str, secret_loader=None) -> Recorded:
    """Check, build and store one session. ``secret_loader`` gives the query-hash key (None:
    none configured, so no hash); it is asked only when a query must be hashed (consent level 4)."""
    from council_db.contract.query_hash import load_secret, query_hash

    checked = check_session(session)
    loader = secret_loader or load_secret

    def hasher(query: str) -> str | None:
        secret = loader()
        return None if secret is None else query_hash(query, secret)

    built = build_records(
        checked["session_id"], checked["stage1_results"], checked["stage2_results"], checked["label_to_model"],
        query=checked.get("query"), consent_level=checked.get("consent_level", 1),
        timestamp=checked.get("timestamp"), query_hasher=hasher,
    )
    result = Recorded(checked["session_id"], built.records, warnings=built.warnings)
    _state_kinds(result, checked.get("reviewer_kinds") or {})
    _store(db, result, source)
    return result


def _state_kinds(result: Recorded, kinds: dict[str, str]) -> None:
    """Each named reviewer's kind on its records (the writer stores it per reviewer); a name
    that gave no record is a warning, as it may be a typo."""
    reviewers = {record["reviewer_id"] for record in result.records}
    for record in result.records:
        if record["reviewer_id"] in kinds:
            record["reviewer_kind"] = kinds[record["reviewer_id"]]
    result.warnings += [f"session {result.session_id}: reviewer_kinds names {name}, which gave no record in it"
                        for name in kinds if name not in reviewers]


def _normalise(records: list[dict[str, Any]]):
    """The import's own path: JSON lines -> batch validation -> normalisation."""
    from council_db.ingest.lines import LineBatch
    from council_db.ingest.normalise import Normaliser

    batch = LineBatch(1, [json.dumps(r, ensure_ascii=False).encode() for r in records], 0)
    normalised = Normaliser().normalise(batch)
    if normalised.rejected:
        bad = normalised.rejected[0]
        rec = records[bad.line_number - 1]
        raise CouncilDbError(f"the record of reviewer {rec['reviewer_id']} for {rec['model_id']} is not valid: "
                             f"{bad.reason}; nothing was stored")
    return normalised


def _store(db: Database, result: Recorded, source: str) -> None:
    from sqlalchemy import insert, update

    from council_db.ingest.importer import now_utc
    from council_db.store.models import Import
    from council_db.store.writer import ScoreWriter

    normalised = _normalise(result.records)
    imports = Import.__table__
    with db.writer() as connection:
        result.import_id = connection.execute(insert(imports).values(
            source=source, source_kind=SESSION_KIND, mode="full", start_offset=0, end_offset=0, start_line=0,
            end_line=len(result.records), inserted=0, duplicates=0, rejected=0, skipped=0, status="running",
            started_at=now_utc(), council_db_version=__version__,
        )).inserted_primary_key[0]
        writer = ScoreWriter(connection)
        result.inserted = writer.write(normalised.rows, result.import_id)
        result.warnings += [f"reviewer {change['reviewer']} was stored as {change['was']} and is now "
                            f"{change['now']}, as this session says" for change in writer.remarked]
        result.duplicates = len(normalised.rows) - result.inserted
        result.skipped, result.excluded = normalised.skipped, normalised.excluded
        connection.execute(update(imports).where(imports.c.id == result.import_id).values(
            inserted=result.inserted, duplicates=result.duplicates, skipped=result.skipped,
            status="complete", finished_at=now_utc()))
        connection.commit()
