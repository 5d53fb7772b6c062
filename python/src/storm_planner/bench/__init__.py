"""Benchmarks: each module reproduces one experiment of a paper and writes a table, a plot and the
command that reproduces them. They are kept out of the pass/fail tests."""
