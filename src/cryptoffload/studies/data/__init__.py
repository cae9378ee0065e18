"""Stored results the studies show beside their own (data, not code), shipped with the package so
a study shows them wherever it runs. Each file is a copy of a benchmark's output in
``benchmarks/results/`` (a test keeps the two identical) and names the machine it was taken on."""
