"""A wide panel's report (issue 32): the joint model absorbed its reviewers and candidates
(analysis/joint/absorbed_fit, named in the report's warnings), and a reviewer under that fit's
10-session floor is shown with its n and why it has no severity, not as if the design could not
identify it."""

from __future__ import annotations

from council_db.analysis.joint.joint_fit import JointFit
from council_db.report.model import BiasReport


def attach(report: BiasReport, fit: JointFit) -> None:
    """Each reviewer the absorbed fit left under its floor gets ``severity_reason``."""
    if not fit.absorbed:
        return
    from council_db.analysis.joint.absorbed_fit import TOO_FEW  # loaded by a wide panel's report alone

    short = set(fit.too_few)
    for profile in report.reviewers:
        if profile.severity is None and profile.reviewer_id in short:
            profile.severity_reason = TOO_FEW
