"""Every session screened: the anomaly tests' sums from one pass over the store give the
p-values the records in memory give (to 1e-9), on both backends, with unknown answer lengths
centred as the fit centres them; and a broken session the report's sample leaves out is found."""

from __future__ import annotations

import json

import numpy as np
import pytest

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.window import SAMPLE_SESSIONS, Window, load_sample, sample_threshold
from council_db.analysis.sessions import anomalies, every_session
from council_db.analysis.sessions.session_cells import of_records
from council_db.store.database import open_reader
from council_db.store.key_hash import key_hash
from tests.conftest import Cli, both_backends, record, simulated, write_jsonl


def _imported(cli, tmp_path, **config) -> None:
    records, _ = simulated(**config)
    for i, one in enumerate(records):
        if i % 37 == 0:  # some answer lengths unknown: the fit centres them within their session
            one["response_length_chars"] = None
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0


def _p_by_key(tests, keys) -> dict[str, float]:
    return {keys[g]: float(tests.p_value[g]) for g in np.flatnonzero(tests.tested)}


@both_backends
def test_the_streamed_pass_gives_the_p_values_of_the_records_in_memory_to_1e_9(cli, db, tmp_path):
    _imported(cli, tmp_path, sessions=150, seed=3, anomaly_rate=0.03, verbosity=0.3, position_effects=[0.2])
    window = Window()
    data = load_sample(db, window, 0).data
    fit = joint_model.fit(data)
    in_memory = anomalies.session_tests(of_records(data, fit.residuals))
    cells = every_session.every_session(db, window, data, fit)
    assert cells is not None
    streamed = anomalies.session_tests(cells)
    with db.reading() as reader:
        key_of = dict(reader.rows("SELECT id, session_key FROM sessions"))
    expected = _p_by_key(in_memory, data.session_keys)
    got = _p_by_key(streamed, [key_of[int(i)] for i in cells.session_ids])
    assert got.keys() == expected.keys() and len(got) == 150
    assert max(abs(got[k] - expected[k]) for k in got) <= 1e-9
    assert min(got.values()) < 1e-4  # the planted broken sessions are in it: the comparison is not all ones


def test_the_streamed_residuals_take_each_reviewers_own_length_slope(cli, db, tmp_path):
    # Judges whose length preferences differ: one slope for the panel would leave each judge's
    # own in its residuals; the streamed pass subtracts each judge's, as the fit does.
    judges = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
    _imported(cli, tmp_path, sessions=60, seed=4, models=judges,
              reviewer_verbosity=dict(zip(judges, [0.9, 0.3, -0.3, -0.9])))
    window = Window()
    data = load_sample(db, window, 0).data
    fit = joint_model.fit(data)
    slopes = [e.estimate for e in fit.length_by_reviewer.values()]
    assert max(slopes) - min(slopes) > 2.0  # per log length: the judges' own slopes differ
    cells = every_session.every_session(db, window, data, fit)
    in_memory = of_records(data, fit.residuals)
    assert cells is not None
    assert np.allclose(_squares(cells), _squares(in_memory), atol=1e-9)


def test_a_reviewer_without_its_own_length_slope_is_taken_at_the_panels_in_the_streamed_residuals(cli, db, tmp_path):
    # Two judges score all three answers of a session, and three of ten others one answer each:
    # the ten have no slope of their own, and the fit takes them at the panel's (planted 0.8).
    rng = np.random.default_rng(6)
    models = ["vendor/model-x", "vendor/model-y", "vendor/model-z"]
    records = []
    for g in range(60):
        lengths = rng.integers(200, 3000, size=3)
        order = rng.permutation(3)
        scorers = [(f"vendor/rich-{r}", m) for r in range(2) for m in range(3)]
        scorers += [(f"vendor/sparse-{r:02d}", m) for m, r in enumerate(rng.choice(10, 3, replace=False).tolist())]
        records += [record(session_id=f"s-{g:03d}", timestamp=f"2026-01-01T00:{g:02d}:00+00:00", reviewer_id=name,
                           model_id=models[m], position=int(order[m]), response_length_chars=int(lengths[m]),
                           score_value=round(float(3.0 + 0.8 * np.log(lengths[m]) + rng.normal(0.0, 0.5)), 1))
                    for name, m in scorers]
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    window = Window()
    data = load_sample(db, window, 0).data
    fit = joint_model.fit(data)
    assert set(fit.length_by_reviewer) == {"vendor/rich-0", "vendor/rich-1"} and fit.length_per_log.ci_low > 0.5
    cells = every_session.every_session(db, window, data, fit)
    in_memory = of_records(data, fit.residuals)
    assert cells is not None
    assert np.allclose(_squares(cells), _squares(in_memory), atol=1e-9)


