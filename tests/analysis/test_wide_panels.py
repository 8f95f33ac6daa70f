"""Analyses that must not grow with the square of the panel (issue 32, "many judges and
candidates"): their memory bounded by a chunk or by what they report, their work by what a
subject can estimate, their figures those of the code that grew."""

from __future__ import annotations

import tracemalloc

import numpy as np

from council_db.analysis.drift import changepoints
from council_db.analysis.drift.trends import TimedResiduals


def timed_panel(subjects: int, sessions: int, seed: int = 5) -> TimedResiduals:
    """Sessions of 3 records an hour apart, each by a subject drawn at random (every subject at
    least 3 times), residuals N(0, 1): a panel as wide as it is deep."""
    rng = np.random.default_rng(seed)
    n = sessions * 3
    subject = rng.permutation(np.resize(np.arange(subjects), n))
    session = np.arange(n) // 3
    return TimedResiduals(subject, [f"r/{i}" for i in range(subjects)], session,
                          1_000_000_000 + session * 3_600_000_000, rng.normal(0, 1, n), "reviewer")


def test_the_change_point_permutations_hold_a_chunk_not_the_whole_panel_per_batch():
    timed = timed_panel(400, 400)
    tracemalloc.start()
    found = changepoints.search(timed, np.random.default_rng(1), permutations=30)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(found) > 200  # most reviewers tested
    # a batch of 30 permutations x 100 blocks x ~400 reviewers is 10 MB an array, and the
    # statistic holds several (before: 75 MB at the peak); chunks of 500k cells, 4 MB each
    assert peak < 48 * 2 ** 20, f"{peak / 2 ** 20:.0f} MB"


def test_chunked_permutations_give_the_p_values_of_whole_batches(monkeypatch):
    timed = timed_panel(60, 400)
    chunked = changepoints.search(timed, np.random.default_rng(2), permutations=300)
    monkeypatch.setattr(changepoints, "CELLS", 10 ** 12)
    whole = changepoints.search(timed, np.random.default_rng(2), permutations=300)
    assert [(c.subject, c.p_value, c.statistic, c.at_us) for c in chunked] == \
        [(c.subject, c.p_value, c.statistic, c.at_us) for c in whole]


def test_change_point_shifts_are_each_subjects_step_less_the_median_of_the_others(monkeypatch):
    timed = timed_panel(120, 600, seed=6)
    fits, fit = [], changepoints._steps_beyond_trend
    monkeypatch.setattr(changepoints, "_steps_beyond_trend", lambda *a: fits.append(a[-1]) or fit(*a))
    found = changepoints.search(timed, np.random.default_rng(3), permutations=20)
    assert len(fits) == len(set(fits)) < len(found)  # one fit per split used, not one per subject
    layout = changepoints._Blocks.of(timed)
    block = layout.of_session[timed.session]
    n = len(timed.names)
    totals = changepoints._per_block(block, timed.subject, timed.residual, layout.n, n)
    records = changepoints._per_block(block, timed.subject, np.ones(len(block)), layout.n, n)
    detrended = changepoints._detrend(totals, records, layout.time)
    tested = [timed.names.index(c.subject) for c in found]
    detrended, records = detrended[:, tested], records[:, tested]
    assert len(found) > 60
    for i, change in enumerate(found):  # the definition, one subject at a time, as it was computed
        k = int(np.flatnonzero(layout.start_us == change.at_us)[0]) - 1
        steps = fit(detrended, records, layout.time, k)
        assert abs(change.shift - (steps[i] - np.median(np.delete(steps, i)))) <= 1e-12


