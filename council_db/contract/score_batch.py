"""A batch of validated records, held column by column.

The importer's writer is a single process and its per-record Python work bounds the
import rate. Turning the records into numpy columns (with repeated values such as session
keys, envelopes and model names stored once, each row pointing at them) happens in the
reading processes, so the writer only maps a batch's few distinct keys to ids and hands
whole columns to the database. Narrow integer types (positions and lengths fit 32 bits, as
ingest/validation.py checks) halve what crosses between the processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, Hashable, Sequence

import numpy as np

from council_db.contract.envelope import Envelope
from council_db.contract.fields import (
    DEFAULT_POSITION,
    DIMENSIONS_FIELD,
    EXCLUSION_REASONS,
    PROVENANCE_FIELDS,
    STYLE_FIELDS,
    UNKNOWN_LENGTH,
)
from council_db.contract.reviewer_identity import Identity
from council_db.contract.scales import ScoreScale

if TYPE_CHECKING:
    from council_db.contract.record import Record

_RECORD_FIELDS = attrgetter("session_id", "reviewer_id", "model_id", "position", "response_length_chars",
                            "score_value", "reviewer_kind", DIMENSIONS_FIELD, *STYLE_FIELDS, *PROVENANCE_FIELDS)
UNSCORED, OUT_OF_SCALE = EXCLUSION_REASONS["unscored"][0], EXCLUSION_REASONS["out_of_scale"][0]
ENVELOPE_TIME = np.iinfo(np.int64).min  # in ScoreBatch.times: the row's time is its envelope's


@dataclass
class ScoreBatch:
    """Validated records as columns: each distinct key, envelope, name and scale once, and
    per row the index of its own."""

    session_keys: list[str]  # distinct, in order of first appearance
    envelopes: list[Envelope]  # distinct (by identity), in order of first appearance
    names: list[str]  # distinct reviewer and model names (a reviewer with provenance: its identity's label)
    scales: list[ScoreScale]  # distinct score scales
    session: np.ndarray  # per row: index into session_keys
    envelope: np.ndarray  # per row: index into envelopes
    reviewer: np.ndarray  # per row: index into names
    model: np.ndarray  # per row: index into names
    position: np.ndarray
    length: np.ndarray  # fields.UNKNOWN_LENGTH where the line gave none
    score: np.ndarray
    scale: np.ndarray  # per row: index into scales
    exclusion: np.ndarray  # per row: exclusion reason id, 0 when the score is usable
    position_given: np.ndarray  # per row: False where the line had none (position holds DEFAULT_POSITION)
    reviewer_kinds: dict[str, str] = field(default_factory=dict)  # reviewer -> kind its lines state (the last)
    style: np.ndarray | None = None  # (rows, 4) float64 of STYLE_FIELDS, NaN unknown; None: no row has any
    dimensions: DimensionColumns | None = None  # the rows' named scores; None: no row has any
    identities: dict[str, Identity] = field(default_factory=dict)  # label -> identity, of reviewers with provenance
    # per row: its own time (UTC us, its text contract.timestamps.time_text in its envelope's
    # form) where only the time sets it apart from its envelope, else ENVELOPE_TIME; None: no
    # row has one. A judge log's gradings each have a time: one envelope and a number each.
    times: np.ndarray | None = None

    def judges(self) -> np.ndarray:
        """Per name: the index of its model's name (a reviewer with provenance is judged as its
        model for self-preference: reviewer_identity's docstring); the name's own index otherwise."""
        codes = np.arange(len(self.names), dtype=np.int32)
        if self.identities:
            index = {name: number for number, name in enumerate(self.names)}
            for label, identity in self.identities.items():
                codes[index[label]] = index[identity.model]
        return codes

    def self_review(self) -> np.ndarray:
        """Per row: whether the reviewer's model wrote the answer it scored."""
        return self.judges()[self.reviewer] == self.model

    def styled(self) -> np.ndarray:
        """Per row: whether any of its style is known (what store.AnswerStyle keeps)."""
        if self.style is None:
            return np.zeros(len(self), dtype=bool)
        return ~np.isnan(self.style).all(axis=1)

    def __len__(self) -> int:
        return len(self.session)

    @classmethod
    def empty(cls) -> ScoreBatch:
        none = np.zeros(0, dtype=np.int32)
        return cls([], [], [], [], none, none, none, none, none, none, np.zeros(0), none, np.zeros(0, dtype=np.int8),
                   np.zeros(0, dtype=bool))

    @classmethod
    def from_records(cls, records: Sequence[Record], envelopes: list[Envelope], envelope: Sequence[int],
                     scales: list[ScoreScale], scale: Sequence[int], times: np.ndarray | None = None) -> ScoreBatch:
        """Columns of validated records, given each record's envelope and scale as an index
        into the distinct ones (and its own time: ``times``)."""
        if not records:
            return cls.empty()
        keys, reviewers, models, positions, lengths, scores, kinds, dimensions, *rest = zip(
            *map(_RECORD_FIELDS, records))
        styles, provenance = rest[:len(STYLE_FIELDS)], rest[len(STYLE_FIELDS):]
        reviewers, identities = _identities(reviewers, provenance)
        session_keys, session = coded(keys)
        names, named = coded(reviewers + models + tuple({i.model: None for i in identities.values()}))
        score, scale_codes = np.array(scores, dtype=np.float64), np.array(scale, dtype=np.int32)
        given = np.ones(len(records), dtype=bool)
        if None in positions:  # a line without position: a C-speed scan, as it is rare
            given = np.fromiter((position is not None for position in positions), dtype=bool, count=len(records))
            positions = tuple(DEFAULT_POSITION if position is None else position for position in positions)
        if None in lengths:  # an answer whose length nobody knows: rare in llm-council's files
            lengths = tuple(UNKNOWN_LENGTH if length is None else length for length in lengths)
        stated = {} if kinds.count(None) == len(kinds) else {
            reviewer: kind for reviewer, kind in zip(reviewers, kinds) if kind is not None}
        return cls(session_keys, envelopes, names, scales, session, np.array(envelope, dtype=np.int32),
                   named[:len(records)], named[len(records):2 * len(records)], np.array(positions, dtype=np.int32),
                   np.array(lengths, dtype=np.int32), score, scale_codes, exclusions(score, scales, scale_codes),
                   given, stated, _style(styles), DimensionColumns.of(dimensions), identities, times)

    @classmethod
    def concat(cls, parts: list[ScoreBatch]) -> ScoreBatch:
        """One batch of the parts' rows, in order, each distinct key, envelope, name and
        scale still once (envelopes and scales by identity, as the normaliser shares them)."""
        if len(parts) == 1:
            return parts[0]
        session_keys, session = _merged([p.session_keys for p in parts], [[p.session] for p in parts], None)
        envelopes, envelope = _merged([p.envelopes for p in parts], [[p.envelope] for p in parts], id)
        names, named = _merged([p.names for p in parts], [[p.reviewer, p.model] for p in parts], None)
        scales, scale = _merged([p.scales for p in parts], [[p.scale] for p in parts], id)
        joined = [np.concatenate([getattr(p, name) for p in parts])
                  for name in ("position", "length", "score", "exclusion", "position_given")]
        kinds = {reviewer: kind for part in parts for reviewer, kind in part.reviewer_kinds.items()}
        style = None if all(part.style is None for part in parts) else np.concatenate(
            [np.full((len(part), len(STYLE_FIELDS)), np.nan) if part.style is None else part.style for part in parts])
        identities = {label: identity for part in parts for label, identity in part.identities.items()}
        times = None if all(part.times is None for part in parts) else np.concatenate(
            [np.full(len(part), ENVELOPE_TIME) if part.times is None else part.times for part in parts])
        return cls(session_keys, envelopes, names, scales, session[0], envelope[0], named[0], named[1],
                   *joined[:3], scale[0], *joined[3:], kinds, style, DimensionColumns.concat(parts), identities,
                   times)

    def state_reviewer_kind(self, kind: str) -> None:
        """``kind`` for every reviewer whose lines state none (import --reviewer-kind)."""
        reviewers = (self.names[code] for code in np.unique(self.reviewer).tolist())
        self.reviewer_kinds = {**dict.fromkeys(reviewers, kind), **self.reviewer_kinds}

    def first_envelopes(self, sessions: Sequence[int] | None = None) -> list[Envelope]:
        """Each session's envelope as its first row has it (its own time included); of
        ``sessions`` only (indices into session_keys) when given: the writer asks for the
        sessions new to the database, where a run log's batch holds mostly sessions stored
        before, and an envelope made at each one's time cost 6 us (81,000 for 200,000 records)."""
        _, first_rows = np.unique(self.session, return_index=True)
        if sessions is not None:
            first_rows = first_rows[np.asarray(sessions, dtype=np.intp)]
        firsts = [self.envelopes[code] for code in self.envelope[first_rows].tolist()]
        if self.times is None:
            return firsts
        return [envelope if time == ENVELOPE_TIME else envelope.with_time(time)
                for envelope, time in zip(firsts, self.times[first_rows].tolist())]


