"""Benchmarks that print side-by-side tables against references measured in the same run."""