def _squares(cells) -> np.ndarray:
    """The cells' squared residuals as a sessions x reviewers array, sessions in id order (the
    store's session ids follow the sample's sessions)."""
    rank = np.argsort(np.argsort(cells.session_ids))
    out = np.zeros((cells.n_sessions, len(cells.reviewers)))
    out[rank[cells.session_of()], cells.reviewer] = cells.residual_square
    return out


PANEL = ["vendor/judge-a", "vendor/judge-b", "vendor/judge-c"]


def _sessions(n: int, seed: int) -> list[dict]:
    """n sessions where each of three judges scores each of the three (one a day's second):
    score 5.5 + quality + severity + noise on a scale of tenths. Built directly: the simulator
    takes seconds for 20,000."""
    rng = np.random.default_rng(seed)
    quality, severity = np.array([0.6, 0.0, -0.6]), np.array([0.4, 0.0, -0.4])
    noise = rng.normal(0.0, 0.8, size=(n, 3, 3))
    lengths = rng.integers(300, 3000, size=(n, 3))
    scores = np.clip(np.round(5.5 + quality[None, None, :] + severity[None, :, None] + noise, 1), 1.0, 10.0)
    return [record(session_id=f"s-{g:05d}", timestamp=f"2026-01-{1 + g // 1000:02d}T00:{g % 1000 // 60:02d}:"
                   f"{g % 60:02d}+00:00", reviewer_id=PANEL[r], model_id=PANEL[m], position=(m + g) % 3,
                   response_length_chars=int(lengths[g, m]), score_value=float(scores[g, r, m]))
            for g in range(n) for r in range(3) for m in range(3)]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Cli, str]:
    """20,000 sessions, one of them outside the report's 5,000-session sample broken: every
    score in it 10 (on a scale of tenths, where a constant session is rare)."""
    folder = tmp_path_factory.mktemp("planted")
    records = _sessions(20_000, seed=5)
    threshold = sample_threshold(SAMPLE_SESSIONS, 20_000)
    broken = next(r["session_id"] for r in records[::97] if key_hash(r["session_id"]) >= threshold)
    for row in records:
        if row["session_id"] == broken:
            row["score_value"] = 10.0
    cli = Cli(f"sqlite:///{folder / 'council.db'}")
    assert cli("import", str(write_jsonl(folder / "in.jsonl", records))).exit_code == 0
    return cli, broken


def test_a_broken_session_outside_the_sample_is_found_only_when_every_session_is_screened(planted):
    cli, broken = planted
    sampled = cli("anomalies", "--format", "json")
    screened = cli("anomalies", "--format", "json", "--every-session")
    assert sampled.exit_code == 0 and screened.exit_code == 0, sampled.output + screened.output
    assert broken not in {row["session_id"] for row in json.loads(sampled.stdout)}
    found = {row["session_id"]: row for row in json.loads(screened.stdout)}
    assert broken in found and found[broken]["reason"].startswith("every score is 10")
    assert "every one of the window's 20,000 sessions tested" in screened.stderr
    assert screened.stderr.count("council-db db pack") == 1  # read from the score rows: said once


