"""Sessions whose scores do not fit: a broken judge call, a parser that wrote the same score
everywhere, a reviewer answering at random.

Two statistics per session, each calibrated against the other sessions with robust
estimates (medians), so the anomalies themselves cannot hide by inflating the yardstick:

* flat: the sum of squares of the session's scores around their mean, which is about
  c x chi-square(records - 1) (more spread than that where reviewers and candidates differ,
  which only makes the test conservative); c is estimated from the median over sessions, and
  the p-value is the chi-square lower tail. Catches "every reviewer gives every answer the
  same (extreme) score".
* erratic: per reviewer in the session, the sum of its squared joint-model residuals, which is
  about sigma_r^2 x chi-square(nu) with nu = its records x (1 - 1/session records) (the session
  effect takes one degree of freedom); sigma_r^2 is estimated from the median over sessions,
  and the p-value is the chi-square upper tail, times the number of reviewers in the session
  (Bonferroni). Catches "one reviewer's residuals are extreme".

A session's p-value is twice the smaller of the two (Bonferroni over the two statistics).
Benjamini-Hochberg q-values are the caller's business: over the sessions alone in
`council-db anomalies`, over every test of the report in `bias-report`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis_data import ScoreData, keep_sessions

MIN_SESSIONS = 20
MIN_RECORDS = 4  # a session with fewer scores has no spread worth judging
FDR = 0.05


@dataclass(frozen=True)
class SessionAnomaly:
    """One session's test; ``reason`` says what stands out (for every session, flagged or not)."""

    session: int
    session_id: str
    p_value: float
    reason: str
    spread_ratio: float  # the telling SD over its typical value: << 1 flat, >> 1 erratic


def sessions(data: ScoreData, residuals: np.ndarray) -> list[SessionAnomaly]:
    """A p-value per session with at least MIN_RECORDS scores; empty below MIN_SESSIONS sessions."""
    records = np.bincount(data.session, minlength=data.n_sessions)
    tested = records >= MIN_RECORDS
    if tested.sum() < MIN_SESSIONS:
        return []
    flat_p, sd, typical_sd = _flatness(data, records, tested)
    erratic_p, worst, ratio = _erratic(data, residuals, records)
    out = []
    for g in np.flatnonzero(tested).tolist():
        p = min(1.0, 2.0 * min(flat_p[g], erratic_p[g]))
        if flat_p[g] <= erratic_p[g]:
            reason, spread = _flat_reason(data, g, sd[g], typical_sd), sd[g] / typical_sd
        else:
            reason = (f"reviewer {data.reviewers[worst[g]]}'s scores do not fit: residual SD {ratio[g]:.1f}x "
                      "its usual")
            spread = ratio[g]
        out.append(SessionAnomaly(g, data.session_keys[g], float(p), reason, float(spread)))
    return out


def _flatness(data: ScoreData, records: np.ndarray, tested: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Lower-tail p of each session's within-session sum of squares against c x chi-square(n - 1)."""
    from scipy.special import chdtr, chdtri

    n = np.maximum(records, 1)
    total = np.bincount(data.session, weights=data.score, minlength=data.n_sessions)
    square = np.bincount(data.session, weights=data.score ** 2, minlength=data.n_sessions)
    ss = np.maximum(square - total ** 2 / n, 0.0)
    nu = np.maximum(n - 1, 1).astype(float)
    sd = np.sqrt(ss / nu)
    typical_nu = float(np.median(nu[tested]))
    scale = float(np.median(ss[tested] / nu[tested])) / (float(chdtri(typical_nu, 0.5)) / typical_nu)
    if scale <= 0:
        return np.ones(data.n_sessions), sd, 1.0
    return chdtr(nu, ss / scale), sd, float(np.median(sd[tested]))


def _erratic(data: ScoreData, residuals: np.ndarray, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per session: Bonferroni p of its worst reviewer, that reviewer, its residual SD ratio."""
    from scipy.special import chdtrc, chdtri

    n_rev, g = len(data.reviewers), data.n_sessions
    ok = np.isfinite(residuals)
    cell = data.session[ok] * n_rev + data.reviewer[ok]
    ss = np.bincount(cell, weights=residuals[ok] ** 2, minlength=g * n_rev).reshape(g, n_rev)
    count = np.bincount(cell, minlength=g * n_rev).reshape(g, n_rev).astype(float)
    nu = count * (1.0 - 1.0 / np.maximum(records, 1))[:, None]
    has = count >= 2
    p = np.ones((g, n_rev))
    ratio = np.ones((g, n_rev))
    for r in range(n_rev):
        rows = has[:, r]
        if rows.sum() < MIN_SESSIONS:
            continue
        per_df = ss[rows, r] / nu[rows, r]
        typical_nu = float(np.median(nu[rows, r]))
        sigma2 = float(np.median(per_df)) / (float(chdtri(typical_nu, 0.5)) / typical_nu)
        if sigma2 <= 0:
            continue
        p[rows, r] = chdtrc(nu[rows, r], ss[rows, r] / sigma2)
        ratio[rows, r] = np.sqrt(per_df / sigma2)
    reviewers_in = np.maximum(has.sum(axis=1), 1)
    worst = p.argmin(axis=1)
    best_p = np.minimum(1.0, p[np.arange(g), worst] * reviewers_in)
    return best_p, worst, ratio[np.arange(g), worst]


def _flat_reason(data: ScoreData, g: int, sd: float, typical_sd: float) -> str:
    scores = data.score[data.session == g]
    if np.all(scores == scores[0]):
        return f"every score is {scores[0]:g} ({len(scores)} scores)"
    return f"scores barely vary: SD {sd:.2f} against a typical {typical_sd:.2f}"



def flagged(data: ScoreData, residuals: np.ndarray) -> list[tuple[SessionAnomaly, float]]:
    """The sessions flagged at q <= FDR, Benjamini-Hochberg over the sessions alone, with q."""
    from council_db.stats import benjamini_hochberg

    found = sessions(data, residuals)
    q_values = benjamini_hochberg([a.p_value for a in found]) if found else []
    return [(a, float(q)) for a, q in zip(found, q_values) if q <= FDR]


def exclude(data: ScoreData) -> tuple[ScoreData, list[SessionAnomaly]]:
    """The data without its flagged sessions, and those sessions (for --exclude-anomalies)."""
    from council_db import joint_model

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
