"""council-db ingest: record one council session from a JSON file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import SUMMARY, Json, chosen, format_option
from council_db.errors import CouncilDbError
from council_db.text_values import printable_path


def _read(name: str) -> Any:
    if name == "-":
        text, where = sys.stdin.read(), "stdin"
    else:
        path, where = Path(name).expanduser(), printable_path(name)
        if not path.is_file():
            raise CouncilDbError(f"{where}: no such file (give a session JSON file, or - for stdin)")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise CouncilDbError(f"{where}: not UTF-8 text (byte {error.start}); a session file is UTF-8 "
                                 "JSON") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CouncilDbError(f"{where}: not valid JSON at line {error.lineno}, column {error.colno}: {error.msg}; "
                             "the file must hold one JSON object") from None


def ingest(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A session JSON file (- reads stdin).")],
    fmt: Annotated[Optional[str], format_option(
        *SUMMARY, help="json also prints the records and counts on stdout.")] = None,
    as_json: Json = False,
) -> None:
    """Record one council session from its JSON.

    The JSON holds session_id, stage1_results, stage2_results, label_to_model, and optionally
    query, consent_level, timestamp. Stores exactly the records llm-council
    would write for it (the query itself never); recording it again adds nothing."""
    from council_db.ingest.recording import check_session, record

    fmt = chosen(SUMMARY, fmt, json=as_json)
    data = _read(file)
    source = file if file == "-" else printable_path(str(Path(file).resolve()))
    try:
        check_session(data)  # before the database is opened (or created) for nothing
        result = record(state(ctx).database(), data, source=source)
    except CouncilDbError as error:
        raise CouncilDbError(f"{printable_path(file)}: {error}") from None
    for warning in result.warnings:
        message(f"warning: {warning}")
    skipped = f", {result.skipped:,} skipped (consent level 0)" if result.skipped else ""
    from council_db.counted_text import counted

    message(f"session {result.session_id}: {counted(len(result.records), 'record')}, {result.inserted:,} new, "
            f"{result.duplicates:,} already stored{skipped}")
    if fmt == "json":
        summary = {k: getattr(result, k) for k in ("session_id", "inserted", "duplicates", "skipped", "excluded",
                                                   "warnings", "records")}
        print(json.dumps(summary, indent=2))