def _mixed_store(cli, db, tmp_path) -> None:
    """150 simulated sessions with planted anomalies and some unknown lengths; then a second
    scale, undated sessions, excluded scores, a session that gains a reviewer in a later
    import (a second packed part), a re-import, a deleted session and a reviewer re-marked as
    a human rater (left out of the pass either way); packed by the writer from the first import."""
    assert cli("db", "pack").exit_code == 0
    _imported(cli, tmp_path, sessions=150, seed=3, anomaly_rate=0.03, verbosity=0.3, position_effects=[0.2])
    with db.reading() as reader:
        panel = sorted(name for name, in reader.rows("SELECT DISTINCT m.name FROM scores JOIN models AS m ON "
                                                    "m.id = scores.reviewer_id"))[:4]
    extra = [record(session_id=f"undated-{g}", timestamp=None, reviewer_id=panel[r], model_id=panel[m],
                    position=(m + g) % 4, response_length_chars=500 + 50 * m, score_value=float(1 + (g + r * m) % 5),
                    score_scale=scale)
             for g in range(6) for scale in ("1-10", "1-5") for r in range(4) for m in range(4)]
    extra[0]["score_value"], extra[1]["score_value"] = 0.0, 11.0  # unscored, out of scale: excluded
    held_back = extra[44:48]  # undated-1's last judge on 1-10: a second part, in the later import
    path = write_jsonl(tmp_path / "extra.jsonl", extra[:44] + extra[48:])
    assert cli("import", "-q", str(path)).exit_code == 0 and cli("import", "-q", str(path)).exit_code == 0
    later = held_back + [dict(line, reviewer_id="vendor/rater", score_value=3.0) for line in extra[32:36]]
    assert cli("import", "-q", str(write_jsonl(tmp_path / "later.jsonl", later))).exit_code == 0
    assert cli("delete", "--session", "undated-5", "--yes").exit_code == 0
    assert cli("reviewers", "--kind", "human", "vendor/rater", "--yes").exit_code == 0


@both_backends
def test_the_packed_records_give_the_p_values_of_the_score_rows_to_1e_12(cli, db, tmp_path):
    _mixed_store(cli, db, tmp_path)
    window = Window()
    data = load_sample(db, window, 100).data  # a sample: the pass tests the rest against its fit
    fit = joint_model.fit(data)
    with db.reading() as reader:
        assert reader.scalar("SELECT MAX(part) FROM packed_records") == 1
    packed = every_session.every_session(db, window, data, fit)
    rows = every_session.every_session(db, window, data, fit, packed=False)
    assert packed is not None and rows is not None
    assert np.array_equal(packed.session_ids, rows.session_ids) and len(packed.session_ids) >= 150
    by_packed, by_rows = anomalies.session_tests(packed), anomalies.session_tests(rows)
    assert np.array_equal(by_packed.tested, by_rows.tested) and by_packed.tested.sum() >= 150
    assert np.max(np.abs(by_packed.p_value[by_packed.tested] - by_rows.p_value[by_rows.tested])) <= 1e-12
    assert np.min(by_packed.p_value[by_packed.tested]) < 1e-4  # the planted anomalies: not all ones


def test_the_streamed_cells_keep_14_bytes_a_session_reviewer_cell_and_36_a_session(planted):
    # What the tests read and no more (session_cells.py): per cell its reviewer (2 bytes in a
    # panel of up to 65,536), count and residual count (2 bytes each while a cell holds at most
    # 65,535 scores) and squared residuals; per session its number of cells, sum of squares
    # within reviewers, extremes and id. At a million 4x4 sessions 92 MB (the dense sessions x
    # reviewers cells took 96, and 18.6 GiB at 50,000 reviewers over 50,000 sessions).
    cli, _ = planted
    db = open_reader(cli.db)
    window = Window()
    data = load_sample(db, window, SAMPLE_SESSIONS).data
    cells = every_session.every_session(db, window, data, joint_model.fit(data))
    assert cells is not None and cells.n_sessions == 20_000
    arrays = [value for value in vars(cells).values() if isinstance(value, np.ndarray)]
    per_cell = sum(a.nbytes for a in arrays if a.shape == cells.count.shape)
    per_session = sum(a.nbytes for a in arrays if a.shape == (cells.n_sessions,))
    assert len(cells.count) == cells.present.sum() > cells.n_sessions
    assert per_cell == 14 * len(cells.count) and per_session == 36 * cells.n_sessions