def test_per_reviewer_position_fits_only_reviewers_with_two_sessions_to_compare(monkeypatch):
    """A wide panel (rare reviewers of a few scores beside a council's four) gives each
    reviewer the row one fit per reviewer gave, but fits only those with two sessions holding
    two or more of their scores: the others' fits estimated nothing, at ~3 ms each."""
    from council_db.analysis.loading.score_data import from_records
    from council_db.analysis.position import reviewer_position
    from council_db.analysis.position.consistency import Judgments, first_shown_judgments, first_shown_share
    from council_db.analysis.position.swaps import summarise, swaps
    from tests.conftest import simulated

    records, _ = simulated(sessions=40, seed=9)
    for i, record in enumerate(records[::3]):  # every third record's reviewer made rare
        record["reviewer_id"] = f"rare/{i % 60}"
    data = from_records(records)
    judgments, found = first_shown_judgments(data), swaps(data)
    fits, fit = [], reviewer_position.joint_model.fit
    monkeypatch.setattr(reviewer_position.joint_model, "fit", lambda d: fits.append(d) or fit(d))
    rows = reviewer_position.by_reviewer(data, judgments, found)
    assert len(rows) == len(data.reviewers) > 60 and 4 <= len(fits) < 20
    for row in rows:  # as each row was computed before, one full fit and one scan per reviewer
        number = data.reviewers.index(row.reviewer)
        own = np.flatnonzero((data.reviewer == number) & (data.slot >= 0))
        whole = fit(reviewer_position._own_records(data, own))
        effects = {s: e for s, e in whole.slot_effects.items() if e.identified}
        mine = judgments.reviewer == number
        enough = len(np.unique(judgments.session[mine])) >= reviewer_position.MIN_SESSIONS
        assert (row.n_sessions, row.n_records, row.judgments) == (whole.n_sessions, whole.n_records, int(mine.sum()))
        assert row.slot_effects == (effects if len(effects) > 1 else {})
        assert row.test == (whole.position_test if whole.n_sessions >= 10 and len(effects) > 1 else None)
        assert row.first_shown == (first_shown_share(Judgments(judgments.session[mine], judgments.reviewer[mine],
                                                               judgments.first_won[mine], 0)) if enough else None)
        assert row.swaps == summarise(found, found.reviewer == number)


def test_affinity_holds_the_reported_pairs_sessions_not_every_pairs():
    """3,000 reviewers x 4 candidates x 3,000 sessions: every pair's per-session totals and
    counts were 12,000 x 3,000 cells each (576 MB); the pairs that met in 10 sessions hold them."""
    from council_db.analysis.effects import affinity
    from council_db.analysis.loading.score_data import from_records
    from tests.report.test_report_pinned import panel_records

    records = panel_records(3_000, 4, 3_000)
    for i, record in enumerate(records[:600:3]):  # a reviewer of two candidates in 200 sessions
        record["reviewer_id"], record["model_id"] = "r/common", f"m/{i % 2}"
    data = from_records(records)
    residuals = np.random.default_rng(4).normal(0, 1, data.n_records)
    tracemalloc.start()
    cells = affinity.affinity(data, residuals)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [(c.label, c.n_records) for c in cells] == [("r/common -> m/0", 100), ("r/common -> m/1", 100)]
    mine = (data.reviewer == data.reviewers.index("r/common")) & (data.model == data.models.index("m/0"))
    assert abs(cells[0].estimate.estimate - residuals[mine].mean()) <= 1e-12
    assert peak < 40 * 2 ** 20, f"{peak / 2 ** 20:.0f} MB"


