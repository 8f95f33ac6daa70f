"""Does the slot an answer was shown in sway its score? Position consistency where the same
two answers were shown in both orders (consistency), which records one call held (calls),
swap designs (swaps), and position per reviewer (reviewer_position)."""
