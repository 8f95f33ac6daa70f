"""The record-level figures beside the joint model's effects: length (verbosity) per answer
and llm-council's naive r (length), ADR-015's other biases on residuals (affinity), and how
far reviewers agree with each other and with themselves (agreement)."""