def test_resampled_trend_slopes_cost_resamples_x_records_not_x_instants_x_pairs():
    """The anchor choice's resampled slopes: each resample's weighted within-pair slope of
    every subject, as its definition gives it; 20,000 records at 20,000 instants in 20,000
    pairs take milliseconds (dense instants x pairs blocks: 8e9 cell sums, minutes)."""
    import time

    from council_db.analysis.drift.slope_fits import Cells, Records

    rng = np.random.default_rng(8)
    n, subjects = 20_000, 5_000
    subject, pair, instant = rng.integers(0, subjects, n), np.arange(n), np.arange(n)
    records = Records(instant, instant, subject, pair, instant / n, rng.normal(size=n), n, subjects)
    weights = rng.poisson(1.0, (20, n)).astype(float)
    began = time.process_time()
    slopes = Cells.of(records).slopes(weights)
    assert time.process_time() - began < 2.0
    assert np.isnan(slopes).all()  # one record a pair: time never varies within a pair

    small = Records(np.sort(rng.integers(0, 50, 600)), np.zeros(600, dtype=np.int64), rng.integers(0, 6, 600),
                    rng.integers(0, 30, 600), np.zeros(600), rng.normal(size=600), 50, 6)
    small = Records(small.instant, small.instant, small.pair % 6, small.pair, small.instant / 50.0, small.residual,
                    50, 6)  # pair p belongs to subject p % 6
    weights = rng.poisson(1.0, (7, 50)).astype(float)
    for row, got in zip(weights, Cells.of(small).slopes(weights)):
        w = row[small.instant]
        sxx, sxy = np.zeros(6), np.zeros(6)
        for p in np.unique(small.pair):
            mine = small.pair == p
            n_p = w[mine].sum()
            if n_p > 0:
                t_bar, r_bar = (w[mine] * small.t[mine]).sum() / n_p, (w[mine] * small.residual[mine]).sum() / n_p
                sxx[p % 6] += (w[mine] * (small.t[mine] - t_bar) ** 2).sum()
                sxy[p % 6] += (w[mine] * (small.t[mine] - t_bar) * (small.residual[mine] - r_bar)).sum()
        assert np.allclose(got, sxy / sxx, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- the absorbed fit


def panel_data(reviewers: int, candidates: int, sessions: int, *, planted: dict[int, float] | None = None,
               seed: int = 32):
    """bench_absorb's wide panel as ScoreData: sessions of 3 records, reviewer and candidate
    drawn at random; severities N(0, 0.5) unless ``planted`` (reviewer -> severity, the rest 0)."""
    from council_db.analysis.loading.score_data import ScoreData

    rng = np.random.default_rng(seed)
    n = sessions * 3
    reviewer = rng.permutation(np.resize(np.arange(reviewers), n))
    candidate = rng.permutation(np.resize(np.arange(candidates), n))
    severity = rng.normal(0, 0.5, reviewers) if planted is None else np.zeros(reviewers)
    for r, value in (planted or {}).items():
        severity[r] = value
    quality = rng.normal(0, 0.5, candidates)
    score = 6 + severity[reviewer] + quality[candidate] + rng.normal(0, 1, n)
    return ScoreData(session=np.arange(n) // 3, reviewer=reviewer, model=candidate, slot=np.arange(n) % 3,
                     log_length=np.log(rng.integers(200, 3000, n) + 1.0), score=score,
                     self_review=np.zeros(n, dtype=bool), reviewers=[f"r/{i}" for i in range(reviewers)],
                     models=[f"m/{i}" for i in range(candidates)], session_keys=[f"s{i}" for i in range(sessions)],
                     session_ts_us=np.arange(sessions, dtype=np.int64))


def largest_differences(wide, dense) -> dict[str, float]:
    """The largest |estimate| and |SE| difference of each figure both fits identified."""
    pairs = []
    for name in ("severity", "quality", "slot_effects", "length_by_reviewer", "self_preference_by_reviewer"):
        mine = getattr(wide, name)
        pairs += [(name, mine[key], effect) for key, effect in getattr(dense, name).items() if effect.identified]
    pairs += [(name, getattr(wide, name), getattr(dense, name)) for name in ("length_per_log", "self_preference")
              if getattr(dense, name) is not None]
    assert all(w.identified for _, w, _ in pairs)
    out = {"estimate": max(abs(w.estimate - d.estimate) for _, w, d in pairs),
           "se": max(abs(w.se - d.se) for _, w, d in pairs),
           "residual": float(np.nanmax(np.abs(wide.residuals - dense.residuals)))}
    if dense.position_test is not None:
        out["position F"] = abs(wide.position_test.statistic - dense.position_test.statistic)
    return out


def test_the_absorbed_fit_gives_a_1000_reviewer_panel_the_dense_fits_estimates_and_cr1_ses(monkeypatch):
    from council_db.analysis.joint import absorbed_fit, joint_model

    data = panel_data(1_000, 4, 1_000)  # 1,000 sessions: the dense fit's SEs are CR1 (CR2 stops at 1,000)
    dense = joint_model.fit(data, absorbed=False)
    monkeypatch.setattr(absorbed_fit, "MIN_SESSIONS", 0)  # every subject's SE, to compare them all
    wide = joint_model.fit(data, absorbed=True)
    assert wide.absorbed and not dense.absorbed
    assert len(wide.severity) == 1_000 and (wide.n_sessions, wide.n_records) == (dense.n_sessions, dense.n_records)
    assert all(value <= 1e-9 for value in largest_differences(wide, dense).values()), largest_differences(wide, dense)


def test_the_demos_panel_forced_through_the_absorbed_fit_gives_the_dense_fits_figures(monkeypatch):
    """The demo (self-reviews, a slope per judge, four slots) with the dense fit's CR1 (its CR2,
    for fewer than 1,000 sessions, is what the dense path alone gives)."""
    from council_db.analysis.joint import absorbed_fit, joint_model
    from council_db.analysis.loading.score_data import from_records
    from council_db.analysis.stats import small_sample
    from tests.conftest import simulated

    records, _ = simulated(sessions=300, seed=7, reviewer_offsets={"openai/gpt-4o": -0.8,
                                                                  "anthropic/claude-3-5-sonnet": 0.6},
                           position_effects=[0.4, 0, 0, -0.2], self_preference=0.5, verbosity=0.3,
                           unscored_rate=0.01)
    data = from_records(records)
    monkeypatch.setattr(small_sample, "MAX_CLUSTERS", 0)
    dense = joint_model.fit(data)
    wide = joint_model.fit(data, absorbed=True)
    assert len(dense.self_preference_by_reviewer) == 4 and len(dense.length_by_reviewer) == 4
    assert all(value <= 1e-9 for value in largest_differences(wide, dense).values()), largest_differences(wide, dense)
    assert abs(wide.position_test.p_value - dense.position_test.p_value) <= 1e-12
    assert not absorbed_fit.MIN_SESSIONS > 300 and not wide.too_few  # the demo's judges are all above the floor


def test_a_wide_panel_past_the_dense_limit_is_absorbed_and_its_rare_subjects_get_no_estimate():
    from council_db.analysis.joint import joint_model

    data = panel_data(1_200, 4, 1_200)
    fit = joint_model.fit(data)
    assert fit.absorbed and any("absorbed the reviewer and candidate effects" in w for w in fit.warnings)
    sessions = {name: len(np.unique(data.session[data.reviewer == i])) for i, name in enumerate(data.reviewers)}
    assert max(sessions.values()) < 10
    assert set(fit.too_few) == set(data.reviewers) and not any(e.identified for e in fit.severity.values())
    assert all(e.identified and e.se > 0 for e in fit.quality.values())  # 900 sessions each: tested
    assert all(np.isnan(sd) for sd in fit.residual_sd_by_reviewer.values())


def test_the_absorbed_fit_finds_planted_severities_and_flags_at_most_5_percent_under_the_null():
    """Wide panels of 150 reviewers (about 20 sessions each) x 20 candidates: 10 reviewers
    planted at +-1.5 points are found (BH q <= 0.05); with none planted, the share of reviewers
    at p < 0.05 stays near 5% and BH flags almost none."""
    from council_db.analysis.joint import joint_model
    from council_db.analysis.stats.inference import benjamini_hochberg

    planted = {r: (1.5 if r % 2 else -1.5) for r in range(10)}
    found, null_p, null_flags = [], [], 0
    for seed in range(4):
        fit = joint_model.fit(panel_data(150, 20, 1_000, planted=planted, seed=seed), absorbed=True)
        q = benjamini_hochberg([e.p_value for e in fit.severity.values()])
        found += [q[r] <= 0.05 and np.sign(fit.severity[f"r/{r}"].estimate) == np.sign(planted[r])
                  for r in planted]
        null = joint_model.fit(panel_data(150, 20, 1_000, planted={}, seed=100 + seed), absorbed=True)
        p = np.array([e.p_value for e in null.severity.values()])
        null_p += p.tolist()
        null_flags += int((benjamini_hochberg(p) <= 0.05).sum())
    assert np.mean(found) >= 0.9
    assert 0.02 <= np.mean(np.array(null_p) < 0.05) <= 0.065, np.mean(np.array(null_p) < 0.05)  # 600 tests
    assert null_flags <= 1


def test_the_absorbed_residual_sds_charge_the_average_leverage_close_to_each_reviewers_own():
    """The dense fit divides each reviewer's RSS by the sum of 1 - h_ii over its records; the
    absorbed fit by the average leverage's share. On 150 reviewers of ~20 sessions each they
    differ by 0.3% in the median and under 4% at most (a reviewer's own column's leverage is
    about one record's worth of its ~40 within-session degrees of freedom), and the absorbed
    SDs are near the true SD of 1."""
    from council_db.analysis.joint import joint_model

    data = panel_data(150, 20, 1_000, planted={}, seed=7)
    dense, wide = joint_model.fit(data, absorbed=False), joint_model.fit(data, absorbed=True)
    ratio = np.array([wide.residual_sd_by_reviewer[name] / sd for name, sd in dense.residual_sd_by_reviewer.items()])
    assert np.median(np.abs(ratio - 1)) < 0.01 and np.abs(ratio - 1).max() < 0.04, np.abs(ratio - 1).max()
    assert abs(np.mean(np.array(list(wide.residual_sd_by_reviewer.values())) ** 2) - 1) < 0.05


def test_mt_bench_forced_through_the_absorbed_fit_gives_the_dense_fits_figures(cli, db, monkeypatch):
    """Real judge data (tests/data: MT-bench's GPT-4 single grading, one judge of many
    candidates) through both fits: the same figures, and no flag the dense fit does not give."""
    from council_db.analysis.joint import absorbed_fit, joint_model
    from council_db.analysis.loading.window import Window, load_sample
    from council_db.analysis.stats import small_sample
    from tests import realdata

    assert cli(*realdata.mt_bench_import(), "-q").exit_code == 0
    data = load_sample(db, Window(), 0).data
    monkeypatch.setattr(small_sample, "MAX_CLUSTERS", 0)
    monkeypatch.setattr(absorbed_fit, "MIN_SESSIONS", 0)
    dense, wide = joint_model.fit(data), joint_model.fit(data, absorbed=True)
    assert sum(e.identified for e in dense.quality.values()) >= 4 and dense.length_per_log is not None
    assert all(value <= 1e-9 for value in largest_differences(wide, dense).values()), largest_differences(wide, dense)


def test_the_stratified_samples_round_probes_each_sessions_scores_once_not_once_per_short_subject(tmp_path):
    """A wide panel's subjects are all short of the sample's floor: SQLite had probed the
    scores' key once per (session, listed subject), 2.5e9 probes (minutes) at 50,000 reviewers."""
    import sqlite3

    from council_db.analysis.loading import strata
    from tests.conftest import Cli, write_jsonl
    from tests.report.test_report_pinned import panel_records

    db = tmp_path / "panel.db"
    assert Cli(db)("import", "-q", str(write_jsonl(tmp_path / "p.jsonl", panel_records(300, 4, 100)))).exit_code == 0
    keyed = "SELECT s.id, s.key_hash, s.session_key, s.ts_us FROM sessions AS s"
    sql = strata._round_sql(keyed, "w.key_hash", {"reviewer_id": {i: 1 for i in range(1, 301)}, "model_id": {}}, 200)
    with sqlite3.connect(db) as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, {"low": 0, "high": 2 ** 40})]
    assert any("sc USING PRIMARY KEY (session_id=?)" in step for step in plan), plan


