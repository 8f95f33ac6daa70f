"""The shipped Datasette metadata describes every table and view a fresh database has (what a
row is, its natural key, units), names only columns that exist, and its canned queries give
the answers this test works out itself in plain Python from the records."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import pytest

from council_db.outlets.datasette_metadata import SHIPPED_NAME, shipped
from tests.conftest import run_module

LATEST = 10_000  # sessions in the canned queries' default window
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# Columns whose values carry a unit, and the word their description must use for it.
UNITS = [(re.compile(r"^ts_us$"), "microseconds"), (re.compile(r"^ts_us$"), "UTC"),
         (re.compile(r"score(_value|_vs_\w+)?$|^raw_mean$|^score_sum$|_score$|_from_others$"), "score points"),
         (re.compile(r"variance|sq_sum"), "squared"),
         (re.compile(r"length_chars$|^length_sum$"), "characters")]


def database_metadata() -> dict:
    return json.loads(shipped().read_text(encoding="utf-8"))["databases"][SHIPPED_NAME]


def council(*args: str) -> str:
    result = run_module(*args)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> sqlite3.Connection:
    db = tmp_path_factory.mktemp("fresh") / "council.db"
    council("--db", str(db), "db", "upgrade")
    connection = sqlite3.connect(db)
    yield connection
    connection.close()


def relations(connection: sqlite3.Connection) -> dict[str, set[str]]:
    names = [name for (name,) in connection.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'")]
    return {name: {row[1] for row in connection.execute(f'PRAGMA table_info("{name}")')} for name in names}


def test_every_table_and_view_of_a_fresh_database_has_a_description_with_its_natural_key(fresh):
    tables = database_metadata()["tables"]
    found = relations(fresh)

    missing = sorted(set(found) - set(tables))
    assert not missing, f"no Datasette metadata for {missing}: add them to {shipped().name}"
    assert not sorted(set(tables) - set(found)), "metadata for a table or view the schema does not have"
    for name, columns in found.items():
        description = tables[name]["description"]
        key = re.search(r"Natural key: ([\w, ]+)\.", description)
        assert key, f"{name}: the description does not name its natural key"
        assert set(key.group(1).split(", ")) <= columns, f"{name}: the key names a column it does not have"


def test_facets_sorts_labels_and_column_notes_name_columns_that_exist(fresh):
    tables = database_metadata()["tables"]
    for name, columns in relations(fresh).items():
        table = tables[name]
        named = [*table.get("facets", []), *(table[k] for k in ("sort", "sort_desc", "label_column") if k in table),
                 *table.get("columns", {})]
        assert set(named) <= columns, f"{name}: {sorted(set(named) - columns)} are not its columns"
        assert not ("sort" in table and "sort_desc" in table), f"{name}: one default order"


def test_columns_with_units_say_which(fresh):
    tables = database_metadata()["tables"]
    for name, columns in relations(fresh).items():
        notes = tables[name].get("columns", {})
        for column in columns:
            for pattern, unit in UNITS:
                if pattern.search(column) and column in notes:
                    assert unit in notes[column], f"{name}.{column}: its note does not say {unit!r}"
    records = tables["score_records"]["columns"]
    assert "microseconds" in records["ts_us"] and "characters" in records["response_length_chars"]
    assert "score points" in records["score_value"]


def test_the_record_views_facet_on_what_the_day_totals_count_and_the_sessions_on_their_attributes():
    """Each facet a page opens with is one the plugin counts in milliseconds at any size: a
    session attribute (category, schema_version) is faceted where a row is a session."""
    from council_db.outlets.facet_counts import COUNTED

    tables = database_metadata()["tables"]
    for relation, counted in COUNTED.items():
        assert tables[relation]["facets"] == list(counted.columns)
    for sessions in ("session_summaries", "sessions"):
        assert {"category", "schema_version"} <= set(tables[sessions]["facets"])


# ---- canned queries, against records with the quirks real logs have ----

@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Three simulated files, lines dropped at random (reviewer panels that vary, answers one
    reviewer alone scored), unscored 0.0 scores, a pre-1.2.0 file (positions are rankings)
    and a file rewritten to the 1-5 scale; imported into a real database."""
    folder = tmp_path_factory.mktemp("canned")
    rng = random.Random(7)
    lines = []
    planted = ["--unscored", "0.1", "--self-preference", "1.0", "--reviewer-offset", "openai/gpt-4o=-1.0"]
    for n, extra in enumerate([planted, ["--schema-version", "1.1.0"], ["--candidates-per-session", "3"]]):
        path = folder / f"sim{n}.jsonl"
        council("simulate", "-o", str(path), "--sessions", "40", "--days", "30", "--end", "2025-06-30",
                "--seed", str(n), *extra)
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if n == 2:
                record["score_scale"], record["score_value"] = "1-5", max(1.0, round(record["score_value"] / 2, 1))
            if rng.random() > 0.15:
                lines.append(json.dumps(record))
    records = folder / "records.jsonl"
    records.write_text("\n".join(lines) + "\n")
    db = folder / "council.db"
    council("--db", str(db), "import", str(records))
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    rows = [dict(row) for row in connection.execute("SELECT * FROM score_records")]
    yield connection, rows
    connection.close()


