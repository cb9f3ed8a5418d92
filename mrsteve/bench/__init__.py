"""Benchmarks run by ``mrsteve bench``: timings live here, never in tests."""