def test_a_wide_panels_change_point_search_takes_only_subjects_with_ten_sessions():
    """Past the dense limit, a subject under the absorbed fit's floor is not searched (every
    permutation's statistic spans the subjects searched: 50,000 of them had held the report
    for minutes); the subjects with ten sessions still are."""
    from council_db.analysis.joint.joint_model import DENSE_COLUMNS

    timed = timed_panel(DENSE_COLUMNS + 100, 1_000)
    for number, first in ((0, 0), (1, 10)):  # r/0 and r/1 score in every 20th session
        common = np.flatnonzero(np.isin(timed.session, np.arange(first, 1_000, 20)))
        timed.subject[common[::3]] = number
    found = changepoints.search(timed, np.random.default_rng(1), permutations=20)
    assert sorted(c.subject for c in found) == ["r/0", "r/1"]


def test_a_wide_panels_trends_are_the_slopes_of_its_subjects_with_ten_sessions_alone():
    """Past the dense limit the slopes' subjects x subjects covariance (20 GB at 50,000
    reviewers) holds only the subjects at the floor: their slopes are those of the panel of
    their records alone."""
    from council_db.analysis.drift import trends
    from council_db.analysis.joint.joint_model import DENSE_COLUMNS

    timed = timed_panel(DENSE_COLUMNS + 100, 1_000)
    for number in range(4):  # r/0-r/3 score in every 10th session, each from its own start
        common = np.flatnonzero(np.isin(timed.session, np.arange(number, 1_000, 10)))
        timed.subject[common[::3]] = number
    slopes = trends.slopes(timed, np.random.default_rng(1))
    assert len(slopes) >= 2 and {s.subject for s in slopes} <= {"r/0", "r/1", "r/2", "r/3"}
    mine = timed.subject < 4
    _, session = np.unique(timed.session[mine], return_inverse=True)
    alone = TimedResiduals(timed.subject[mine], timed.names, session, timed.ts_us[mine], timed.residual[mine],
                           "reviewer")
    assert slopes == trends.slopes(alone, np.random.default_rng(1))