def run(connection: sqlite3.Connection, name: str, latest: int = LATEST, **params: str) -> list[dict]:
    """The canned query's rows; ``latest`` other than 10,000 rewrites its default window's size."""
    query = database_metadata()["queries"][name]["sql"]
    assert f"OFFSET {LATEST - 1})" in query
    query = query.replace(f"OFFSET {LATEST - 1})", f"OFFSET {latest - 1})")
    named = set(re.findall(r"(?<!:):(\w+)", query))
    return [dict(row) for row in connection.execute(query, {p: params.get(p, "") for p in named})]


def us(text: str) -> int:
    moment = datetime.fromisoformat(text)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def in_window(rows: list[dict], since: str = "", until: str = "", latest: int = LATEST) -> list[dict]:
    """The usable records of [since, until); blank until: just after the latest session, blank
    since: from the latest ``latest`` sessions' first time (the queries' stated window)."""
    end = us(until) if until else max(r["ts_us"] for r in rows if r["ts_us"] is not None) + 1
    times = sorted({(r["ts_us"], r["session_id"]) for r in rows if r["ts_us"] is not None and r["ts_us"] < end})
    start = us(since) if since else times[-latest][0] if len(times) >= latest else -2**63
    return [r for r in rows if r["excluded_because"] is None and r["ts_us"] is not None and start <= r["ts_us"] < end]


def answer(r: dict) -> tuple:
    """Which answer a score is of: the candidate in the session, by display slot when it has one."""
    return r["session_id"], r["model"], r["position"] if r["position_is_display_order"] else None, r["score_scale"]


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 0.0011  # both rounded to 3 decimals; sums may differ in their last bit


def same_rows(got: list[dict], expected: list[dict], numbers: tuple[str, ...]) -> None:
    assert len(got) == len(expected) and expected
    for g, e in zip(got, expected):
        assert {k: g[k] for k in e if k not in numbers} == {k: v for k, v in e.items() if k not in numbers}, (g, e)
        assert all(close(g[k], e[k]) for k in numbers), (g, e)


def monday(ts_us: int) -> str:
    day = (EPOCH + timedelta(microseconds=ts_us)).date()
    return (day - timedelta(days=day.weekday())).isoformat()


