"""Export's lines, made fast: what a session and a scale share is encoded once.

A record's line is its session's (or its own envelope's) fields, then five of its own
(reviewer, model, position, length, score), then its scale and the rest of its envelope.
So each (session, envelope, scale) gets a *frame*, the text before and after the five,
encoded with the same ``json.dumps`` or ``csv.writer`` export always used; a line is the
frame around five values. A line that does not fit the frame (position left out, a score
that is not a plain float, an unknown length, a known style, named scores or a judge's
provenance) is encoded whole, field by field, as ``export.record_dict`` says.
That keeps the output byte-identical to encoding each record as a dict (the tests compare).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Callable, Sequence

from council_db.contract.fields import (
    DEFAULT_REVIEWER_KIND,
    DIMENSIONS_FIELD,
    FIELDS,
    PROVENANCE_FIELDS,
    STYLE_FIELDS,
    UNKNOWN_LENGTH,
)
from council_db.contract.schema_versions import export_schema_version, schema_version
from council_db.spreadsheet_text import spreadsheet_text

HEAD = FIELDS[:4]  # schema_version .. consent_level: the envelope's, before the record's own
TAIL = FIELDS[9:]  # score_scale .. query_metadata
Frame = tuple[str, str, bool]  # text before, text after, whether position is a display slot here
# What json.dumps(value, ensure_ascii=False) uses, made once: dumps makes one a call otherwise.
_JSON = json.JSONEncoder(ensure_ascii=False)


def envelope_fields(key: str, envelope: Sequence, scale: str) -> dict[str, Any]:
    """The 8 fields a record shares with its envelope, as export gives them back.
    ``envelope``: timestamp, consent_level, schema_version, schema_version_raw,
    council_config_version, query_hash, query_metadata (stored JSON text)."""
    timestamp, consent, version, version_raw, config, query_hash, metadata = envelope
    return {"schema_version": export_schema_version(version, version_raw), "session_id": key,
            "timestamp": timestamp, "consent_level": consent, "score_scale": scale,
            "council_config_version": config, "query_hash": query_hash,
            "query_metadata": None if metadata is None else json.loads(metadata)}


def record_dict(shared: dict[str, Any], reviewer: str, model: str, position: Any, display_order: Any,
                length: Any, score: Any, kind: str = DEFAULT_REVIEWER_KIND, style: Sequence = (),
                dimensions: dict[str, float] | None = None, provenance: Sequence = ()) -> dict[str, Any]:
    """A record with llm-council's 13 fields in its order; position left out where the line
    gave none and the schema makes it a display slot (see export's docstring); a reviewer
    that is no judge has its ``reviewer_kind`` after them, so an import or a copy keeps it,
    and then the answer's known ``style`` (fields.STYLE_FIELDS' values, None unknown), its
    named scores (``dimensions``, fields.DIMENSIONS_FIELD) where it has any, then the judge's
    known ``provenance`` (fields.PROVENANCE_FIELDS' values; ``reviewer`` is then its model)."""
    record = {"schema_version": shared["schema_version"], "session_id": shared["session_id"],
              "timestamp": shared["timestamp"], "consent_level": shared["consent_level"],
              "reviewer_id": reviewer, "model_id": model, "position": position,
              "response_length_chars": None if length == UNKNOWN_LENGTH else length, "score_value": float(score),
              **{name: shared[name] for name in TAIL}}
    if not display_order and _slots(shared["schema_version"]):
        del record["position"]
    if kind != DEFAULT_REVIEWER_KIND:
        record["reviewer_kind"] = kind
    record.update((name, value) for name, value in zip(STYLE_FIELDS, style) if value is not None)
    if dimensions:
        record[DIMENSIONS_FIELD] = dimensions
    record.update((name, value) for name, value in zip(PROVENANCE_FIELDS, provenance) if value is not None)
    return record


def _slots(exported_version: Any) -> bool:
    return schema_version(exported_version).display_order


def _metadata_text(metadata: Any) -> str | None:
    return None if metadata is None else json.dumps(metadata)


def _cells(values: list[Any]) -> str:
    """Values as csv.writer writes them inside a row (None as empty; text a spreadsheet would
    run as a formula quoted: ``spreadsheet_text``), without the line end. A trailing empty
    cell keeps a lone empty value from being written as '""'."""
    buffer = io.StringIO()
    cells = ["" if value is None else spreadsheet_text(value) if isinstance(value, str) else value for value in values]
    csv.writer(buffer, lineterminator="\n").writerow(cells + [""])
    return buffer.getvalue()[:-2]  # the trailing cell's "," and the "\n"


class JsonLines:
    """llm-council JSONL: ``json.dumps(record, ensure_ascii=False)`` a line."""

    header = ""

    @staticmethod
    def name(text: str) -> str:
        return _JSON.encode(text)

    @staticmethod
    def frame(shared: dict[str, Any]) -> Frame:
        # json.dumps joins a dict's items with ", ", so a record's text is its halves' joined.
        head = _JSON.encode({name: shared[name] for name in HEAD})[:-1]
        tail = _JSON.encode({name: shared[name] for name in TAIL})[1:]
        return f'{head}, "reviewer_id": ', f", {tail}\n", _slots(shared["schema_version"])

    @staticmethod
    def whole(record: dict[str, Any]) -> str:
        return _JSON.encode(record) + "\n"

    @staticmethod
    def lines(rows: list[tuple], frames: dict[tuple, Frame], build: Callable[[tuple], Frame], names: dict[int, str],
              whole: Callable[[tuple], str], marked: set[int]) -> list[str]:
        """The rows' lines. rows: session_id, reviewer_id, model_id, position, display_order,
        response_length_chars, score_value, scale_id, envelope_id, styled (None: no style), the
        four style fields, then ts_us (the record's own time, revision 0018); frames: by (session_id,
        envelope_id, scale_id, ts_us), ``build`` making one missing; names: encoded, by model id;
        ``whole`` encodes a row that does not fit its frame, as is a row of a ``marked``
        reviewer (one that is no judge: its line has its kind). The hot loop: kept inline."""
        out: list[str] = []
        last: tuple = ()
        head = tail = ""
        slots = False
        for row in rows:
            session, reviewer, model, position, display, length, score, scale, envelope, styled, _, _, _, _, time = row
            if last != (session, envelope, scale, time):  # rows come in session order: a frame serves a run
                last = (session, envelope, scale, time)
                head, tail, slots = frames.get(last) or build(last)
            if ((display or not slots) and score.__class__ is float and score - score == 0.0 and length >= 0
                    and reviewer not in marked and styled is None):
                out.append(f'{head}{names[reviewer]}, "model_id": {names[model]}, "position": {position}, '
                           f'"response_length_chars": {length}, "score_value": {score!r}{tail}')
            else:
                out.append(whole(row))
        return out


class CsvLines:
    """CSV with a header of the 13 fields; query_metadata as JSON text, a missing value empty."""

    header = _cells(list(FIELDS)) + "\n"

    @staticmethod
    def name(text: str) -> str:
        return _cells([text])

    @staticmethod
    def frame(shared: dict[str, Any]) -> Frame:
        values = {**shared, "query_metadata": _metadata_text(shared["query_metadata"])}
        head = _cells([values[name] for name in HEAD])
        tail = _cells([values[name] for name in TAIL])
        return f"{head},", f",{tail}\n", _slots(shared["schema_version"])

    @staticmethod
    def whole(record: dict[str, Any]) -> str:
        values = {**record, "query_metadata": _metadata_text(record["query_metadata"])}
        return _cells([values.get(name) for name in FIELDS]) + "\n"

    @staticmethod
    def lines(rows: list[tuple], frames: dict[tuple, Frame], build: Callable[[tuple], Frame], names: dict[int, str],
              whole: Callable[[tuple], str], marked: set[int]) -> list[str]:
        """As JsonLines.lines, for CSV (whose 13 columns have neither reviewer_kind nor the style)."""
        out: list[str] = []
        last: tuple = ()
        head = tail = ""
        slots = False
        for row in rows:
            session, reviewer, model, position, display, length, score, scale, envelope, _, _, _, _, _, time = row
            if last != (session, envelope, scale, time):  # rows come in session order: a frame serves a run
                last = (session, envelope, scale, time)
                head, tail, slots = frames.get(last) or build(last)
            if ((display or not slots) and score.__class__ is float and score - score == 0.0 and length >= 0
                    and reviewer not in marked):
                out.append(f"{head}{names[reviewer]},{names[model]},{position},{length},{score!r}{tail}")
            else:
                out.append(whole(row))
        return out
