"""The hierarchical model's columns: which random-effect blocks and fixed columns a window
has, and the design of a run of whole sessions, demeaned within each session (or each
(session, reviewer) group where the design fixes a reviewer's totals, as the joint model
does), so that the session effects never need a column of their own."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from council_db.analysis.joint.fixed_totals import fixed_totals
from council_db.analysis.joint.joint_model import centred_where_known
from council_db.analysis.loading.score_data import ScoreData, log_length_sd

# Random-effect blocks, in column order: each is a population of effects with one spread.
COMPONENTS = ("reviewer", "candidate", "slot", "length", "self")


@dataclass
class Terms:
    """The records the model uses (sorted by session) and what each column means."""

    rows: np.ndarray  # indices into the ScoreData of the records used, grouped by session
    unit: np.ndarray  # per used record: its fixed-effect group (session, or session x reviewer)
    session: np.ndarray  # per used record: its session number in the ScoreData
    reviewer: np.ndarray
    model: np.ndarray
    slot_index: np.ndarray  # per used record: index into ``slots``, -1 where not a display slot
    length: np.ndarray  # log length centred within its unit, per SD of log length; 0 where unknown
    own: np.ndarray  # bool: a self-review
    score: np.ndarray
    slots: list[int]  # the display slots seen
    self_reviewers: list[int]  # reviewers with self-reviews, in column order
    n_reviewers: int
    n_models: int
    length_sd: float  # the SD of log length the length columns are divided by (NaN: no length)
    severity_absorbed: bool  # the design fixes each reviewer's totals: severity is not identified
    # per used record: its answer (unit x candidate, numbered by unit then candidate), -1 where the
    # design fixes each reviewer's totals (an answer then spans units: no answer component)
    answer: np.ndarray

    has_length: bool = False  # some answer's length is known and varies within its unit
    random_widths: dict[str, int] = field(default_factory=dict)  # component -> its columns in Z
    fixed_names: list[str] = field(default_factory=list)  # the fixed columns of X, in order
    unit_starts: np.ndarray = field(init=False)  # each unit's first record, increasing

    def __post_init__(self) -> None:
        self.unit_starts = np.sort(np.unique(self.unit, return_index=True)[1])
        self.has_length = bool(np.isfinite(self.length_sd) and np.any(self.length != 0))
        k = len(self.slots) if len(self.slots) > 1 else 0
        self.random_widths = {"reviewer": 0 if self.severity_absorbed else self.n_reviewers,
                              "candidate": self.n_models, "slot": self.n_reviewers * k,
                              "length": self.n_reviewers if self.has_length else 0,
                              "self": len(self.self_reviewers)}
        # K-1 effect-coded slots, the panel's length slope, the pooled self-preference
        self.fixed_names = ([f"slot {s}" for s in self.slots[:-1]] if k else []) \
            + (["length"] if self.has_length else []) + (["self"] if self.self_reviewers else [])

    def blocks(self) -> dict[str, slice]:
        """Each random component's columns in Z."""
        out, start = {}, 0
        for name, width in self.random_widths.items():
            out[name] = slice(start, start + width)
            start += width
        return out

    def answer_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per answer: its number of scores and its unit (empty without answers)."""
        if not len(self.answer) or self.answer[0] < 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        sizes = np.bincount(self.answer)
        unit = np.zeros(len(sizes), dtype=np.int64)
        unit[self.answer] = self.unit
        return sizes, unit

    def units(self, records: int | None = None) -> int:
        """Units among the first ``records`` (all)."""
        return len(self.unit_starts) if records is None else int(np.searchsorted(self.unit_starts, records))

    def degrees(self, records: int | None = None) -> int:
        """Residual dimension after the unit effects: records minus units (of the first ``records``)."""
        return (len(self.rows) if records is None else records) - self.units(records)

    @property
    def q(self) -> int:
        return sum(self.random_widths.values())

    @property
    def p(self) -> int:
        return len(self.fixed_names)

    def design(self, start: int, stop: int) -> np.ndarray:
        """[Z X y] of used records start..stop (whole units), demeaned within unit."""
        part = slice(start, stop)
        rev, mod, slot = self.reviewer[part], self.model[part], self.slot_index[part]
        n, k = stop - start, len(self.slots) if len(self.slots) > 1 else 0
        length, own = self.length[part], self.own[part]
        w = np.zeros((n, self.q + self.p + 1))
        at = np.arange(n)
        b = self.blocks()
        if b["reviewer"].stop > b["reviewer"].start:
            w[at, b["reviewer"].start + rev] = 1.0
        w[at, b["candidate"].start + mod] = 1.0
        shown = slot >= 0
        if k:
            w[at[shown], b["slot"].start + rev[shown] * k + slot[shown]] = 1.0
        if self.has_length:
            w[at, b["length"].start + rev] = length
        self_col = {r: i for i, r in enumerate(self.self_reviewers)}
        if self_col:
            column = np.array([self_col.get(r, -1) for r in range(self.n_reviewers)])[rev]
            w[at[own], b["self"].start + column[own]] = 1.0
        fixed = self.q
        if k:
            codes = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
            w[shown, fixed:fixed + k - 1] = codes[slot[shown]]
            fixed += k - 1
        if self.has_length:
            w[:, fixed] = length
            fixed += 1
        if self_col:
            w[:, fixed] = own
        w[:, -1] = self.score[part]
        return _demeaned(w, self.unit[part])


def _demeaned(w: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Each column minus its mean within the record's unit (a block's units are whole, and
    numbered; bincount on them, not np.unique's hashing: half the fit's time went there)."""
    local = unit - unit.min() if len(unit) else unit
    size = np.maximum(np.bincount(local), 1)
    means = np.column_stack([np.bincount(local, weights=column, minlength=len(size)) for column in w.T])
    return w - (means / size[:, None])[local]


