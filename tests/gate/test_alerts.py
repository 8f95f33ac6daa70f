"""Which outcome changes make an alert: a start or an end of a failure, once; a first pass, a
pass that becomes unmeasurable and back, only remembered; a flag no longer raised ends its
failure; an alert's id follows the change, not the run."""

from __future__ import annotations

from datetime import datetime

from council_db.gate.alerts import changes
from council_db.gate.rules import Rule
from council_db.gate.verdicts import Outcome
from council_db.store.watch_state import Known

SEVERITY, FLAGS = Rule("severity-max", 0.5), Rule("no-flags")
MAY, JUNE = datetime(2025, 5, 1), datetime(2025, 6, 1)


def outcome(status: str, subject: str = "judge-a", rule: str = "severity-max") -> Outcome:
    return Outcome(rule, subject, status, "measured")  # type: ignore[arg-type]


def due(found) -> list[tuple[str, str | None, str]]:
    return [(c.outcome.subject, c.old, c.outcome.status) for c in found if c.alert_due]


def test_a_first_run_alerts_the_failures_and_only_remembers_the_rest():
    found = changes([outcome("fail"), outcome("pass", "judge-b"), outcome("skip", "judge-c")], [SEVERITY], {})

    assert due(found) == [("judge-a", None, "fail")]
    assert len(found) == 3


def test_the_same_status_again_is_no_change_and_pass_to_skip_is_remembered_without_an_alert():
    known = {("severity-max", "judge-a"): Known("fail", MAY), ("severity-max", "judge-b"): Known("pass", MAY)}

    found = changes([outcome("fail"), outcome("skip", "judge-b")], [SEVERITY], known)

    assert [(c.outcome.subject, c.old, c.outcome.status, c.alert_due) for c in found] == [
        ("judge-b", "pass", "skip", False)]


def test_an_end_of_failure_is_a_recovery_or_unmeasurable():
    known = {("severity-max", "judge-a"): Known("fail", MAY), ("severity-max", "judge-b"): Known("fail", MAY)}

    found = changes([outcome("pass"), outcome("skip", "judge-b")], [SEVERITY], known)

    assert due(found) == [("judge-a", "fail", "pass"), ("judge-b", "fail", "skip")]


def test_a_flag_no_longer_raised_recovers_and_a_reviewer_gone_from_the_window_is_unmeasurable():
    known = {("no-flags", "position: judge-a"): Known("fail", MAY), ("severity-max", "judge-z"): Known("fail", MAY),
             ("min-sessions", "window"): Known("fail", MAY)}  # not among this run's rules: left alone

    found = changes([outcome("pass", "all flags", "no-flags"), outcome("pass")], [FLAGS, SEVERITY], known)

    assert due(found) == [("position: judge-a", "fail", "pass"), ("judge-z", "fail", "skip")]
    assert "no longer raised" in found[-2].outcome.message


def test_an_alert_id_is_the_same_for_a_resent_change_and_new_for_the_next_failure():
    first = changes([outcome("fail")], [SEVERITY], {("severity-max", "judge-a"): Known("pass", MAY)})[0]
    resent = changes([Outcome("severity-max", "judge-a", "fail", "other figures", -0.9)], [SEVERITY],
                     {("severity-max", "judge-a"): Known("pass", MAY)})[0]
    later = changes([outcome("fail")], [SEVERITY], {("severity-max", "judge-a"): Known("pass", JUNE)})[0]

    assert first.alert_id("w", "e") == resent.alert_id("w", "e")
    assert len({first.alert_id("w", "e"), later.alert_id("w", "e"), first.alert_id("other", "e"),
                first.alert_id("w", "other")}) == 4
