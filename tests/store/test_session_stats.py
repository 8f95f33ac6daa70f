"""Per-session sufficient statistics: kept right at import, rebuilt by the migration, and
giving the report the same numbers as reading every record."""

from __future__ import annotations

import json
import math

import pytest
from sqlalchemy import text

from council_db.analysis.loading.window import SAMPLE_SESSIONS, Window, load_for_report
from council_db.report.builder import build
from council_db.report.model import to_builtins
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store import migrate
from tests.conftest import both_backends, session
from tests.conftest import write_jsonl as write_lines

STATS_COLUMNS = ("records, usable, unscored, out_of_scale, score_sum, score_sq_sum, length_sum, length_sq_sum, "
                 "length_score_sum, answers, answer_sxx, answer_syy, answer_sxy, answer_z")


def stats_rows(db) -> dict[tuple[int, int], tuple]:
    with db.engine.connect() as connection:
        rows = connection.execute(text(f"SELECT session_id, scale_id, {STATS_COLUMNS} FROM session_stats"))
        return {(row[0], row[1]): tuple(row[2:]) for row in rows}


def recomputed(db) -> dict[tuple[int, int], tuple]:
    """What sql/session_stats.sql gives when run afresh over every session."""
    from council_db.store.session_stats import refresh

    with db.engine.begin() as connection:
        ids = {row[0] for row in connection.execute(text("SELECT id FROM sessions"))}
        refresh(connection, ids)
    return stats_rows(db)


def assert_same(found: dict, expected: dict) -> None:
    assert found.keys() == expected.keys()
    for key, row in expected.items():
        assert found[key] == pytest.approx(row, abs=1e-9), key


def simulated(path, sessions: int = 120, **options):
    with path.open("w") as out:
        write_jsonl(SimulationConfig(sessions=sessions, seed=5, days=100, **options), out)
    return path


@both_backends
def test_a_session_imported_in_two_parts_has_the_statistics_of_the_whole(cli, db, tmp_path):
    lines = session("s-1") + session("s-2")
    first, second = lines[:10], lines[10:]
    second[0] = dict(second[0], score_value=0.0)  # unscored: kept, left out of the sums
    assert cli("import", str(write_lines(tmp_path / "a.jsonl", first))).exit_code == 0
    assert cli("import", str(write_lines(tmp_path / "b.jsonl", second))).exit_code == 0

    found = stats_rows(db)
    assert sum(row[0] for row in found.values()) == 32
    assert sum(row[2] for row in found.values()) == 1  # the unscored record
    assert_same(found, recomputed(db))


@both_backends
def test_reimporting_a_file_leaves_the_statistics_unchanged(cli, db, tmp_path):
    path = simulated(tmp_path / "in.jsonl", sessions=30)
    cli("import", str(path))
    before = stats_rows(db)
    cli("import", "--full", str(path))
    assert stats_rows(db) == before


@both_backends
def test_the_migration_builds_the_same_statistics_for_an_older_database(cli, db, tmp_path):
    cli("import", str(simulated(tmp_path / "in.jsonl", sessions=40, unscored_rate=0.05)))
    at_import = stats_rows(db)
    migrate.downgrade(db.engine, "0003")
    migrate.upgrade(db.engine, "head")
    assert_same(stats_rows(db), at_import)