def terms(data: ScoreData) -> Terms:
    """The model's records and columns for a window: sessions (or a fixed-totals design's
    groups) with at least two scores, ordered by session so runs of sessions are blocks."""
    fixed = fixed_totals(data)
    session = np.asarray(data.session, dtype=np.int64)
    absorbed = session if fixed is None else np.asarray(fixed.group, dtype=np.int64)
    use = np.bincount(absorbed)[absorbed] >= 2 if len(absorbed) else np.zeros(0, dtype=bool)
    rows = np.flatnonzero(use)
    rows = rows[np.argsort(session[rows], kind="stable")]
    unit = absorbed[rows]
    _, unit = np.unique(unit, return_inverse=True)
    log_len = np.asarray(data.log_length, dtype=np.float64)[rows]
    sized = ~np.isnan(log_len)
    sd = log_length_sd(data)
    centred = centred_where_known(log_len, sized, unit) if len(rows) else log_len
    slots = sorted(np.unique(data.slot[rows][data.slot[rows] >= 0]).tolist())
    slot_index = np.searchsorted(slots, data.slot[rows]) if slots else np.zeros(len(rows), dtype=np.int64)
    slot_index = np.where(data.slot[rows] >= 0, slot_index, -1)
    own = np.asarray(data.self_review, dtype=bool)[rows]
    reviewer = np.asarray(data.reviewer, dtype=np.int64)[rows]
    model = np.asarray(data.model, dtype=np.int64)[rows]
    answer = np.full(len(rows), -1, dtype=np.int64)
    if fixed is None and len(rows):
        _, answer = np.unique(unit * len(data.models) + model, return_inverse=True)
    return Terms(rows=rows, unit=unit, session=session[rows], reviewer=reviewer,
                 model=model, slot_index=slot_index,
                 length=centred / sd if np.isfinite(sd) and sd > 0 else np.zeros(len(rows)),
                 own=own, score=np.asarray(data.score, dtype=np.float64)[rows], slots=slots,
                 self_reviewers=sorted(np.unique(reviewer[own]).tolist()), n_reviewers=len(data.reviewers),
                 n_models=len(data.models), length_sd=sd if np.isfinite(sd) and sd > 0 else np.nan,
                 severity_absorbed=fixed is not None, answer=answer)
