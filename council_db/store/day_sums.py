"""The numpy half of the day totals (store/day_totals.py): one batch's new usable scores
summed per key of each totals table.

This runs for every batch the importer writes, so it is written to make few numpy calls:
a batch's keys usually span a few days, a handful of model ids and a few hundred session
ids, so every sum is taken at once on a dense grid of those values (one ``bincount`` per
quantity, then each table sums the grid over the axes it does not key on). A batch whose
values spread too far for a grid (records of many days and sessions shuffled together) is
summed table by table after a sort instead.

``sessions`` counts the sessions with a new score under the key and none stored before
(see store/day_totals.py): a (key, session) pair is counted where the batch has a new row
and the stored rows read before its insert have none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Sequence

import numpy as np

from council_db.store.session_stats import groups

# The grid's axes: the key columns of every table, and whether a position is a display slot
AXES = ("day", "reviewer_id", "model_id", "scale_id", "slot", "display_order")
MAX_CELLS = 1 << 20  # a grid (with its session axis), or a table's key-session pairs, of more cells: sorted instead
EXTREMES = {"min_score": (np.minimum, np.inf), "max_score": (np.maximum, -np.inf)}


@dataclass(frozen=True)
class TotalsTable:
    name: str
    key: tuple[str, ...]  # its primary key: columns of TotalsRows, in AXES order
    values: tuple[str, ...]  # sessions, or what TotalsRows.quantities sums
    slots_only: bool = False  # only scores whose position is a display slot

    @property
    def columns(self) -> tuple[str, ...]:
        return self.key + self.values

    @property
    def sums(self) -> tuple[str, ...]:
        """The float sums, which numpy and SQL add in different orders."""
        return tuple(name for name in self.values if name.endswith("_sum"))


TABLES = (
    TotalsTable("reviewer_day_totals", ("day", "reviewer_id", "scale_id"),
                ("sessions", "records", "self_reviews", "score_sum", "score_sq_sum", "self_score_sum", "min_score",
                 "max_score")),
    TotalsTable("model_day_totals", ("day", "model_id", "scale_id"),
                ("sessions", "records", "self_reviews", "known_lengths", "score_sum", "score_sq_sum", "self_score_sum",
                 "length_sum")),
    TotalsTable("pair_day_totals", ("day", "reviewer_id", "model_id", "scale_id"), ("records",)),
    TotalsTable("day_totals", ("day", "scale_id"), ("sessions", "records", "known_lengths", "score_sum", "length_sum")),
    TotalsTable("slot_day_totals", ("day", "scale_id", "slot"), ("sessions", "records", "score_sum", "score_sq_sum"),
                slots_only=True),
)


@dataclass
class TotalsRows:
    """Usable score rows, column by column: the batch's new ones (``new``) and the rows stored
    before it of the sessions it adds to (only their keys and sessions matter)."""

    session_id: np.ndarray
    day: np.ndarray
    reviewer_id: np.ndarray
    model_id: np.ndarray
    scale_id: np.ndarray
    slot: np.ndarray
    display_order: np.ndarray
    self_review: np.ndarray
    score: np.ndarray
    length: np.ndarray
    new: np.ndarray

    @classmethod
    def joined(cls, parts: Sequence[TotalsRows]) -> TotalsRows:
        if len(parts) == 1:
            return parts[0]
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))

    def quantities(self) -> dict[str, np.ndarray | None]:
        """Per new row, what each value column sums (None: a count of rows)."""
        new = slice(None) if self.new.all() else self.new  # the usual batch: every row is new
        score, own = self.score[new], self.self_review[new].astype(np.float64)
        length = self.length[new].astype(np.float64)
        known = length >= 0  # -1: an unknown answer length (revision 0009), counted apart and left out of the sums
        return {"records": None, "self_reviews": own, "known_lengths": known.astype(np.float64),
                "score_sum": score, "score_sq_sum": score * score, "self_score_sum": score * own,
                "length_sum": np.where(known, length, 0.0), "min_score": score, "max_score": score}


def sums(tables: Sequence[TotalsTable], rows: TotalsRows) -> dict[str, list[np.ndarray]]:
    """Each table's columns (key, then values) for the rows to add; a table with none is left out."""
    if not rows.new.any():
        return {}
    columns = [getattr(rows, name).astype(np.int64, copy=False) for name in (*AXES, "session_id")]
    lows = [int(column.min()) for column in columns]
    shape = tuple(int(column.max()) - low + 1 for column, low in zip(columns, lows))
    if math.prod(shape) > MAX_CELLS:
        return {table.name: found for table in tables if (found := _sorted_sums(table, rows)) is not None}
    grid = _Grid(rows, [column - low for column, low in zip(columns, lows)], shape, lows)
    return {table.name: found for table in tables if (found := grid.table(table)) is not None}


