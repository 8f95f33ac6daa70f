"""A batch of records as columns: the same records and exclusions as one record at a time."""

from __future__ import annotations

import json
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from council_db.contract.envelope import envelope
from council_db.contract.record import as_record
from council_db.contract.scales import score_scale
from council_db.contract.score_batch import ScoreBatch
from council_db.ingest import normalise
from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from tests.conftest import record, session

SCALES = ["1-10", "0-1", "1-5", "-3-3"]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(range(len(SCALES))), st.sampled_from([0, 1, 5, 10, -3, 11, 0.5, -4])),
                min_size=1, max_size=40))
def test_exclusions_for_a_whole_batch_are_the_scales_own_verdicts(scored):
    scales = [score_scale(name) for name in SCALES]
    lines = [as_record(record(score_scale=SCALES[code], score_value=float(value))) for code, value in scored]
    batch = ScoreBatch.from_records(lines, [envelope(lines[0])], [0] * len(lines), scales,
                                    [code for code, _ in scored])

    expected = [scales[code].exclusion(float(value)) or 0 for code, value in scored]
    assert batch.exclusion.tolist() == expected


def test_each_row_points_at_its_session_and_names():
    lines = [as_record(line) for line in session("s-1") + session("s-2", models=3, reviewers=2)]
    envelopes = [envelope(lines[0]), envelope(lines[16])]
    codes = [0] * 16 + [1] * 6
    batch = ScoreBatch.from_records(lines, envelopes, codes, [score_scale("1-10")], [0] * len(lines))

    assert batch.session_keys == ["s-1", "s-2"]
    assert [batch.session_keys[code] for code in batch.session] == [line.session_id for line in lines]
    assert [batch.names[code] for code in batch.reviewer] == [line.reviewer_id for line in lines]
    assert [batch.names[code] for code in batch.model] == [line.model_id for line in lines]
    assert batch.position.tolist() == [line.position for line in lines]
    assert batch.score.tolist() == [line.score_value for line in lines]
    assert batch.first_envelopes() == envelopes


def _rows(batch: ScoreBatch) -> list[tuple]:
    """Each row with its codes resolved: what a batch means, whatever its numbering."""
    return list(zip([batch.session_keys[c] for c in batch.session], [batch.envelopes[c] for c in batch.envelope],
                    [batch.names[c] for c in batch.reviewer], [batch.names[c] for c in batch.model],
                    batch.position.tolist(), batch.length.tolist(), batch.score.tolist(),
                    [batch.scales[c] for c in batch.scale], batch.exclusion.tolist(), _named(batch)))


def _named(batch: ScoreBatch) -> list[dict]:
    """Each row's named scores (a rubric's dimensions) as a dict, {} for none."""
    found: list[dict] = [{} for _ in range(len(batch))]
    if batch.dimensions is not None:
        named = batch.dimensions
        for row, name, score in zip(named.row.tolist(), named.name.tolist(), named.score.tolist()):
            found[row][named.names[name]] = score
    return found


@settings(max_examples=50, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["s-1", "s-2", "s-3"]), st.integers(2, 4), st.sampled_from(SCALES),
                          st.sampled_from(["", "2025-01-01T00:00:00Z"]), st.sampled_from([0, 1, 2]),
                          st.sampled_from([None, {"accuracy": 7.0}, {"clarity": 2.5, "accuracy": 9.0}])),
                min_size=1, max_size=8),
       st.integers(1, 20))
def test_a_batch_normalised_in_slices_is_the_batch_normalised_whole(sessions, slice_lines):
    lines = [line for key, size, scale, timestamp, consent, named in sessions
             for line in session(key, models=size, reviewers=2, score_scale=scale, timestamp=timestamp,
                                 consent_level=consent, score_dimensions=named)]
    batch = LineBatch(1, [json.dumps(line).encode() for line in lines], 0)
    whole = Normaliser().normalise(batch)
    with patch.object(normalise, "PARSE_LINES", slice_lines):
        sliced = Normaliser().normalise(batch)

    assert _rows(sliced.rows) == _rows(whole.rows)
    assert (sliced.skipped, sliced.excluded) == (whole.skipped, whole.excluded)
    assert _named(whole.rows) == [line["score_dimensions"] or {} for line in lines if line["consent_level"]]
    for distinct in ("session_keys", "names"):
        assert len(set(getattr(sliced.rows, distinct))) == len(getattr(sliced.rows, distinct))
    assert len({id(e) for e in sliced.rows.envelopes}) == len(sliced.rows.envelopes)
