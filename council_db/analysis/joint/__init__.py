"""The joint model: one least-squares fit with session and candidate effects that separates
reviewer severity, display slot, self-preference and length (joint_model on joint_design
and least_squares), with cluster-by-session inference."""
