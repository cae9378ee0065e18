"""Tests of the synthetic web-server request traces of the fpga-reconfig paper.

The distribution tests compute the analytic CDFs here, from the constants printed in the paper
(eqs. 1-3), rather than through the module, and measure runs and gaps on the generated trace
itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.workloads.client_population import draw_population
from cryptoffload.workloads.web_trace import (
    GAP,
    RETURN_TIME,
    RUN_LENGTH,
    generate_trace,
    sample_inverse_cdf,
)

# The paper's fits F^-1(u) = -a / (u - c).
A_RUN, C_RUN = 0.72549, 0.976927
A_GAP, C_GAP = 0.475263, 0.995667
A_RET, C_RET = 0.444219, 0.995429


def renorm_cdf(x, a, c, cap=math.inf):
    """CDF of a / (c - u), u uniform in [0, c), capped at cap."""
    x = np.asarray(x, dtype=float)
    f = np.clip(1.0 - a / (c * np.maximum(x, 1e-300)), 0.0, 1.0)
    return np.where(x >= cap, 1.0, f)


def ks_distance(samples, cdf):
    """Kolmogorov-Smirnov distance between the samples and a continuous CDF."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    f = cdf(x)
    i = np.arange(1, n + 1)
    return max(np.max(i / n - f), np.max(f - (i - 1) / n))


def runs_of(client):
    """Lengths and start positions of the maximal same-client runs."""
    change = np.flatnonzero(np.diff(client) != 0) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [client.size]])
    return ends - starts, starts


def realised_returns(trace):
    """For each run of a client seen before: start of this run - end of its previous run."""
    lengths, starts = runs_of(trace.client)
    last_end = {}
    out = []
    for s, L in zip(starts.tolist(), lengths.tolist()):
        c = int(trace.client[s])
        if c in last_end:
            out.append(trace.time[s] - trace.time[last_end[c]])
        last_end[c] = s + L - 1
    return np.array(out)


@pytest.fixture(scope="module")
def big():
    return generate_trace(300_000, seed=7)


@pytest.fixture(scope="module")
def big_returns():
    """The literal reading of the paper's client rule (Fc returns), kept for sensitivity runs."""
    return generate_trace(300_000, seed=7, clients="returns")


def test_constants_are_the_papers():
    assert (RUN_LENGTH.a, RUN_LENGTH.c) == (A_RUN, C_RUN)
    assert (GAP.a, GAP.c) == (A_GAP, C_GAP)
    assert (RETURN_TIME.a, RETURN_TIME.c) == (A_RET, C_RET)


def test_shape_and_dtypes(big):
    n = len(big)
    assert n == 300_000
    for arr in (big.time, big.client, big.cipher, big.size):
        assert arr.shape == (n,)
    assert big.time.dtype == np.float64 and big.client.dtype == np.int64
    assert big.cipher.dtype == np.int8 and big.size.dtype == np.int64
    assert big.time[0] == 0.0
    assert np.all(np.diff(big.time) >= 0)
    assert big.n_ciphers == 10 and big.bad_lines == 0 and big.bad_examples == []
    assert "seed=7" in big.source


def test_gaps_follow_renormalised_Fb(big):
    gaps = np.diff(big.time)
    assert gaps.min() >= A_GAP / C_GAP * (1 - 1e-9)
    assert gaps.max() <= 3600.0 * (1 + 1e-9)
    d = ks_distance(gaps, lambda x: renorm_cdf(x, A_GAP, C_GAP, 3600.0))
    assert d < 0.006, d  # 1 % critical value for 300k samples is ~0.003
    assert np.median(gaps) == pytest.approx(2 * A_GAP / C_GAP, rel=0.01)


def test_gap_cap_is_an_atom():
    tr = generate_trace(50_001, seed=3, max_gap=5.0)
    gaps = np.diff(tr.time)
    assert gaps.max() <= 5.0 * (1 + 1e-9)
    at_cap = np.mean(np.isclose(gaps, 5.0, rtol=1e-9, atol=1e-6))
    assert at_cap == pytest.approx(A_GAP / (C_GAP * 5.0), abs=0.006)


def test_run_lengths_follow_renormalised_Fa(big):
    lengths, _ = runs_of(big.client)
    lengths = lengths[:-1]  # the last run may be cut at n
    # No cap but the trace: the heavy tail of Fa is the paper's input (Table 7's dominant cipher).
    assert lengths.min() >= 1 and lengths.max() > 1000
    ks = np.arange(1, 200)
    empirical = np.array([np.mean(lengths <= k) for k in ks])
    # L = floor(v + 0.5) <= k  <=>  v < k + 0.5
    analytic = renorm_cdf(ks + 0.5, A_RUN, C_RUN)
    assert np.max(np.abs(empirical - analytic)) < 0.012
    assert np.mean(lengths == 1) == pytest.approx(1 - A_RUN / (C_RUN * 1.5), abs=0.01)


def test_run_cap():
    tr = generate_trace(50_000, seed=5, max_run=4)
    lengths, _ = runs_of(tr.client)
    assert lengths.max() <= 4
    assert np.mean(lengths[:-1] == 4) == pytest.approx(A_RUN / (C_RUN * 3.5), abs=0.015)


def test_return_time_sampler_follows_renormalised_Fc():
    rng = np.random.default_rng(123)
    v = sample_inverse_cdf(rng, RETURN_TIME, 100_000, 3600.0)
    assert v.min() >= A_RET / C_RET and v.max() <= 3600.0
    assert ks_distance(v, lambda x: renorm_cdf(x, A_RET, C_RET, 3600.0)) < 0.008


