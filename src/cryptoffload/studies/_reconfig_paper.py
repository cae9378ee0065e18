"""The fpga-reconfig paper's own numbers (Niwa, Maeda and Yamaguchi, IPSJ TACS 2005), as printed.

One place for them so the study, its tables and the fit of the client population
(``benchmarks/fit_client_population.py``, which uses Table 7 only) read the same values.
"""

from __future__ import annotations

PAPER_RATES = (10, 100, 200, 500, 700, 1000, 2000, 4000, 10000, 20000)

# Table 6: p90 latency relative to Oracle; last value is Oracle's p90 in seconds. The row the
# paper prints as "50" sits between 500 and 1000 req/s; we read it as 700 (see the docs page).
PAPER_TABLE6 = {
    10: (3.70, 118, 1.17, 1.00, 1.50, 0.78, 0.000508),
    100: (12.0, 19700, 1.29, 1.03, 1.90, 0.59, 0.000914),
    200: (66.6, 313000, 2.02, 1.16, 3.67, 0.33, 0.00249),
    500: (62.1, 25900, 3.00, 1.37, 10.3, 0.20, 0.0934),
    700: (85.2, 4900, 2.74, 1.31, 7.95, 0.33, 0.569),
    1000: (94.9, 1570, 3.14, 1.24, 6.63, 0.30, 1.89),
    2000: (12.9, 78.1, 2.43, 1.50, 2.70, 0.13, 0.416),
    4000: (3.30, 19.0, 1.34, 1.12, 1.40, 0.34, 0.0178),
    10000: (2.57, 13.3, 1.23, 1.08, 1.20, 0.55, 0.0260),
    20000: (2.07, 12.2, 1.21, 1.08, 1.20, 0.59, 0.0288),
}
PAPER_T6_POLICIES = ("software", "hardware", "nopredict", "predict", "fix5", "fix-all")
# Our "predict" (interval chosen on the history) and "predict-5mb" (the paper's fixed interval)
# both stand beside the paper's Predict column.
_PAPER_COLUMN = {**{p: p for p in PAPER_T6_POLICIES}, "predict-5mb": "predict"}
# Headline averages as the paper's text states them (the mean of its Table 6 column for
# Nopredict is 1.96, not 2.01).
PAPER_MEAN_PREDICT, PAPER_MEAN_NOPREDICT = 1.18, 2.01
# Table 7: share of requests per cipher in the paper's generated trace.
PAPER_TABLE7 = {"aes-ecb": 0.0911, "des-ecb": 0.0697, "des-cbc": 0.0886, "3des-ecb": 0.0765,
                "3des-cbc": 0.0907, "serpent": 0.0786, "twofish": 0.2463, "camellia": 0.0706,
                "rc6-ecb": 0.0967, "aes-cbc": 0.0848}
# Table 8: mean encryption-time reduction vs Software, % (Nopredict, Predict, Oracle).
PAPER_TABLE8 = {"rc6-ecb": (23.0, 27.9, 31.3), "camellia": (58.8, 61.6, 64.9),
                "des-ecb": (60.8, 72.9, 72.7), "des-cbc": (46.0, 53.3, 55.0),
                "aes-ecb": (70.5, 77.4, 78.5), "aes-cbc": (40.3, 42.1, 42.9),
                "3des-ecb": (49.6, 68.8, 72.0), "3des-cbc": (21.9, 25.5, 26.3),
                "serpent": (19.4, 28.2, 36.2), "twofish": (77.4, 71.9, 73.0)}
PAPER_TABLE8_TOTAL = (47.6, 53.4, 55.1)
T8_POLICIES = ("nopredict", "predict", "oracle", "predict-online", "predict-3gram", "parallel")
