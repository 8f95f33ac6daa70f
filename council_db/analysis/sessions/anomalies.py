"""Sessions whose scores do not fit: a broken judge call, a parser that wrote the same score
everywhere, a reviewer answering at random.

Two statistics per session, each a sum of squares judged against a scaled chi-square whose
scale and effective degrees of freedom are fitted to the median and the 10th / 90th
percentile of all sessions (``scaled_chi_square_p``): calibrated against the rest, robustly,
so the few anomalies cannot hide by inflating the yardstick:

* flat: the sum over the session's reviewers of the squares of each reviewer's scores around
  its own mean there (nominal degrees of freedom: records - reviewers), lower tail. Catches
  "every reviewer gives every answer the same (extreme) score". Within each reviewer, because
  a reviewer's level is not flatness: judges often give every answer of an easy question one
  score each (MT-bench's GPT-4: all 10s), and whether the reviewers' scores then coincide
  says nothing more. On a discrete scale such sessions tie at 0 and can be common:
  ``_flat_p`` corrects for the atom and never gives them p = 0 or a p below the share of the
  window as flat as they are, once that share reaches 10%; nor below the chance that each of
  its reviewers is constant as often as the window's reviewers are (``_constant_by_chance``:
  a pairwise session where every judge ties).
* erratic: per reviewer in the session, the sum of its squared joint-model residuals (nominal
  degrees of freedom: its records x (1 - 1/session records), the session effect taking one),
  fitted per reviewer, upper tail, times the number of reviewers in the session (Bonferroni).
  Catches "one reviewer's residuals are extreme".

A session's p-value is twice the smaller of the two (Bonferroni over the two statistics).
Benjamini-Hochberg q-values are the caller's business: over the sessions alone in
`council-db anomalies`, over every test of the report in `bias-report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from council_db.analysis.loading.score_data import ScoreData, keep_sessions
from council_db.analysis.sessions.session_cells import Cells, of_records, per_session
from council_db.analysis.stats import order_statistics
from council_db.analysis.stats.chi2_batches import chi2_tail
from council_db.analysis.stats.distributions import chi2_isf
from council_db.analysis.stats.effective_df import effective_df

MIN_SESSIONS = 20
MIN_RECORDS = 4  # a session with fewer scores has no spread worth judging
FDR = 0.05
TAIL_QUANTILE = 0.9  # the yardstick's tail point: 90th percentile (10th for the lower tail)
SCANNED_CELLS = 200_000_000  # tested reviewers x cells up to which each one's cells are found by a scan


@dataclass(frozen=True)
class SessionAnomaly:
    """One session's test; ``reason`` says what stands out (for every session, flagged or not)."""

    session: int
    session_id: str
    p_value: float
    reason: str
    spread_ratio: float  # the telling SD over its typical value: << 1 flat, >> 1 erratic


@dataclass(frozen=True)
class SessionTests:
    """Both tests of every session of ``cells``, as arrays (a million sessions' tests are
    never a million objects until a caller asks for the few it shows)."""

    cells: Cells
    records: np.ndarray  # per session: its scores
    tested: np.ndarray  # bool: at least MIN_RECORDS scores
    p_value: np.ndarray  # twice the smaller of the two tests' p, at most 1
    flat_first: np.ndarray  # bool: the flat test gave the smaller p
    sd: np.ndarray  # within-reviewer SD
    typical_sd: float
    worst: np.ndarray  # the reviewer whose residuals fit worst
    ratio: np.ndarray  # its residual SD over its usual

    def anomaly(self, g: int, session_id: str) -> SessionAnomaly:
        """Session ``g``'s test, with what stands out in it."""
        cells = self.cells
        if self.flat_first[g]:
            constant = bool(cells.low[g] == cells.high[g])
            reason = _flat_reason(int(self.records[g]), float(cells.low[g]), constant, self.sd[g],
                                  self.typical_sd)
            spread = self.sd[g] / self.typical_sd
        else:
            reason = (f"reviewer {cells.reviewers[self.worst[g]]}'s scores do not fit: residual SD "
                      f"{self.ratio[g]:.1f}x its usual")
            spread = self.ratio[g]
        return SessionAnomaly(int(cells.session_ids[g]), session_id, float(self.p_value[g]), reason, float(spread))


