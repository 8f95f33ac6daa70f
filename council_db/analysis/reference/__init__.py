"""Ground truth: do the judges agree with people and with gold labels? (issue 28)

A reviewer is a ``judge`` (an LLM, the default), a ``human`` or ``gold`` (a known right
answer); ``kinds`` reads that per reviewer. Everything here compares each judge with the
reference raters over the answers both scored: ``verdicts`` (which of two answers a reviewer
scored higher, and the reference raters' majority), ``agreement`` (raw agreement, Cohen's
kappa with and without ties, Kendall's tau-b, and the human ceiling), ``scale`` (agreement on
the score scale, the mean difference), ``gold`` (accuracy per display order, both orders,
JudgeBench's net rule), ``replacement`` (the alternative annotator test), ``biases`` (length,
first slot and self-preference against the reference's own) and ``summary`` (all of it per
judge, as the report places it). ``items`` says which sessions show the same item.
docs/methods.md explains each estimator and its interval.
"""
