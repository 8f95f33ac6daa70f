"""Position bias per reviewer. Pooled over reviewers, one that favours the first-shown answer
and one that favours the last cancel out, and the report would show nothing.

* Slot effects: the joint model fitted to the reviewer's own display-slot scores (session and
  candidate effects, length, self-review), so the reviewer's own view of each candidate is
  taken out before its slots are compared; relative to its average slot, CIs clustered by
  session, and a Wald test of "all its slots equal". Where the reviewer saw every candidate in
  one slot only, its liking of a candidate and its slot preference cannot be told apart: the
  slot effects are not identified and are left out.
* First-shown wins: its decided judgments of pairs seen in both orders (``position``), the
  share won by the answer shown first; p tests 0.5.
* Swaps: its swapped pairs (``swaps``), when it scored pairs in both orders.

A test rests on at least MIN_SESSIONS sessions, so no reviewer is flagged from one session.
"""

from __future__ import annotations

import msgspec
import numpy as np
from msgspec.structs import replace

from council_db.analysis.joint import joint_model
from council_db.analysis.joint.least_squares import Effect, WaldTest
from council_db.analysis.loading.score_data import ScoreData, known_style
from council_db.analysis.position.consistency import Judgments, first_shown_share
from council_db.analysis.position.swaps import Swaps, SwapSummary, summarise
from council_db.analysis.stats import Estimate
from council_db.analysis.stats.unique_rows import distinct

MIN_SESSIONS = 10
NONE = np.zeros(0, dtype=np.int64)  # the positions of a reviewer's judgments or swaps when it has none


class ReviewerPosition(msgspec.Struct, frozen=True):
    reviewer: str
    slot_effects: dict[int, Effect]  # identified effects only; empty when none is
    test: WaldTest | None  # all of its slots equal; None below MIN_SESSIONS or when not identified
    n_sessions: int  # sessions its slot effects rest on
    n_records: int
    first_shown: Estimate | None  # None below MIN_SESSIONS sessions with decided judgments
    judgments: int
    swaps: SwapSummary | None


def by_reviewer(data: ScoreData, judgments: Judgments, found: Swaps) -> list[ReviewerPosition]:
    """One row per reviewer with display-slot scores. Each reviewer's judgments and swaps are
    found by one sort of each, not a scan of all of them per reviewer (quadratic in the panel)."""
    out = []
    shown = np.flatnonzero(data.slot >= 0)
    by_reviewer = shown[np.argsort(data.reviewer[shown], kind="stable")]
    numbers, starts = np.unique(data.reviewer[by_reviewer], return_index=True)
    judged, swapped = _rows_of(judgments.reviewer), _rows_of(found.reviewer)
    for number, rows in zip(numbers.tolist(), np.split(by_reviewer, starts[1:])):
        effects, test, n_sessions, n_records = _slots(data, np.sort(rows))
        mine, swaps_of = judged.get(number, NONE), swapped.get(number, NONE)
        first_shown = None
        if len(distinct(judgments.session[mine])) >= MIN_SESSIONS:
            first_shown = first_shown_share(Judgments(judgments.session[mine], judgments.reviewer[mine],
                                                      judgments.first_won[mine], 0))
        out.append(ReviewerPosition(
            reviewer=data.reviewers[number], slot_effects=effects, test=test, n_sessions=n_sessions,
            n_records=n_records, first_shown=first_shown, judgments=len(mine), swaps=summarise(found, swaps_of)))
    return out


def _slots(data: ScoreData, rows: np.ndarray) -> tuple[dict[int, Effect], WaldTest | None, int, int]:
    """A reviewer's identified slot effects (none unless two are), its all-slots-equal test,
    and the sessions and records they rest on. The joint model needs two sessions holding two
    or more of the reviewer's scores; with fewer it estimates nothing and uses what those
    hold, which is said without a fit (a panel of 50,000 reviewers of 3 scores each)."""
    per_session = np.unique(data.session[rows], return_counts=True)[1]  # its sessions', not a bin per window session
    sessions = int((per_session >= 2).sum())
    if sessions < 2:
        return {}, None, sessions, int(per_session[per_session >= 2].sum())
    fit = joint_model.fit(_own_records(data, rows))
    effects = {slot: effect for slot, effect in fit.slot_effects.items() if effect.identified}
    if len(effects) < 2:
        return {}, None, fit.n_sessions, fit.n_records
    return effects, fit.position_test if fit.n_sessions >= MIN_SESSIONS else None, fit.n_sessions, fit.n_records


def _rows_of(reviewer: np.ndarray) -> dict[int, np.ndarray]:
    """Reviewer code -> the positions of its entries, in their order (as a mask would select)."""
    order = np.argsort(reviewer, kind="stable")
    numbers, starts = np.unique(reviewer[order], return_index=True)
    return dict(zip(numbers.tolist(), np.split(order, starts[1:])))


def _own_records(data: ScoreData, rows: np.ndarray) -> ScoreData:
    """One reviewer's records (``rows``, in order) with only its own sessions, candidates and
    name: the same fit as on the whole window's numbering, at the cost of its own records
    rather than the window's and the whole panel's (which made one fit per reviewer quadratic)."""
    sessions, session = np.unique(data.session[rows], return_inverse=True)
    models, model = np.unique(data.model[rows], return_inverse=True)
    reviewer = data.reviewer[rows]
    return replace(
        data, session=session.reshape(-1).astype(np.int64), reviewer=np.zeros(len(rows), dtype=np.int64),
        model=model.reshape(-1).astype(np.int64), slot=data.slot[rows], log_length=data.log_length[rows],
        score=data.score[rows], self_review=data.self_review[rows], reviewers=[data.reviewers[int(reviewer[0])]],
        models=[data.models[m] for m in models.tolist()],
        session_keys=[data.session_keys[s] for s in sessions.tolist()], session_ts_us=data.session_ts_us[sessions],
        style=None if data.style is None else known_style(data.style[rows]))
