"""Self-preference defined on the pair (pairwise data): does a judge pick its own answer more
often than third judges pick it from the same two answers?"""
