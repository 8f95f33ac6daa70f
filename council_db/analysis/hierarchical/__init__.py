"""The hierarchical (empirical Bayes) joint model: the joint model's effects with each
reviewer's severity, slot effects, length effect and self-preference, and each candidate's
quality, drawn from a population whose spread the data estimate (REML), so that thin
histories borrow strength from the panel; and each answer's own quality, shared by every
score of it, integrated out. Modules: ``terms`` (which columns, and the
within-session design of a block of records), ``cross_products`` (the design's sufficient
statistics and the answers' part of them, cumulative at cut points), ``reml`` (the variance components),
``posterior`` (posterior means, credible intervals, probabilities of a sign),
``hierarchical_model`` (the fit a report reads) and ``updating`` (the posterior as sessions
arrived, and since when each reviewer's profile has been stable)."""
