"""`export --since/--until` over sessions stored about in time order reads their id range in
the primary key's order, with no sort of the window's records, and writes the same bytes."""

from __future__ import annotations

import pytest

from council_db.ingest.importer import import_files
from council_db.outlets.export import ExportFilter, ordered_queries
from tests.conftest import both_backends, session, write_jsonl
from tests.outlets.test_export_identical import exported, reference_write, varied_lines

SINCE = "2025-12-17T10:30:30Z"  # the middle of varied_lines' sessions


def _dated(name: str, day: int) -> list[dict]:
    return session(name, models=3, reviewers=2, timestamp=f"2026-01-{day:02d}T12:00:00Z")


def _store(db, tmp_path, interleaved: bool) -> None:
    """varied_lines' sessions (dated around SINCE, one undated), then ten days of sessions in
    time order, and one session of the first day stored last (or, ``interleaved``, a session
    of two sessions of an old day stored after each new one): the window's ids with others
    among them."""
    days = [_dated(f"day-{day}", day) for day in range(1, 11)]
    if interleaved:
        parts = [part for n, day in enumerate(days) for part in (day, _dated(f"old-{n}", 1), _dated(f"older-{n}", 1))]
    else:
        parts = [*days, _dated("old", 1)]
    order = [line for part in parts for line in part]
    import_files(db, [str(write_jsonl(tmp_path / "varied.jsonl", varied_lines()))])
    import_files(db, [str(write_jsonl(tmp_path / "days.jsonl", order))])


def _plan(db, filters: ExportFilter) -> tuple[str, list[str]]:
    with db.engine.connect() as connection:
        (sql, params), _, _ = ordered_queries(connection, filters)
        if db.dialect != "sqlite":
            return sql, []
        from sqlalchemy import text

        return sql, [row[-1] for row in connection.execute(text(f"EXPLAIN QUERY PLAN {sql}"), params)]


@both_backends
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_time_window_read_by_id_range_writes_what_the_dict_per_record_export_wrote(db, tmp_path, fmt):
    _store(db, tmp_path, interleaved=False)
    for filters in (ExportFilter(since=SINCE), ExportFilter(since="2026-01-05T00:00:00Z"),
                    ExportFilter(since="2026-01-02T00:00:00Z", until="2026-01-08T00:00:00Z"),
                    ExportFilter(until=SINCE), ExportFilter(since="2026-01-03T00:00:00Z", reviewer="vendor/model-1"),
                    ExportFilter(since="2030-01-01T00:00:00Z")):
        assert exported(db, filters, fmt) == reference_write(db, filters, fmt), filters


@both_backends
def test_the_records_of_a_window_stored_in_time_order_are_read_in_key_order_without_a_sort(db, tmp_path):
    _store(db, tmp_path, interleaved=False)
    sql, plan = _plan(db, ExportFilter(since="2026-01-05T00:00:00Z"))
    assert "BETWEEN :first_id AND :last_id" in sql
    assert not any("TEMP B-TREE" in step for step in plan), plan


def test_a_window_whose_ids_are_mostly_other_sessions_is_read_through_the_time_index(db, tmp_path):
    """Half the ids between its first and last are older sessions: reading them all would cost
    more than the sort, so the window is read as before, and written the same."""
    _store(db, tmp_path, interleaved=True)
    filters = ExportFilter(since="2026-01-02T00:00:00Z")
    sql, plan = _plan(db, filters)
    assert "first_id" not in sql and any("TEMP B-TREE" in step for step in plan)  # the sort the id range saves
    assert exported(db, filters, "jsonl") == reference_write(db, filters, "jsonl")