@dataclass
class DimensionColumns:
    """A batch's named scores (a rubric's dimensions), one entry per record and dimension:
    sparse, as most records have none and a few have several."""

    names: list[str]  # distinct dimension names, in order of first appearance
    row: np.ndarray  # per entry: the record's row in its batch
    name: np.ndarray  # per entry: index into names
    score: np.ndarray  # per entry: the score, on the record's scale

    @classmethod
    def of(cls, values: Sequence[dict[str, float] | None]) -> DimensionColumns | None:
        """The entries of each record's ``score_dimensions`` (None: it has none), in record
        order and, within a record, in its line's order; None when no record has any (one
        C-speed count for llm-council's lines)."""
        if values.count(None) == len(values):
            return None
        rows: list[int] = []
        names: list[str] = []
        scores: list[float] = []
        for number, named in enumerate(values):
            if named:
                rows += [number] * len(named)
                names += named
                scores += named.values()
        distinct, code = coded(names)
        return cls(distinct, np.array(rows, dtype=np.int32), code, np.array(scores, dtype=np.float64))

    @classmethod
    def concat(cls, parts: Sequence[ScoreBatch]) -> DimensionColumns | None:
        """The parts' entries as one batch's (rows counted on from each part's first row)."""
        found = [(start, part.dimensions) for start, part in zip(np.cumsum([0, *map(len, parts)]).tolist(), parts)
                 if part.dimensions is not None]
        if not found:
            return None
        names, name = _merged([d.names for _, d in found], [[d.name] for _, d in found], None)
        return cls(names, np.concatenate([d.row + start for start, d in found]), name[0],
                   np.concatenate([d.score for _, d in found]))

    def __len__(self) -> int:
        return len(self.row)


