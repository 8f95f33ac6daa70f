"""How p- and q-values read in every rendering of the report: one number format, and each
flag's p stated once."""

from __future__ import annotations

from council_db.report.model import Flag


def p_value(value: float | None) -> str:
    """A p- or q-value as every renderer prints it: '<0.001' or '0.042', never '8.29e-68'."""
    if value is None:
        return "n/a"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def flag_line(flag: Flag, gap: str = " ") -> str:
    """The flag's message with its p and q, each once. A message whose p is not its estimate's
    own test names that test and ends with its p ('... (all slots equal: p <0.001)', '...
    (permutation p 0.002)'); that p is the flag's, so q joins the same parenthesis, where a
    second '(p, q)' would repeat p and leave the reader wondering which test it is. Any other
    message gets '(p, q)' after ``gap``."""
    p, q = p_value(flag.p_value), p_value(flag.q_value)
    if flag.message.endswith(f"p {p})"):
        return f"{flag.message[:-1]}, q {q})"
    return f"{flag.message}{gap}(p {p}, q {q})"