def test_the_panel_change_warnings_read_each_subjects_rows_not_a_mask_over_every_record_each():
    """30,000 reviewers of 3 records each (and one that joins late): the warnings name the late
    joiner alone, in well under a second (a mask per subject was 30,000 x 90,000 comparisons)."""
    import time

    from council_db.analysis.drift import panel

    data = panel_data(30_000, 4, 30_000)
    late = data.session >= 20_000
    data.reviewer[np.flatnonzero(late)[::3]] = 0  # r/0 scores from two thirds of the way on
    data.session_ts_us = data.session_ts_us * 3_600_000_000
    began = time.process_time()
    warnings = panel.changes(data)
    assert time.process_time() - began < 1.0
    assert len(warnings) == 1 and "reviewer r/0 scores only from" in warnings[0]


def test_a_wide_panels_trend_floor_with_no_timed_record_keeps_every_subject():
    """Past the dense limit with no dated finite residual left (nothing to count sessions of),
    the floor removes nobody instead of failing on an empty array."""
    from council_db.analysis.drift.trends import wide_panel_floor
    from council_db.analysis.joint.joint_model import DENSE_COLUMNS

    empty = np.zeros(0, dtype=np.int64)
    timed = TimedResiduals(empty, [f"r/{i}" for i in range(DENSE_COLUMNS + 1)], empty, empty,
                           np.zeros(0), "reviewer", empty)
    assert wide_panel_floor(timed) is True


