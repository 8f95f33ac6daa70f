"""Pairwise verdicts ranked the way the field ranks them: Bradley-Terry strengths with the
display slot, ties and verdict strength modelled, optional style covariates, and intervals from
resampling whole sessions (both orders of one prompt are one cluster)."""
