"""A batch read as columns (contract/record_columns) made the writer's batch
(contract/score_batch) without a record struct each: the same columns, names and identities
ScoreBatch.from_records makes of the records the columns stand for."""

from __future__ import annotations

import numpy as np

from council_db.contract.envelope import Envelope
from council_db.contract.record_columns import RecordColumns
from council_db.contract.reviewer_identity import Identity
from council_db.contract.scales import ScoreScale
from council_db.contract.score_batch import ScoreBatch, exclusions


def score_batch(columns: RecordColumns, envelopes: list[Envelope], envelope: np.ndarray, scale: ScoreScale,
                times: np.ndarray | None) -> ScoreBatch:
    """The columns as a ScoreBatch, each record with its envelope (an index into
    ``envelopes``), the batch's one scale and its own time (``times``: ScoreBatch.times)."""
    labels, identities = _reviewers(columns.judges)
    names = list(dict.fromkeys([*labels, *columns.models, *(i.model for i in identities.values())]))
    index = {name: number for number, name in enumerate(names)}
    reviewer = np.array([index[label] for label in labels], dtype=np.int32)[columns.judge]
    model = np.array([index[name] for name in columns.models], dtype=np.int32)[columns.model]
    score, scale_code = columns.score, np.zeros(len(columns), dtype=np.int32)
    given = np.ones(len(columns), dtype=bool) if columns.position_given is None else columns.position_given
    kinds = {label: columns.reviewer_kinds[judge[0]] for label, judge in zip(labels, columns.judges)
             if judge[0] in columns.reviewer_kinds}
    return ScoreBatch(list(columns.session_keys), envelopes, names, [scale], columns.session.astype(np.int32),
                      envelope.astype(np.int32), reviewer, model, columns.position.astype(np.int32),
                      columns.length.astype(np.int32), score, scale_code, exclusions(score, [scale], scale_code),
                      given, kinds, None, None, identities, times)


def _reviewers(judges: list[tuple]) -> tuple[list[str], dict[str, Identity]]:
    """Each distinct judge's reviewer name (its identity's label where a prompt, temperature
    or seed is given) and the identities by label, as ScoreBatch.from_records makes them:
    labels only when some record of the batch gives one."""
    if all(given is None for judge in judges for given in judge[1:]):
        return [judge[0] for judge in judges], {}
    made = [Identity(*judge) for judge in judges]
    return [identity.label for identity in made], {i.label: i for i in made if not i.plain}