def severity_by_week(rows: list[dict], reviewer: str = "") -> list[dict]:
    mine, whole, when = defaultdict(lambda: [0.0, 0]), defaultdict(lambda: [0.0, 0]), {}
    for r in rows:
        if r["self_review"]:
            continue
        for key, sums in (((r["session_id"], r["reviewer"], r["score_scale"]), mine),
                          ((r["session_id"], r["score_scale"]), whole)):
            sums[key][0] += r["score_value"]
            sums[key][1] += 1
        when[r["session_id"]] = r["ts_us"]
    weeks = defaultdict(lambda: [0, 0, 0.0, 0, 0.0])
    for (session, who, scale), (total, n) in mine.items():
        session_total, session_n = whole[session, scale]
        if session_n > n and reviewer in ("", who):
            week = weeks[monday(when[session]), who, scale]
            for i, value in enumerate((1, n, total, session_n - n, session_total - total)):
                week[i] += value
    return [dict(week_of=week, reviewer=who, score_scale=scale, sessions=sessions, scores=scores,
                 mean_score=total / scores, others_scores=others, others_mean=others_total / others,
                 difference=total / scores - others_total / others)
            for (week, who, scale), (sessions, scores, total, others, others_total)
            in sorted(weeks.items(), key=lambda item: (item[0][1], item[0][2], item[0][0]))]


def test_severity_by_week_compares_a_reviewer_with_the_others_in_the_same_sessions(store):
    connection, rows = store
    numbers = ("mean_score", "others_mean", "difference")

    same_rows(run(connection, "reviewer_severity_by_week"), severity_by_week(in_window(rows)), numbers)
    chosen = dict(since="2025-06-02", until="2025-06-23T12:00:00Z", reviewer="openai/gpt-4o")
    got = run(connection, "reviewer_severity_by_week", **chosen)
    same_rows(got, severity_by_week(in_window(rows, chosen["since"], chosen["until"]), "openai/gpt-4o"), numbers)
    assert {g["week_of"] for g in got} <= {"2025-06-02", "2025-06-09", "2025-06-16", "2025-06-23"}
    harsh = [g for g in got if g["score_scale"] == "1-10"]
    assert harsh and all(g["difference"] < 0 for g in harsh), "the reviewer planted 1 point harsher is, every week"


def disagreements(rows: list[dict], reviewer: str = "") -> dict[tuple, dict]:
    scored = defaultdict(list)
    for r in rows:
        if not r["self_review"]:
            scored[answer(r)].append(r)
    gaps = defaultdict(lambda: [0, 0, 0.0, 0.0])
    for scores in scored.values():
        if len(scores) < 2:
            continue
        for r in scores:
            others = [o["score_value"] for o in scores if o is not r]
            gap = gaps[r["session_id"], r["reviewer"], r["score_scale"]]
            for i, value in enumerate((1, len(others), r["score_value"], sum(others))):
                gap[i] += value
    return {key: dict(answers=answers, others_scores=others, reviewer_mean=total / answers,
                      others_mean=others_total / others, gap=total / answers - others_total / others)
            for key, (answers, others, total, others_total) in gaps.items() if reviewer in ("", key[1])}


@pytest.mark.parametrize("reviewer", ["", "google/gemini-1.5-pro"])
def test_disagreements_list_each_session_and_reviewer_by_its_gap_to_the_others_on_the_same_answers(store, reviewer):
    connection, rows = store
    since = "2025-05-01"

    got = run(connection, "reviewer_disagreements", since=since, reviewer=reviewer)

    expected = disagreements(in_window(rows, since), reviewer)
    assert len(got) == len(expected) and len(got) > 20
    for row in got:
        e = expected[row["session_id"], row["reviewer"], row["score_scale"]]
        assert (row["answers"], row["others_scores"]) == (e["answers"], e["others_scores"])
        assert all(close(row[k], e[k]) for k in ("reviewer_mean", "others_mean", "gap")), (row, e)
    gaps = [abs(row["gap"]) for row in got]
    assert all(a >= b - 0.0011 for a, b in zip(gaps, gaps[1:])), "largest gaps first"
    rankings = {r["session_id"] for r in rows if not r["position_is_display_order"]}
    assert any(row["session_id"] in rankings for row in got), "records without a slot are compared by candidate"


