"""Which sessions show the same item: the cluster the reference analyses resample.

Both orders of one item, or an item judged again, can sit in several sessions (as LLMBar's and
JudgeBench's runs do when each order is its own session); their verdicts are not independent,
so a CI must resample the item, not the session. Records carry no item label, and a query hash
is not in the window's arrays, so the item is read off the candidates: imports of such benchmarks
name each item's answers for that item alone (anonymous outputs become per-item candidates). The
rule: sessions comparing the same set of candidates, none of which is met in any other set, are
one item when the set covers at most MAX_ITEM_SESSIONS sessions and the window holds at least two
such sets. Everything else is an item of its own: a council of fixed models, whose candidates
recur in every session, and a window of one benchmark item alike.
"""

from __future__ import annotations

import numpy as np

from council_db.analysis.loading.score_data import ScoreData

MAX_ITEM_SESSIONS = 8  # both orders, repeats and reruns of one item; a council's models recur far more


def session_items(data: ScoreData) -> np.ndarray:
    """An item number per session (0..items-1, in order of first session)."""
    n, m = data.n_sessions, max(len(data.models), 1)
    label = np.arange(n, dtype=np.int64)
    key = np.unique(data.session * m + data.model)
    session, model = key // m, key % m
    rare = np.bincount(model, minlength=m) <= MAX_ITEM_SESSIONS  # only such candidates can be an item's own
    common = np.zeros(n, dtype=bool)
    common[session[~rare[model]]] = True
    tainted = np.zeros(m, dtype=bool)  # met beside a common candidate: in another set than its item's
    tainted[model[common[session]]] = True
    candidates = ~common[session]
    sessions_with: dict[tuple[int, ...], list[int]] = {}
    if candidates.any():
        at, members = session[candidates], model[candidates]
        for s, group in zip(np.unique(at).tolist(), np.split(members, np.flatnonzero(np.diff(at)) + 1)):
            sessions_with.setdefault(tuple(group.tolist()), []).append(s)
    sets_of_model = np.bincount([c for candidates_set in sessions_with for c in candidates_set], minlength=m)
    specific = [members for candidates_set, members in sessions_with.items()
                if len(members) <= MAX_ITEM_SESSIONS
                and all(sets_of_model[c] == 1 and not tainted[c] for c in candidates_set)]
    if len(specific) >= 2:
        for members in specific:
            label[members] = members[0]
    return np.unique(label, return_inverse=True)[1].astype(np.int64)