def sessions(data: ScoreData, residuals: np.ndarray) -> list[SessionAnomaly]:
    """A p-value per session with at least MIN_RECORDS scores; empty below MIN_SESSIONS sessions."""
    tests = session_tests(of_records(data, residuals))
    if tests is None:
        return []
    return [tests.anomaly(g, data.session_keys[g]) for g in np.flatnonzero(tests.tested).tolist()]


def session_tests(cells: Cells) -> SessionTests | None:
    """Both tests of every session with at least MIN_RECORDS scores; None below MIN_SESSIONS."""
    records = cells.records()
    tested = records >= MIN_RECORDS
    if tested.sum() < MIN_SESSIONS:
        return None
    flat_p, sd, typical_sd = _flatness(cells, records, tested)
    erratic_p, worst, ratio = _erratic(cells, records)
    p = np.minimum(1.0, 2.0 * np.minimum(flat_p, erratic_p))
    return SessionTests(cells, records, tested, p, flat_p <= erratic_p, sd, typical_sd, worst, ratio)


def _flatness(cells: Cells, records: np.ndarray, tested: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Lower-tail p of each session's within-reviewer sum of squares, its SD and the typical SD.

    Sessions where no reviewer scored two answers have no within-reviewer spread: p = 1."""
    ss, nominal, per_reviewer = _within_session_ss(cells, records)
    judged = tested & (nominal >= 1)
    sd = np.sqrt(ss / np.maximum(nominal, 1))
    p = np.ones(cells.n_sessions)
    if judged.sum() < MIN_SESSIONS:
        return p, sd, 1.0
    p[judged] = _flat_p(*(_where(values, judged) for values in (ss, nominal, per_reviewer)), cells.step)
    del per_reviewer
    constant = judged & (ss == 0)
    p[constant] = np.maximum(p[constant], _constant_by_chance(cells, np.flatnonzero(constant)))
    return p, sd, order_statistics.median(sd[judged])


def _constant_by_chance(cells: Cells, sessions: np.ndarray) -> np.ndarray:
    """For these sessions: how likely every reviewer's scores there are each one score, if each
    (session, reviewer) cell is as often constant as the window's cells of its size are,
    independently. A floor for a constant session's p: on a scale of few values a constant
    cell is common (a pairwise tie, 0.5 and 0.5, in a quarter of calls), and a session of
    three judges tying in both orders then happens in one report of ten; the continuous
    yardstick called it p 1e-5 and flagged it. On a fine scale constant cells are rare and
    the floor is far below the yardstick's p."""
    share = cells.constant_share
    asked = np.zeros(cells.n_sessions, dtype=bool)
    asked[sessions] = True
    chosen = np.flatnonzero(asked)
    count = cells.count[np.repeat(asked, cells.present)]  # their cells, session by session
    session = np.repeat(np.arange(len(chosen)), cells.present[chosen])
    scored = count >= 2
    log_chance = np.zeros(cells.n_sessions)
    log_chance[chosen] = np.bincount(session[scored], weights=np.log(np.maximum(share[count[scored]],
                                                                                np.finfo(float).tiny)),
                                     minlength=len(chosen))
    return np.exp(log_chance[sessions])


def flat_p_values(data: ScoreData) -> np.ndarray:
    """Per session, the lower-tail p of "flatter than the window's sessions" (1 where untested)."""
    cells = of_records(data, np.full(data.n_records, np.nan))
    records = cells.records()
    tested = records >= MIN_RECORDS
    if tested.sum() < MIN_SESSIONS:
        return np.ones(data.n_sessions)
    return _flatness(cells, records, tested)[0]


def _within_session_ss(cells: Cells, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per session: the sum over its reviewers of the squares of each one's scores around its
    own mean there, the degrees of freedom (records - reviewers present) and the mean number
    of scores per reviewer.

    Within each reviewer, not around the session mean: a reviewer's level (harsh, generous)
    is not flatness, and a session where every reviewer gives every answer one score is as
    flat as one where they also agree: both are the atom at 0 (see ``_flat_p``)."""
    ss = cells.within
    present = cells.present
    return ss, (records - present).astype(float), records / np.maximum(present, 1)


def _where(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """values[rows], without the copy where every row is in (a million sessions: 8 MB each)."""
    return values if rows.all() else values[rows]


def _flat_p(ss: np.ndarray, nominal_df: np.ndarray, per_reviewer: np.ndarray, step: float) -> np.ndarray:
    """Lower-tail p of the sums of squares against the scaled chi-square fitted to the window,
    made right for a discrete scale.

    "Constant" here is every reviewer giving every answer one score (the sums of squares are
    within reviewers, ``_within_session_ss``), whether or not the reviewers agree: on real
    data that is what is common, and counting only the sessions where they also agree would
    call rare what is merely a coincidence of levels (the simulator's real-like data: 15% of
    sessions with every reviewer constant, about 1% with all reviewers on one score, and
    those were flagged in half the reports).

    On a scale with step d a constant session is an atom: the continuous yardstick gives it
    p = 0, whatever share of the window it holds (MT-bench: 25 of 160 questions scored all
    10s). Two things fix that:

    * continuity correction: a constant session's sum of squares is taken as half the
      smallest non-zero one its scores could have had (one score of a reviewer's n one step
      off: d^2 (n - 1) / n, n its scores per reviewer), so its p is the yardstick's
      probability of "about as flat as that", never 0;
    * ties in the fit: when the sessions at least as flat as the constant ones reach the 10th
      percentile the yardstick's lower point, the fit matches the yardstick there to their
      share instead, so a constant session's p is exactly the share of the window at least as
      flat as it (ties and itself included): 25 of 160 sessions -> p = 25/160 = 0.16.
      Below 10% they stay outside the fit, so a few broken sessions cannot hide by
      moving the yardstick: one constant session among hundreds that vary is still flagged.

    Either way a constant session's p is never below that share: with a tenth of the window
    or more as flat, being as flat as they are is not rare. From half the window on the
    yardstick cannot be fitted (its median is in the atom) and that share is the p-value."""
    constant = ss == 0
    corrected = np.where(constant, step ** 2 * (per_reviewer - 1) / (2.0 * per_reviewer), ss)
    per_df = corrected / nominal_df
    if not constant.any() or step == 0:
        return scaled_chi_square_p(corrected, nominal_df, lower=True)
    atom = float(per_df[constant].max())
    share = float(np.mean(per_df <= atom))
    if share < 1.0 - TAIL_QUANTILE:
        return scaled_chi_square_p(corrected, nominal_df, lower=True)
    empirical = np.searchsorted(np.sort(per_df), per_df, side="right") / len(per_df)  # ties, itself included
    if share >= 0.5:
        return empirical
    return np.maximum(scaled_chi_square_p(corrected, nominal_df, lower=True, tail_point=(share, atom)), empirical)


def _erratic(cells: Cells, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per session: Bonferroni p of its worst reviewer (the first of the smallest p), that
    reviewer, its residual SD ratio. A reviewer's cells at a time, sessions in order
    (``_reviewer_cells``): only reviewers with MIN_SESSIONS cells the test reads are tested,
    so a panel of 50,000 rare judges costs its cells, not a pass per reviewer. Every
    reviewer's yardstick is fitted in one call (``stats/effective_df``), between a pass that
    summarises each column and one that tests it."""
    g = cells.n_sessions
    read = cells.residual_count >= 2  # the cells the test reads
    reviewers_in = per_session(read.astype(np.int32), cells.present, np.add, 0)  # its copy gone before the columns
    sizes = np.bincount(cells.reviewer[read], minlength=len(cells.reviewers))
    tested = np.flatnonzero(sizes >= MIN_SESSIONS).tolist()
    cells_of = _reviewer_cells(cells, read, len(tested))

    def column(r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cell, rows = cells_of(r)
        nominal = np.maximum(records[rows], 1).astype(float)  # made in place from here: 8 MB a step at 1M
        np.reciprocal(nominal, out=nominal)
        np.subtract(1.0, nominal, out=nominal)  # the session effect's share of a record
        nominal *= cells.residual_count[cell]
        return rows, cells.residual_square[cell], nominal

    fits = {}
    for r in tested:  # a column's arrays live for its own step only (a call each): 17 MB at 1M
        fit = _yardstick(*column(r)[1:], lower=False)
        if fit is not None:
            fits[r] = fit
    k_of = dict(zip(fits, effective_df(np.array([f[1] for f in fits.values()]),
                                        np.array([f[2] for f in fits.values()])).tolist()))
    # the first reviewer is every session's worst until another fits worse (p 1 and ratio 1 where untested)
    best_p, worst, best_ratio = np.ones(g), np.zeros(g, dtype=np.int32), np.ones(g)
    for r in tested:
        at, ss, nominal = column(r)
        typical = fits[r][0] if r in fits else 0.0  # the median of ss / nominal (<= 0: no yardstick)
        p = _tail_p(ss, nominal, False, k_of.get(r), typical)
        ratio = np.ones(len(ss))
        if typical > 0:  # sqrt(ss / nominal / typical), made in place
            np.divide(ss, nominal, out=ratio)
            ratio /= typical
            np.sqrt(ratio, out=ratio)
        del ss, nominal
        better = p < best_p[at] if r else np.ones(len(at), dtype=bool)  # untested: p 1, never better
        at = at[better]
        best_p[at], worst[at], best_ratio[at] = p[better], r, ratio[better]
    return np.minimum(1.0, best_p * np.maximum(reviewers_in, 1)), worst, best_ratio


def _reviewer_cells(cells: Cells, read: np.ndarray, tested: int) \
        -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    """A reviewer's cells the test reads (``read``), in session order, and their sessions:
    found by a scan of every cell per reviewer while the ``tested`` reviewers are few against
    the cells, each cell's session made for the step and gone before its tests (16 MB at a
    million 4x4 sessions, the tests' peak; 20 ms a step), else from one stable sort by reviewer
    and each cell's session kept (a wide panel's many tested reviewers: a scan each would be
    reviewers x cells)."""
    reviewer = cells.reviewer
    if tested * len(reviewer) <= SCANNED_CELLS:
        def scanned(r: int) -> tuple[np.ndarray, np.ndarray]:
            cell = np.flatnonzero(read & (reviewer == r))
            return cell, cells.session_of()[cell]
        return scanned
    session = cells.session_of()
    at = np.flatnonzero(read)
    by_reviewer = at[np.argsort(reviewer[at], kind="stable")]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(reviewer[at], minlength=int(reviewer.max()) + 1))])

    def sorted_out(r: int) -> tuple[np.ndarray, np.ndarray]:
        cell = by_reviewer[bounds[r]:bounds[r + 1]]
        return cell, session[cell]
    return sorted_out