class _Grid:
    """The batch's new rows summed per cell of a dense grid with the AXES as axes, each as
    long as the batch's values of it span (``codes``: each row's offsets from the least
    values, in AXES order and the session's last, which only the session counts use)."""

    def __init__(self, rows: TotalsRows, codes: list[np.ndarray], shape: tuple[int, ...], lows: list[int]):
        self.codes, self.sessions, self.new = codes[:-1], codes[-1], rows.new
        self.spread = shape[-1]  # session codes run from 0 to spread - 1
        self.everything_new = bool(rows.new.all())  # the usual batch: none of its sessions was stored
        self.shape, self.lows, self.quantities = shape[:-1], lows[:-1], rows.quantities()
        self.cells: dict[str, np.ndarray] = {}  # quantity -> its grid, made when a table first asks
        cell = np.ravel_multi_index(self.codes, self.shape)
        self.cell, self.size = cell if self.everything_new else cell[rows.new], math.prod(self.shape)

    def table(self, table: TotalsTable) -> list[np.ndarray] | None:
        """The table's columns: the grid summed over the axes it does not key on."""
        keyed = [AXES.index(name) for name in table.key]  # ascending: table keys follow AXES
        other = tuple(axis for axis in range(len(AXES)) if axis not in keyed and AXES[axis] != "display_order")
        shown = [slice(None)] * len(AXES)
        if table.slots_only:  # display slots only: the display_order axis at 1, if the grid reaches it
            if self.lows[-1] + self.shape[-1] - 1 < 1:
                return None
            shown[-1] = slice(1 - self.lows[-1], 2 - self.lows[-1])
        else:
            other += (len(AXES) - 1,)
        shown = tuple(shown)
        records = self._summed("records", other, shown)
        kept = records > 0
        if not kept.any():
            return None
        where = np.nonzero(kept)
        found = [where[position] + self.lows[axis] for position, axis in enumerate(keyed)]
        for name in table.values:
            if name == "sessions":
                column = self._sessions([axis for axis in range(len(AXES)) if axis not in other])[..., shown[-1]]
            else:
                column = records if name == "records" else self._summed(name, other, shown)
            found.append(column[kept] if name.endswith("_sum") or name in EXTREMES else column[kept].astype(np.int64))
        return found

    def _summed(self, name: str, other: tuple[int, ...], shown: tuple) -> np.ndarray:
        """A quantity summed (or its extreme taken) over the ``other`` axes of the ``shown`` part."""
        if name not in self.cells:
            weights = self.quantities[name]
            if name in EXTREMES:
                cells = _extremes(name, self.cell, weights, self.size)
            else:
                cells = np.bincount(self.cell, weights=weights, minlength=self.size)
            self.cells[name] = cells.reshape(self.shape)
        pick = EXTREMES[name][0] if name in EXTREMES else np.add
        return pick.reduce(self.cells[name][shown], axis=other)

    def _sessions(self, axes: list[int]) -> np.ndarray:
        """Per cell of these axes: the sessions with a new row there and none stored before."""
        shape, spread = tuple(self.shape[axis] for axis in axes), self.spread
        pairs = np.ravel_multi_index([*(self.codes[axis] for axis in axes), self.sessions], (*shape, spread))
        counted = np.zeros(math.prod(shape) * spread, dtype=bool)
        counted[pairs if self.everything_new else pairs[self.new]] = True
        if not self.everything_new:
            counted[pairs[~self.new]] = False
        return counted.reshape(*shape, spread).sum(axis=-1)


def _sorted_sums(table: TotalsTable, rows: TotalsRows) -> list[np.ndarray] | None:
    """``sums`` for one table when the batch's values spread too far for a grid."""
    if table.slots_only:
        shown = rows.display_order.astype(bool)
        rows = TotalsRows(*(getattr(rows, f.name)[shown] for f in fields(rows)))
    if not rows.new.any():
        return None
    group, first = groups(*(getattr(rows, name) for name in table.key))
    count, added, quantities = len(first), group[rows.new], rows.quantities()
    found = [getattr(rows, name)[first].astype(np.int64) for name in table.key]
    for name, weights in ((name, quantities[name]) for name in table.values if name != "sessions"):
        if name in EXTREMES:
            column = _extremes(name, added, weights, count)
        else:
            column = np.bincount(added, weights=weights, minlength=count)
        found.append(column if name.endswith("_sum") or name in EXTREMES else column.astype(np.int64))
    if "sessions" in table.values:
        pair, pair_first = groups(group, rows.session_id)
        stored = np.bincount(pair, weights=(~rows.new).astype(np.float64), minlength=len(pair_first)) > 0
        found.insert(len(table.key) + table.values.index("sessions"),
                     np.bincount(group[pair_first[~stored]], minlength=count).astype(np.int64))
    kept = found[len(table.key) + table.values.index("records")] > 0
    return [column[kept] for column in found]


def _extremes(name: str, cell: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Per cell 0 .. size - 1: the least (min_score) or largest (max_score) of its rows'
    weights, the ufunc's identity where it has none. By one sort and ``reduceat``, not
    ``ufunc.at``, which cost a third of the day totals' time (16,000-row batches)."""
    pick, start = EXTREMES[name]
    found = np.full(size, start)
    if len(cell):
        order = np.argsort(cell, kind="stable")
        ordered = cell[order]
        firsts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        found[ordered[firsts]] = pick.reduceat(weights[order], firsts)
    return found
