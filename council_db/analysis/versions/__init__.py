"""Does the new judge grade like the old one? Two sides (two reviewers, or two council config
versions) compared on the items both scored: ``pairing`` finds those items and each side's
verdict on them, ``same_items`` the flip rate, paired difference and agreement with CIs that
resample whole sessions (or queries), ``sides`` reads the two sides from a database."""