def scaled_chi_square_p(ss: np.ndarray, nominal_df: np.ndarray, lower: bool,
                        tail_point: tuple[float, float] | None = None) -> np.ndarray:
    """Tail p-values of sums of squares against s x chi-square(k) / k per nominal degree of
    freedom, with s and the effective degrees of freedom k fitted to the median and the
    10th (lower tail) or 90th (upper tail) percentile of ss / nominal_df over all sessions
    (k at most the nominal degrees of freedom), or to ``tail_point`` = (quantile, value) when
    given (the flat test's tied constant sessions, see ``_flat_p``).

    Fitting k, not assuming it, is what makes the tail honest when scores share more than the
    model knows (an answer every reviewer likes, a length effect): the sums then spread more
    than chi-square(nominal) would say. Quantiles, not moments, so the few broken sessions
    cannot move the yardstick."""
    fit = _yardstick(ss, nominal_df, lower, tail_point)
    if fit is None:
        return np.ones(len(ss))
    k = float(effective_df(np.array([fit[1]]), np.array([fit[2]]))[0])
    return _tail_p(ss, nominal_df, lower, k, fit[0])


def _yardstick(ss: np.ndarray, nominal_df: np.ndarray, lower: bool,
               tail_point: tuple[float, float] | None = None) -> tuple[float, float, float] | None:
    """The quantile points the yardstick is fitted to: the median of ss / nominal_df, and the
    quantile q with its value over the median (None: a median of 0, no yardstick)."""
    per_df = ss / nominal_df  # ours: sorted in place by both (a million sessions: no copy each)
    median = order_statistics.median(per_df, overwrite=True)
    if median <= 0:
        return None
    q = TAIL_QUANTILE if not lower else 1.0 - TAIL_QUANTILE
    observed = float(order_statistics.linear_quantiles(per_df, np.array([q]), overwrite=True)[0]) / median
    if tail_point is not None:
        q, observed = tail_point[0], tail_point[1] / median
    return median, q, observed