def test_a_wide_panels_rolling_series_lists_the_subjects_at_the_floor_alone_and_says_so():
    """`council-db trends`' rolling series of a wide panel lists the subjects its trends test
    (50,000 reviewers' periods had been most of its 219 s), and a warning says how many were
    left out; up to the dense limit nothing is, and nothing is said."""
    from council_db.analysis.drift import trends
    from council_db.analysis.joint.joint_model import DENSE_COLUMNS
    from council_db.cli.trends import EVERY_US, _series

    timed = timed_panel(DENSE_COLUMNS + 100, 1_000)
    for number in range(4):  # r/0-r/3 score in every 10th session, each from its own start
        common = np.flatnonzero(np.isin(timed.session, np.arange(number, 1_000, 10)))
        timed.subject[common[::3]] = number
    rows = _series(trends.at_floor(timed), EVERY_US["7d"], {})
    assert {row["subject"] for row in rows} == {"r/0", "r/1", "r/2", "r/3"}
    present = len(np.unique(timed.subject))  # some of the panel's subjects gave all their records to r/0-r/3
    assert trends.floor_note(timed) == (f"wide panel: {present - 4:,} of {present:,} reviewers "
                                        "have fewer than 10 sessions and no trend, change search or rolling series "
                                        "(as they have no severity)")
    assert trends.floor_note(timed_panel(100, 1_000)) is None


def test_a_reviewers_position_count_holds_its_own_sessions_not_a_bin_per_window_session():
    """Whether a reviewer has two sessions to fit its slots on is counted over its own sessions:
    a bin per session of the window up to its last (8 bytes each: 2.7 MB for a reviewer late in
    333,333 sessions, and 50,000 times over in a 50,000-reviewer panel) had cost most of
    position per reviewer there."""
    from council_db.analysis.position import reviewer_position

    data = panel_data(4, 4, 1_000_000 // 3)
    rows = np.flatnonzero(data.reviewer == 0)[-2:]  # one reviewer's last two records
    tracemalloc.start()
    found = reviewer_position._slots(data, rows)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert data.session[rows[0]] != data.session[rows[1]] and found == ({}, None, 0, 0)
    assert peak < 1_000_000, f"{peak / 2 ** 20:.1f} MB"


def test_the_absorbed_fits_component_count_is_the_union_finds_on_connected_nested_and_split_graphs():
    """absorbed_fit.components (whole-array label propagation) counts the groups
    joint_design.connected_groups finds, on a random graph, chains, a graph in many pieces and
    one with nodes no edge touches."""
    from council_db.analysis.joint.absorbed_fit import components
    from council_db.analysis.joint.joint_design import connected_groups

    rng = np.random.default_rng(7)
    chain = np.arange(500)
    graphs = [(rng.integers(0, 300, 400), rng.integers(0, 200, 400), 300, 200),  # many pieces, untouched nodes
              (rng.integers(0, 50, 5_000), rng.integers(0, 40, 5_000), 50, 40),  # one piece
              (np.r_[chain, chain[1:]], np.r_[chain, chain[:-1]], 500, 500),  # a chain 1,000 nodes long
              (np.arange(6) // 2, np.arange(6) % 3, 3, 3)]
    counts = [components(*graph) for graph in graphs]
    assert counts == [len(connected_groups(*graph)) for graph in graphs]
    assert counts[0] > 20 and counts[1] == counts[2] == 1