@both_backends
def test_a_file_mixing_stored_and_new_sessions_adds_only_the_new_with_the_statistics_of_the_whole(cli, db, tmp_path):
    cli("import", str(write_lines(tmp_path / "a.jsonl", session("s-1") + session("s-2"))))
    extra = dict(session("s-2")[0], reviewer_id="vendor/extra")
    later = dict(session("s-1")[0], position=3, model_id="vendor/late", timestamp="2025-12-18T09:00:00Z")
    mixed = session("s-2")[:4] + [extra] + session("s-3") + [later]
    result = cli("import", "--format", "json", str(write_lines(tmp_path / "b.jsonl", mixed)))

    summary = json.loads(result.stdout)
    assert (summary["inserted"], summary["duplicates"]) == (1 + 16 + 1, 4)
    with db.engine.connect() as connection:
        keys = [row[0] for row in connection.execute(text("SELECT session_key FROM sessions ORDER BY id"))]
        own_envelopes = connection.execute(text("SELECT COUNT(*) FROM scores WHERE envelope_id IS NOT NULL")).scalar()
    assert keys == ["s-1", "s-2", "s-3"]
    assert own_envelopes == 1  # the later record keeps its own timestamp
    assert_same(stats_rows(db), recomputed(db))


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory):
    """120 sessions with planted effects, some unscored records and a few sessions on another scale."""
    from tests.conftest import Cli

    folder = tmp_path_factory.mktemp("stats")
    cli = Cli(folder / "council.db")
    path = simulated(folder / "in.jsonl", reviewer_offsets={"openai/gpt-4o": -1.0}, verbosity=0.3, unscored_rate=0.02)
    assert cli("import", str(path)).exit_code == 0
    other = [dict(r, score_scale="1-5", score_value=3.0) for r in session("other-scale", models=4, reviewers=2)]
    assert cli("import", str(write_lines(folder / "other.jsonl", other))).exit_code == 0
    from council_db.store.database import open_database

    return open_database(f"sqlite:///{folder / 'council.db'}", notify=lambda _: None)


def metric(report, path: str) -> dict:
    value = to_builtins(report)
    for part in path.split("."):
        value = value[part]
    return value


def test_window_totals_give_the_numbers_that_reading_every_record_gives(mixed_db):
    window = Window()
    whole = load_for_report(mixed_db, window, sample_sessions=0)
    sampled = load_for_report(mixed_db, window, sample_sessions=40)
    assert whole.totals is None and sampled.totals is not None
    exact = build(whole.data)
    from_sums = build(sampled.data, totals=sampled.totals, window_sessions=sampled.window_sessions)

    assert from_sums.window.sessions == exact.window.sessions == 120
    assert from_sums.window.records == exact.window.records
    assert (from_sums.window.start, from_sums.window.end) == (exact.window.start, exact.window.end)
    assert from_sums.excluded == exact.excluded
    assert from_sums.excluded["other_scale:1-5"] == 8 and from_sums.excluded["unscored"] > 0
    for name in ("naive_pooled_r", "fixed_effect_r", "random_effects_r"):
        for field in ("estimate", "ci_low", "ci_high", "p_value", "n_sessions", "n_records"):
            assert metric(from_sums, f"length.{name}.{field}") == pytest.approx(
                metric(exact, f"length.{name}.{field}"), rel=1e-9), (name, field)
    assert metric(from_sums, "length.heterogeneity") == pytest.approx(metric(exact, "length.heterogeneity"))
    headline, exact_headline = from_sums.length.headline, exact.length.headline
    assert headline.estimate == pytest.approx(exact_headline.estimate, rel=1e-9)
    assert headline.p_value == pytest.approx(exact_headline.p_value, rel=1e-6)
    assert headline.n_records == exact_headline.n_records
    # analytic interval over all sessions vs the bootstrap one: the same width, give or take
    width, exact_width = headline.ci_high - headline.ci_low, exact_headline.ci_high - exact_headline.ci_low
    assert width == pytest.approx(exact_width, rel=0.25)


def test_a_sampled_report_says_so_and_its_record_level_numbers_carry_the_sample_size(mixed_db):
    loaded = load_for_report(mixed_db, Window(), sample_sessions=50)
    report = build(loaded.data, totals=loaded.totals, window_sessions=loaded.window_sessions)

    used = loaded.data.n_sessions  # about 50: each session's key hash falls below the share 50/121 (SD 5.4)
    assert 34 <= used <= 66 and report.window.sample.sessions == used and report.window.sample.of == 121
    assert any(f"sample of {used} of the window's 121 sessions" in w for w in report.warnings)
    assert all(p.severity.n_sessions == used for p in report.reviewers)
    assert report.length.naive_pooled_r.n_sessions == 120
    assert "bootstrap" not in report.length.headline_method