def _tail_p(ss: np.ndarray, nominal_df: np.ndarray, lower: bool, k_fitted: float | None, median: float) \
        -> np.ndarray:
    """The tail p-values against the yardstick of effective degrees of freedom ``k_fitted``
    (None: no yardstick, every p is 1) whose ``median`` of ss / nominal_df ``_yardstick`` found."""
    if k_fitted is None:
        return np.ones(len(ss))
    one_shape = (nominal_df == nominal_df[0]).all()  # a council of one size: no sort for the median
    typical_nominal = float(nominal_df[0]) if one_shape else order_statistics.median(nominal_df)
    # Never more degrees of freedom than the nominal ones: a fitted k above them only says the
    # bulk looks tame, and extrapolating a light tail from 300 sessions makes p-values too small.
    k_typical = min(k_fitted, typical_nominal)
    scale = median * k_typical / float(chi2_isf(0.5, k_typical))  # s: per-df values ~ s chi2(k)/k
    # one shape: one k, broadcast rather than an array a session (8 MB at a million)
    k = np.broadcast_to(k_typical, len(ss)) if one_shape else k_typical * nominal_df / typical_nominal
    x = ss / nominal_df  # per df, then (in place) x = per_df * k / scale
    x *= k
    x /= scale
    p = chi2_tail(x, k, lower)  # sessions of one shape share their yardstick's k: one log Gamma each
    return np.maximum(p, np.finfo(float).tiny, out=p)  # never exactly 0: that would be underflow, not evidence


