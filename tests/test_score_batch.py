"""A batch of records as columns: the same records and exclusions as one record at a time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from council_db.contract import envelope, score_scale
from council_db.score_batch import ScoreBatch
from tests.conftest import record, session

SCALES = ["1-10", "0-1", "1-5", "-3-3"]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SCALES), st.sampled_from([0.0, 1.0, 5.0, 10.0, -3.0, 11.0, 0.5, -4.0])),
                min_size=1, max_size=40))
def test_exclusions_for_a_whole_batch_are_the_scales_own_verdicts(scored):
    scales = {name: score_scale(name) for name in SCALES}
    lines = [record(score_scale=name, score_value=value) for name, value in scored]
    shared = envelope(lines[0])
    batch = ScoreBatch.from_records(lines, [shared] * len(lines), [scales[name] for name, _ in scored])

    expected = [scales[name].exclusion(value) or 0 for name, value in scored]
    assert batch.exclusion.tolist() == expected


def test_each_row_points_at_its_session_names_envelope_and_scale():
    lines = session("s-1") + session("s-2", models=3, reviewers=2)
    envelopes = [envelope(line) for line in lines]
    scale = score_scale("1-10")
    batch = ScoreBatch.from_records(lines, envelopes, [scale] * len(lines))

    assert batch.session_keys == ["s-1", "s-2"]
    assert [batch.session_keys[code] for code in batch.session] == [line["session_id"] for line in lines]
    assert [batch.names[code] for code in batch.reviewer] == [line["reviewer_id"] for line in lines]
    assert [batch.names[code] for code in batch.model] == [line["model_id"] for line in lines]
    assert [batch.envelopes[code] for code in batch.envelope] == envelopes
    assert batch.position.tolist() == [line["position"] for line in lines]
    assert batch.score.tolist() == [line["score_value"] for line in lines]
    firsts = batch.first_envelopes()
    assert [envelope.timestamp for envelope in firsts] == [lines[0]["timestamp"], lines[16]["timestamp"]]
