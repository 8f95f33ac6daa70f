"""The joint model's design: effect-coded columns for reviewers, candidates, display slots,
group offsets, self-reviews and log length (one common slope on every record, and effect-coded
deviations for the reviewers whose answers' lengths vary within their sessions), the contrast
that reads each reported effect,
and the warnings for what this data cannot identify (disconnected reviewer-candidate
groups, a model always shown in one slot, no self-reviews)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.unique_rows import distinct


@dataclass
class Design:
    """The un-demeaned regressors and, per reported effect, its contrast over the columns."""

    matrix: np.ndarray  # N x P_all
    rev_codes: np.ndarray  # R x P_all: severity of reviewer r = rev_codes[r] @ beta
    mod_codes: np.ndarray  # M x P_all
    slot_codes: np.ndarray  # K x P_all, rows for ``slots``
    slots: list[int]
    self_cols: dict[int, int]  # reviewer index -> column
    length_col: int  # the common (panel) log-length slope's column
    length_reviewers: list[int]  # the reviewers with a slope of their own (lengths vary in their sessions)
    length_codes: np.ndarray  # len(length_reviewers) x P_all: each one's slope, common + its deviation
    factor_columns: int  # columns before this one code reviewers, models and slots
    groups: list[tuple[list[int], list[int]]]
    alone: set[tuple[str, int]]  # ("reviewer"|"model", index) alone in its group: nothing to compare

    @staticmethod
    def build(data: ScoreData, rev, mod, slot, log_len, own, length_reviewers: list[int],
              warnings: list[str]) -> Design:
        n_rev, n_mod = len(data.reviewers), len(data.models)
        groups = connected_groups(rev, mod, n_rev, n_mod)
        rev_e, rev_alone = effect_codes([g[0] for g in groups], n_rev)
        mod_e, mod_alone = effect_codes([g[1] for g in groups], n_mod)
        alone = {("reviewer", i) for i in rev_alone} | {("model", i) for i in mod_alone}

        slots, slot_e, slot_rows = display_slots(slot)

        group_of = np.zeros(n_rev, dtype=np.int64)
        for number, (reviewers, _) in enumerate(groups):
            group_of[reviewers] = number
        group_e = np.zeros((n_rev, max(len(groups) - 1, 0)))
        for number in range(1, len(groups)):
            group_e[group_of == number, number - 1] = 1.0

        self_reviewers = sorted(distinct(rev[own]).tolist())
        self_x = np.column_stack([(own & (rev == r)).astype(np.float64) for r in self_reviewers]) \
            if self_reviewers else np.zeros((len(rev), 0))

        # the common slope on every record, then each such reviewer's deviation from it (sum to zero)
        deviation_e, _ = effect_codes([length_reviewers] if len(length_reviewers) > 1 else [], n_rev)
        length_e = np.hstack([np.ones((n_rev, 1)), deviation_e])  # reviewer -> its slope's codes
        length_x = length_e[rev] * log_len[:, None]

        blocks = [rev_e[rev], mod_e[mod], slot_e[slot_rows], group_e[rev], self_x, length_x]
        widths = [b.shape[1] for b in blocks]
        starts = np.concatenate([[0], np.cumsum(widths)])
        total = int(starts[-1])

        def embed(codes: np.ndarray, block: int) -> np.ndarray:
            out = np.zeros((codes.shape[0], total))
            out[:, starts[block]:starts[block + 1]] = codes
            return out

        slot_codes = embed(slot_e[slots], 2) if slots else np.zeros((0, total))
        design = Design(
            matrix=np.hstack(blocks), rev_codes=embed(rev_e, 0), mod_codes=embed(mod_e, 1),
            slot_codes=slot_codes, slots=slots,
            self_cols={r: int(starts[4]) + i for i, r in enumerate(self_reviewers)},
            length_col=int(starts[5]), length_reviewers=list(length_reviewers),
            length_codes=embed(length_e[length_reviewers], 5),
            factor_columns=int(starts[3]), groups=groups, alone=alone,
        )
        design._design_warnings(data, rev, mod, slot, own, warnings)
        return design

    def _design_warnings(self, data: ScoreData, rev, mod, slot, own, warnings: list[str]) -> None:
        if not own.any():
            warnings.append("no self-reviews (no reviewer scored its own model's answer): self-preference is "
                            "not identified")
        if not self.slots:
            warnings.append("no display-order records (position is not a display slot before schema 1.2.0): "
                            "position effects are not estimated")
        elif len(self.slots) == 1:
            warnings.append(f"every answer was shown in display slot {self.slots[0]}: position effects are not "
                            "estimated")
        else:
            shown = slot >= 0
            pairs = distinct(mod[shown] * (max(self.slots) + 1) + slot[shown])
            pair_model, pair_slot = np.divmod(pairs, max(self.slots) + 1)
            per_model = np.bincount(pair_model, minlength=len(data.models))
            for m in np.flatnonzero(per_model == 1).tolist():
                s = int(pair_slot[pair_model == m][0])
                warnings.append(f"candidate {data.models[m]} was always shown in display slot {s}: its quality "
                                f"and the slot {s} position effect cannot be separated from its own scores")
        if len(self.groups) > 1:
            described = "; ".join(
                f"group {i + 1}: reviewers {', '.join(data.reviewers[r] for r in g[0])} / "
                f"candidates {', '.join(data.models[m] for m in g[1])}" for i, g in enumerate(self.groups))
            warnings.append(f"reviewers and candidates are not connected ({len(self.groups)} separate groups: "
                            f"no reviewer scored candidates of another group). Severities and qualities are "
                            f"relative to the average within their group and are only comparable within a group "
                            f"- {described}")
        for kind, index in sorted(self.alone):
            name = data.reviewers[index] if kind == "reviewer" else data.models[index]
            what = "severity" if kind == "reviewer" else "quality"
            other = "reviewer" if kind == "reviewer" else "candidate"
            warnings.append(f"{kind} {name} is the only {other} in its group: its {what} has nothing to be "
                            "compared with and is not estimated")


def display_slots(slot: np.ndarray) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The display slots shown, their effect codes (a row per slot number, and a last row of
    zeros for slot -1: the average slot) and each record's row of them."""
    slots = sorted(distinct(slot[slot >= 0]).tolist())
    slot_e, _ = effect_codes([slots] if len(slots) > 1 else [], max(slots, default=-1) + 2)
    slot_e[-1] = 0.0  # the extra last row: slot -1, the average slot
    return slots, slot_e, np.where(slot >= 0, slot, slot_e.shape[0] - 1)