def _flat_reason(records: int, first: float, constant: bool, sd: float, typical_sd: float) -> str:
    """What a flat session looks like: one score everywhere, one score per reviewer (the
    within-reviewer spread is 0 though the reviewers differ), or little spread."""
    if constant:
        return f"every score is {first:g} ({records} scores)"
    if sd == 0:
        return f"each reviewer gives every answer one score ({records} scores)"
    return f"scores barely vary within each reviewer: SD {sd:.2f} against a typical {typical_sd:.2f}"


def flagged(data: ScoreData, residuals: np.ndarray) -> list[tuple[SessionAnomaly, float]]:
    """The sessions flagged at q <= FDR, Benjamini-Hochberg over the sessions alone, with q."""
    from council_db.analysis.stats import benjamini_hochberg

    found = sessions(data, residuals)
    q_values = benjamini_hochberg([a.p_value for a in found]) if found else []
    return [(a, float(q)) for a, q in zip(found, q_values) if q <= FDR]


def exclude(data: ScoreData) -> tuple[ScoreData, list[SessionAnomaly]]:
    """The data without its flagged sessions, and those sessions (for --exclude-anomalies)."""
    from council_db.analysis.joint import joint_model

    dropped = [a for a, _ in flagged(data, joint_model.fit(data).residuals)]
    if not dropped:
        return data, []
    keep = np.ones(data.n_sessions, dtype=bool)
    keep[[a.session for a in dropped]] = False
    return keep_sessions(data, keep), dropped


def excluded_note(dropped: list[SessionAnomaly]) -> str:
    """What --exclude-anomalies left out, for the report's warnings."""
    if not dropped:
        return "--exclude-anomalies: no session was flagged as anomalous, nothing left out"
    listed = ", ".join(a.session_id for a in dropped[:5]) + (", ..." if len(dropped) > 5 else "")
    return (f"--exclude-anomalies: {len(dropped)} anomalous session(s) left out of this report "
            f"(flagged at q <= {FDR} by council-db anomalies): {listed}")
