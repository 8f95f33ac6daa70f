"""SQL conditions shared by the commands that select sessions (export, bias-report)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from council_db.contract.fields import LineError
from council_db.contract.timestamps import MAX_US, MIN_US, timestamp_us

# A stored time is read only if it is none or in years 0001-9999 UTC: the import refuses
# anything else, but a value written by hand (sqlite3, Datasette, psql) or by an older
# version may be outside, or on SQLite even text (which sorts after every number).
# COALESCE, not "IS NULL OR": an OR would stop `--sessions N` reading the ts_us index in order.
READABLE_TIME = f"COALESCE(s.ts_us, 0) BETWEEN {MIN_US} AND {MAX_US}"
UNREADABLE_TIME = f"(s.ts_us < {MIN_US} OR s.ts_us > {MAX_US})"
# A record's own consent level: its envelope's where it differs from its session's (whose
# envelope is the first record's). Needs sessions AS s and record_envelopes AS e left-joined.
RECORD_CONSENT = "COALESCE(e.consent_level, s.consent_level)"


def record_filters(reviewers: Sequence[str], models: Sequence[str], imported_by: datetime | None) -> dict[str, Any]:
    """The parameters of the record conditions sql/report_records.sql and sql/audit_records.sql
    share: only these reviewers' and models' records when named, only what imports started by
    ``imported_by`` (--as-of) stored when given."""
    return dict(all_reviewers=not reviewers, reviewers=list(reviewers), all_models=not models, models=list(models),
                every_import=imported_by is None, imported_by=imported_by)


def time_range(since: str | None, until: str | None) -> tuple[list[str], dict[str, Any]]:
    """Conditions on sessions (alias ``s``) for [since, until): instants, not strings, are
    compared, so "12:00+02:00" comes before "11:00Z"; a time that cannot be read is in no
    range. Raises LineError for a bad time, and for a range that cannot hold anything (it
    is a mistake, not a question)."""
    clauses, params = [], {}
    if since:
        clauses.append(f"s.ts_us >= :since AND s.ts_us <= {MAX_US}")
        params["since"] = timestamp_us(since)
    if until:
        clauses.append(f"s.ts_us < :until AND s.ts_us >= {MIN_US}")
        params["until"] = timestamp_us(until)
    if since and until and None not in (params["since"], params["until"]) and params["since"] >= params["until"]:
        raise LineError(None, f"--since {since} is not before --until {until}, so nothing could match")
    return clauses, params