def varied_lengths(rev: np.ndarray, log_len: np.ndarray, sized: np.ndarray, unit: np.ndarray,
                   n_rev: int) -> list[int]:
    """The reviewers whose known answer lengths vary within some fixed-effect group (a session)
    of theirs: only they get a slope of their own (a deviation from the panel's), read from
    their own comparisons of longer and shorter answers (a reviewer scoring one answer a
    session has none to make, and is taken at the panel's slope)."""
    cell = unit[sized] * n_rev + rev[sized]
    if cell.max(initial=0) > 4 * len(cell):  # sparse (a wide panel): number the cells present
        _, cell = np.unique(cell, return_inverse=True)
    count = np.maximum(np.bincount(cell), 1)  # cells absent from a dense numbering count 1, add nothing
    mean = np.bincount(cell, weights=log_len[sized]) / count
    spread = np.bincount(cell, weights=(log_len[sized] - mean[cell]) ** 2)
    tolerance = 1e-12 * (1.0 + mean * mean) * count
    first = np.zeros(len(count), dtype=np.int64)
    first[cell] = rev[sized]
    return np.flatnonzero(np.bincount(first[spread > tolerance], minlength=n_rev)).tolist()


def connected_groups(rev: np.ndarray, mod: np.ndarray, n_rev: int, n_mod: int) -> list[tuple[list[int], list[int]]]:
    """Connected components of the reviewer-candidate graph (an edge: the reviewer scored the model)."""
    parent = list(range(n_rev + n_mod))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pairs = distinct(rev * n_mod + mod)
    for pair in pairs.tolist():
        a, b = find(pair // n_mod), find(n_rev + pair % n_mod)
        if a != b:
            parent[b] = a
    members: dict[int, tuple[list[int], list[int]]] = {}
    for r in distinct(rev).tolist():
        members.setdefault(find(r), ([], []))[0].append(r)
    for m in distinct(mod).tolist():
        members.setdefault(find(n_rev + m), ([], []))[1].append(m)
    return sorted(members.values(), key=lambda g: g[0][0])


def effect_codes(groups: list[list[int]], n_levels: int) -> tuple[np.ndarray, list[int]]:
    """Sum-to-zero coding within each group: level -> row of codes; the last level of a group is
    minus the sum of the others. Levels alone in their group get no column."""
    width = sum(len(g) - 1 for g in groups if len(g) > 1)
    codes = np.zeros((n_levels, width))
    alone = []
    col = 0
    for g in groups:
        if len(g) < 2:
            alone.extend(g)
            continue
        k = len(g) - 1
        codes[g[:-1], np.arange(col, col + k)] = 1.0
        codes[g[-1], col:col + k] = -1.0
        col += k
    return codes, alone