def test_the_default_window_is_the_latest_sessions_and_each_row_says_so(store):
    connection, rows = store
    first_time = {r["session_id"]: r["ts_us"] for r in rows}
    latest = sorted(first_time.values())[-30]

    everything = run(connection, "reviewer_disagreements")
    got = run(connection, "reviewer_disagreements", latest=30)

    def keys(found):
        return {(g["session_id"], g["reviewer"], g["score_scale"]) for g in found}

    assert keys(everything) == set(disagreements(in_window(rows)))
    assert keys(got) == set(disagreements(in_window(rows, latest=30)))
    assert {g["session_id"] for g in got} <= {s for s, ts in first_time.items() if ts >= latest}
    start = (EPOCH + timedelta(microseconds=latest)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert {g["window_start"] for g in got} == {start}


def slots(rows: list[dict], model: str = "") -> list[dict]:
    by_slot = defaultdict(list)
    for r in rows:
        if r["position_is_display_order"] and not r["self_review"] and model in ("", r["model"]):
            by_slot[r["model"], r["score_scale"], r["position"]].append(r)
    out = []
    for (who, scale, slot), scores in sorted(by_slot.items()):
        pooled = [r["score_value"] for (w, s, _), rs in by_slot.items() if (w, s) == (who, scale) for r in rs]
        mean = sum(r["score_value"] for r in scores) / len(scores)
        out.append(dict(model=who, score_scale=scale, slot=slot, scores=len(scores),
                        sessions=len({r["session_id"] for r in scores}), mean_score=mean,
                        vs_model_mean=mean - sum(pooled) / len(pooled)))
    return out


def test_scores_by_slot_give_each_models_display_slots_against_its_own_mean(store):
    connection, rows = store
    since, until = "2025-06-01", "2025-07-01"

    everyone = run(connection, "model_scores_by_slot", since=since, until=until)
    one = run(connection, "model_scores_by_slot", since=since, until=until, model="openai/gpt-4o")

    window = in_window(rows, since, until)
    same_rows([{k: v for k, v in g.items() if not k.startswith("window_")} for g in everyone], slots(window),
              ("mean_score", "vs_model_mean"))
    same_rows([{k: v for k, v in g.items() if not k.startswith("window_")} for g in one],
              slots(window, "openai/gpt-4o"), ("mean_score", "vs_model_mean"))
    windows = {(g["window_start"], g["window_end"]) for g in everyone}
    assert windows == {("2025-06-01T00:00:00Z", "2025-07-01T00:00:00Z")}


def self_preference(rows: list[dict]) -> list[dict]:
    by_answer = defaultdict(list)
    for r in rows:
        by_answer[answer(r)].append(r)
    per_model = defaultdict(list)
    for (session, model, _, scale), scores in by_answer.items():
        own = [r["score_value"] for r in scores if r["self_review"]]
        others = [r["score_value"] for r in scores if not r["self_review"]]
        if len(own) == 1 and others:
            per_model[model, scale].append((session, own[0], sum(others) / len(others)))
    out = [dict(reviewer=model, score_scale=scale, answers=len(items), sessions=len({s for s, _, _ in items}),
                own_score=sum(o for _, o, _ in items) / len(items),
                others_score=sum(t for _, _, t in items) / len(items),
                difference=sum(o - t for _, o, t in items) / len(items))
           for (model, scale), items in per_model.items()]
    return sorted(out, key=lambda row: (-round(row["difference"], 3), row["reviewer"]))


def test_self_preference_compares_a_reviewers_own_answers_with_what_the_others_gave_them(store):
    connection, rows = store
    since = "2025-05-01"

    got = run(connection, "self_preference", since=since)

    expected = self_preference(in_window(rows, since))
    same_rows([{k: v for k, v in g.items() if not k.startswith("window_")} for g in got], expected,
              ("own_score", "others_score", "difference"))
    # Planted at 1.0 in half the 1-10 sessions; openai/gpt-4o's is cancelled there by its planted harshness.
    planted = [g for g in got if g["score_scale"] == "1-10" and g["reviewer"] != "openai/gpt-4o"]
    assert planted and all(g["difference"] > 0.2 for g in planted), "the planted self-preference shows"


def test_a_time_sqlite_cannot_read_gives_no_rows_rather_than_another_window(store):
    connection, _ = store

    assert run(connection, "self_preference", since="last tuesday") == []