def _style(columns: list[tuple]) -> np.ndarray | None:
    """STYLE_FIELDS as a (rows, 4) float64 array, NaN where unknown; None when no row has any
    (llm-council's lines: one C-speed count per field)."""
    if all(column.count(None) == len(column) for column in columns):
        return None
    return np.array([[np.nan if value is None else value for value in column] for column in columns],
                    dtype=np.float64).T.copy()


def _identities(reviewers: tuple, provenance: list[tuple]) -> tuple[tuple, dict[str, Identity]]:
    """Each row's reviewer as its identity's label where its line gave provenance, and the
    identities by label; the reviewers as they are when no line did (one C-speed count per field)."""
    if all(column.count(None) == len(column) for column in provenance):
        return reviewers, {}
    given = list(zip(reviewers, *provenance))
    made = {key: Identity(*key) for key in dict.fromkeys(given)}  # each distinct judge once (a few)
    label = {key: identity.label for key, identity in made.items()}
    identities = {label[key]: identity for key, identity in made.items() if not identity.plain}
    return tuple(map(label.__getitem__, given)), identities


def exclusions(score: np.ndarray, scales: list[ScoreScale], scale: np.ndarray) -> np.ndarray:
    """ScoreScale.exclusion for every row at once."""
    low = np.array([s.low for s in scales])[scale]
    high = np.array([s.high for s in scales])[scale]
    reason = np.where((score == 0) & (low > 0), UNSCORED, OUT_OF_SCALE)
    reason[(low <= score) & (score <= high)] = 0
    return reason.astype(np.int8)


def coded(values: Sequence[Hashable]) -> tuple[list, np.ndarray]:
    """The distinct values in order of first appearance, and each value's index among them
    (C-speed passes: dict.fromkeys, then map over the dict's lookup)."""
    index = dict.fromkeys(values)
    for number, value in enumerate(index):
        index[value] = number
    return list(index), np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values))


def _merged(values: list[list], codes: list[list[np.ndarray]],
            key: Callable[[object], Hashable] | None) -> tuple[list, list[np.ndarray]]:
    """Several parts' distinct values as one list, and each code column (the same number
    per part) rewritten to index it and joined across the parts, in C-speed passes: the
    keys of all parts into one dict, then a look-up each (joining the readers' chunks for
    the writer: 0.09-0.11 against 0.07 us a record with a loop per value)."""
    flat = list(chain.from_iterable(values))
    keys = flat if key is None else list(map(key, flat))
    firsts = dict(zip(keys, flat))  # first appearance's order; equal keys hold equal values
    index = dict(zip(firsts, range(len(firsts))))
    numbers = np.fromiter(map(index.__getitem__, keys), dtype=np.int32, count=len(keys))
    remaps = np.split(numbers, np.cumsum([len(part) for part in values[:-1]]).astype(np.intp))
    columns = [np.concatenate([remap[part[column]] for remap, part in zip(remaps, codes)])
               for column in range(len(codes[0]))]
    return list(firsts.values()), columns


@dataclass
class ScoreColumns:
    """A batch's score rows with database ids, column by column (store.SCORE_COLUMNS order,
    without envelope_id)."""

    session_id: np.ndarray
    reviewer_id: np.ndarray
    model_id: np.ndarray
    position: np.ndarray
    length: np.ndarray
    score: np.ndarray
    scale_id: np.ndarray
    display_order: np.ndarray
    self_review: np.ndarray
    exclusion: np.ndarray  # 0 when the score is usable

    def select(self, keep: np.ndarray) -> ScoreColumns:
        return ScoreColumns(*(column[keep] for column in vars(self).values()))

    def as_lists(self) -> list[list]:
        """Python values for the database driver (which takes no numpy scalars); NULL for no exclusion."""
        exclusion = ([value or None for value in self.exclusion.tolist()] if self.exclusion.any()
                     else [None] * len(self.exclusion))
        return [column.tolist() for column in list(vars(self).values())[:-1]] + [exclusion]