def test_realised_return_times_are_not_shorter_than_Fc(big_returns):
    rets = realised_returns(big_returns)
    assert rets.size > 1000
    x = np.sort(rets)
    ecdf = np.arange(1, x.size + 1) / x.size
    # A due client can only be served later than its draw: the realised law dominates Fc.
    assert np.all(ecdf <= renorm_cdf(x, A_RET, C_RET) + 0.01)


def test_clients_return_and_cipher_is_client_mod_n(big):
    lengths, starts = runs_of(big.client)
    run_clients = big.client[starts]
    distinct, runs_per_client = np.unique(run_clients, return_counts=True)
    assert 2 <= distinct.size < lengths.size
    assert runs_per_client.max() > 1  # returning clients really return
    assert np.all(big.client >= 0) and np.all(big.client < 2**31)
    assert np.array_equal(big.cipher, (big.client % 10).astype(np.int8))
    tr = generate_trace(2_000, seed=1, n_ciphers=7)
    assert tr.n_ciphers == 7 and np.array_equal(tr.cipher, tr.client % 7)


def test_finite_max_wait_gives_more_clients():
    default = generate_trace(50_000, seed=2, max_wait=math.inf, clients="returns")  # the paper's rules, no leaving
    leaving = generate_trace(50_000, seed=2, max_wait=10.0, clients="returns")
    assert np.array_equal(default.time, leaving.time)  # same arrivals
    assert np.unique(leaving.client).size > 5 * np.unique(default.client).size
    assert np.median(realised_returns(leaving)) < np.median(realised_returns(default))


def test_population_clients_take_whole_runs_and_keep_their_cipher():
    pop = draw_population(3, n_clients=50, activity_shape=1.0)
    tr = generate_trace(20_000, seed=11, population=pop)
    assert set(np.unique(tr.client)) <= set(pop.ids.tolist())
    cipher_of = dict(zip(pop.ids.tolist(), pop.cipher.tolist()))
    assert all(cipher_of[c] == k for c, k in zip(tr.client[:2000].tolist(), tr.cipher[:2000].tolist()))
    # a month of history of the same server shares its clients (not its requests)
    hist = generate_trace(20_000, seed=12, population=pop)
    assert len(set(np.unique(hist.client)) & set(np.unique(tr.client))) > 25
    assert not np.array_equal(hist.time, tr.time)


def test_active_clients_get_more_runs():
    pop = draw_population(5, n_clients=200, activity_shape=2.5)
    tr = generate_trace(100_000, seed=5, population=pop)
    lengths, starts = runs_of(tr.client)
    runs = dict(zip(*np.unique(tr.client[starts], return_counts=True)))
    share = dict(zip(pop.ids.tolist(), pop.share.tolist()))
    top, bottom = max(share, key=share.get), min(share, key=share.get)
    assert runs.get(top, 0) / starts.size == pytest.approx(share[top], rel=0.25)
    assert runs.get(bottom, 0) < runs.get(top, 0) / 10


def test_population_arguments_are_checked():
    pop = draw_population(1, n_clients=10)
    with pytest.raises(ConfigError, match="ciphers"):
        generate_trace(100, seed=1, n_ciphers=7, population=pop)
    with pytest.raises(ConfigError, match="population"):
        generate_trace(100, seed=1, clients="returns", population=pop)
    with pytest.raises(ConfigError, match="clients"):
        generate_trace(100, seed=1, clients="everyone")


def test_sizes_exponential_with_mean_24k(big):
    assert big.size.min() >= 1
    assert big.size.mean() == pytest.approx(24 * 1024, rel=0.02)
    assert np.mean(big.size > 24 * 1024) == pytest.approx(math.exp(-1), abs=0.01)
    tr = generate_trace(20_000, seed=9, mean_size=1000)
    assert tr.size.mean() == pytest.approx(1000, rel=0.03)


def test_deterministic_for_a_seed_and_seeds_differ():
    a, b = generate_trace(20_000, seed=42), generate_trace(20_000, seed=42)
    for name in ("time", "client", "cipher", "size"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    c = generate_trace(20_000, seed=43)
    assert not np.array_equal(a.time, c.time)
    assert not np.array_equal(a.size, c.size)
    assert not np.array_equal(a.client, c.client)


def test_shorter_trace_is_a_prefix():
    long, short = generate_trace(30_000, seed=8), generate_trace(10_000, seed=8)
    head = long.head(10_000)
    for name in ("time", "client", "cipher", "size"):
        assert np.array_equal(getattr(head, name), getattr(short, name))


def test_small_and_invalid_generator_arguments():
    assert len(generate_trace(0, seed=1)) == 0
    one = generate_trace(1, seed=1)
    assert len(one) == 1 and one.time[0] == 0.0 and one.offered_rate == 0.0
    for kwargs in (
        dict(n=-1),
        dict(n=1.5),
        dict(mean_size=0),
        dict(mean_size=float("nan")),
        dict(n_ciphers=0),
        dict(n_ciphers=200),
        dict(max_gap=-1.0),
        dict(max_run=0),
        dict(max_run=2.5),
        dict(max_wait=-1.0),
        dict(seed=-3),
    ):
        args = dict(n=10, seed=1) | kwargs
        with pytest.raises(ConfigError):
            generate_trace(**args)