def test_the_sample_is_the_same_every_time(mixed_db):
    keys = [load_for_report(mixed_db, Window(), 30).data.session_keys for _ in range(2)]
    assert keys[0] == keys[1] and 25 <= len(keys[0]) <= 35


def test_a_filtered_sampled_window_reads_records_only_of_the_sample(mixed_db):
    window = Window(reviewers=["openai/gpt-4o"])
    loaded = load_for_report(mixed_db, window, sample_sessions=30)
    assert loaded.totals is None
    assert set(loaded.data.reviewers) == {"openai/gpt-4o"}
    assert 25 <= loaded.data.n_sessions <= 35


def test_the_cli_default_sample_size_is_the_library_default():
    import inspect

    from council_db.cli.report import bias_report

    default = inspect.signature(bias_report).parameters["sample_sessions"].default
    assert default == SAMPLE_SESSIONS and not math.isnan(default)


def test_on_postgresql_window_totals_give_the_numbers_that_reading_every_record_gives(pg_url, tmp_path):
    from council_db.store.database import open_database
    from tests.conftest import Cli

    assert Cli(pg_url)("import", str(simulated(tmp_path / "in.jsonl", sessions=60, unscored_rate=0.02))).exit_code == 0
    db = open_database(pg_url, notify=lambda _: None)
    try:
        whole = load_for_report(db, Window(), sample_sessions=0)
        sampled = load_for_report(db, Window(), sample_sessions=20)
        exact = build(whole.data)
        from_sums = build(sampled.data, totals=sampled.totals, window_sessions=sampled.window_sessions)
    finally:
        db.engine.dispose()
    assert sampled.totals is not None and from_sums.excluded == exact.excluded
    for name in ("naive_pooled_r", "fixed_effect_r", "random_effects_r", "headline"):
        assert metric(from_sums, f"length.{name}.estimate") == pytest.approx(
            metric(exact, f"length.{name}.estimate"), rel=1e-9), name


def test_window_totals_are_the_same_summed_in_one_part_or_in_several(mixed_db, monkeypatch):
    """The sums run over id ranges at once and are added up: any cut gives the same totals,
    a window of the newest sessions included (its ids need not fill the ranges evenly)."""
    from msgspec.structs import astuple

    from council_db.analysis.loading import window_totals

    for window in (Window(), Window(sessions=50)):
        counts, sums = {}, {}
        for parts in (1, 2, 7):
            monkeypatch.setattr(window_totals, "PARTS", parts)
            totals = load_for_report(mixed_db, window, sample_sessions=10).totals
            counts[parts] = (totals.sessions, totals.records, totals.answers, totals.undated, totals.start_us,
                             totals.end_us, totals.scale, totals.excluded, totals.fisher.k)
            sums[parts] = (*astuple(totals.pooled), *astuple(totals.within), totals.fisher.swz, totals.fisher.swz2)
        assert counts[1] == counts[2] == counts[7]
        assert counts[1][0] == (120 if window.sessions is None else 50)
        assert sums[2] == pytest.approx(sums[1], rel=1e-12) and sums[7] == pytest.approx(sums[1], rel=1e-12)


@pytest.mark.parametrize("first, last, parts", [(1, 10, 2), (1, 10, 3), (5, 5, 2), (1, 3, 7), (100, 1_000_000, 2)])
def test_id_ranges_cover_every_id_once(first, last, parts):
    from council_db.store.id_runs import id_ranges

    ranges = id_ranges(first, last, parts)
    assert 1 <= len(ranges) <= parts
    covered = [i for low, high in ranges for i in range(low, high + 1)] if last - first < 100 else None
    if covered is not None:
        assert covered == list(range(first, last + 1))
    assert ranges[0][0] == first and ranges[-1][1] == last
    assert all(high + 1 == low for (_, high), (low, _) in zip(ranges, ranges[1:]))
    assert id_ranges(None, None, parts) == [(0, -1)]
