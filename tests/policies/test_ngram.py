"""Interval states and predictors of the FPGA-reconfiguration paper's policies, checked against brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError
from cryptoffload.policies import ngram


def brute_state(cipher, size, lo, hi, k):
    """State of requests [lo, hi) computed the obvious way."""
    if hi <= lo:
        return -1
    counts = np.zeros(k)
    for j in range(lo, hi):
        counts[cipher[j]] += size[j]
    order = sorted(range(k), key=lambda c: (-counts[c], c))
    a = order[0]
    if counts[order[1]] == 0:
        return ngram.n_pairs(k) * 100 + a
    b = order[1]
    total = counts.sum()
    ba, bb = min(9, int(counts[a] * 10 / total)), min(9, int(counts[b] * 10 / total))
    if a > b:
        a, b, ba, bb = b, a, bb, ba
    return int(ngram.pair_index(a, b, k)) * 100 + ba * 10 + bb


def brute_windows(size, i, window):
    """[lo, i): shortest suffix before i with >= window bytes; [i, hi): shortest prefix from i."""
    lo, tot = i, 0
    while lo > 0 and tot < window:
        lo -= 1
        tot += size[lo]
    hi, tot = i, 0
    while hi < len(size) and tot < window:
        tot += size[hi]
        hi += 1
    return lo, hi


def test_state_count_is_the_papers_4510():
    assert ngram.n_states(10) == 4510
    assert ngram.n_pairs(10) == 45


def test_pair_index_is_a_bijection():
    k = 10
    seen = {int(ngram.pair_index(a, b, k)) for a in range(k) for b in range(a + 1, k)}
    assert seen == set(range(45))
    members = ngram.pair_members(k)
    for p, (a, b) in enumerate(members):
        assert ngram.pair_index(a, b, k) == p == ngram.pair_index(b, a, k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 50)), min_size=1, max_size=60),
       st.integers(1, 120))
def test_interval_states_match_brute_force(reqs, window):
    k = 4
    cipher = np.array([c for c, _ in reqs], dtype=np.int64)
    size = np.array([s for _, s in reqs], dtype=np.int64)
    st_ = ngram.interval_states(cipher, size, k, window)
    for i in range(len(reqs)):
        lo, hi = brute_windows(size, i, window)
        assert st_.before[i] == brute_state(cipher, size, lo, i, k)
        assert st_.after[i] == brute_state(cipher, size, i, hi, k)
        assert st_.after_end[i] == hi
        if lo > 0:
            assert st_.before2[i] == st_.before[lo]
        else:
            assert st_.before2[i] == -1


def test_single_cipher_interval_is_a_100_percent_state():
    st_ = ngram.interval_states(np.array([3, 3, 3]), np.array([10, 10, 10]), 10, 15)
    assert st_.before[2] == 4500 + 3


def test_window_must_be_positive():
    with pytest.raises(ConfigError):
        ngram.interval_states(np.array([0]), np.array([1]), 10, 0)


def periodic_trace(n, k=10, run=40, seed=0):
    """Clients in long runs cycling through a fixed cipher order: perfectly predictable."""
    rng = np.random.default_rng(seed)
    order = np.array([1, 4, 7, 2])
    cipher = np.repeat(np.tile(order, n // (run * len(order)) + 1), run)[:n]
    size = np.full(n, 1000, dtype=np.int64)
    return cipher.astype(np.int64), size, rng


def test_two_gram_learns_a_deterministic_sequence():
    cipher, size, _ = periodic_trace(8000)
    model = ngram.TwoGram(cipher, size, 10, window=40_000)
    pred = model.predict(cipher, size)
    oracle = ngram.OracleNext(cipher, 10, window=40_000).predict(cipher, size)
    # after the first interval every prediction comes from the table and equals the truth
    hit = (pred.source[80:] == 1)
    assert hit.all()
    states = ngram.interval_states(cipher, size, 10, 40_000)
    two = states.after[80:] < ngram.n_pairs(10) * 100  # intervals holding two ciphers
    same = {tuple(sorted(p)) for p in pred.pairs()[80:][two]} == {tuple(sorted(p)) for p in oracle.pairs()[80:][two]}
    assert same
    agree = np.mean([set(a) == set(b) for a, b in zip(pred.pairs()[80:], oracle.pairs()[80:])])
    assert agree > 0.95


def test_oracle_pads_a_single_cipher_interval_with_the_next_cipher_it_will_see():
    # Runs 5,5,5 | 2 | 9,9: the interval of one request starting at 0 holds cipher 5 only; the
    # next different cipher the trace requests is 2, not the globally most frequent other one.
    cipher = np.array([5, 5, 5, 2, 9, 9, 9, 9, 9], dtype=np.int64)
    size = np.full(cipher.size, 100, dtype=np.int64)
    pred = ngram.OracleNext(cipher, 10, window=100).predict(cipher, size)
    assert (int(pred.pred_a[0]), int(pred.pred_b[0])) == (5, 2)
    assert (int(pred.pred_a[3]), int(pred.pred_b[3])) == (2, 9)
    # nothing different follows the last run: the frequency filler is kept
    assert int(pred.pred_a[-1]) == 9 and int(pred.pred_b[-1]) != 9


def test_unseen_state_falls_back_to_zeroth_order():
    hist = np.array([5] * 50 + [6] * 30 + [1] * 20, dtype=np.int64)
    hsize = np.full(len(hist), 100, dtype=np.int64)
    model = ngram.TwoGram(hist, hsize, 10, window=1000)
    cipher = np.array([9] * 40, dtype=np.int64)  # cipher 9 never seen in the history
    pred = model.predict(cipher, np.full(40, 100, dtype=np.int64))
    assert model.pair == (5, 6)
    assert (pred.source == 0).all()
    assert set(zip(pred.pred_a, pred.pred_b)) == {(5, 6)}


def test_two_gram_next_state_reading_differs_but_is_valid():
    cipher, size, _ = periodic_trace(4000)
    a = ngram.TwoGram(cipher, size, 10, window=40_000, next_over="state").predict(cipher, size)
    assert set(np.unique(a.pred_a)) <= set(range(10))
    with pytest.raises(ConfigError):
        ngram.TwoGram(cipher, size, 10, next_over="nonsense")


def test_random_pair_is_two_distinct_seeded_ciphers():
    c = np.arange(1000) % 10
    p1 = ngram.RandomPair(c, 10, seed=3).predict(c, np.ones(1000))
    p2 = ngram.RandomPair(c, 10, seed=3).predict(c, np.ones(1000))
    assert np.array_equal(p1.pred_a, p2.pred_a) and np.array_equal(p1.pred_b, p2.pred_b)
    assert (p1.pred_a != p1.pred_b).all()
    # uniform-ish over ciphers, and not tied to the requested cipher
    assert np.mean(p1.pred_a == c) < 0.2
    inc = ngram.RandomPair(c, 10, seed=3, include_request=True).predict(c, np.ones(1000))
    assert np.array_equal(inc.pred_a, c) and (inc.pred_b != c).all()


def test_online_model_adapts_to_a_population_the_history_never_saw():
    hist, hsize, _ = periodic_trace(4000)
    new = np.repeat(np.tile(np.array([0, 3, 8, 9]), 60), 40)[:8000].astype(np.int64)
    nsize = np.full(len(new), 1000, dtype=np.int64)
    static = ngram.TwoGram(hist, hsize, 10, window=40_000).predict(new, nsize)
    online = ngram.OnlineTwoGram(hist, hsize, 10, decay=0.999, window=40_000).predict(new, nsize)
    truth = ngram.OracleNext(new, 10, window=40_000).predict(new, nsize)

    def acc(p):
        return np.mean([set(a) == set(b) for a, b in zip(p.pairs()[4000:], truth.pairs()[4000:])])

    assert acc(online) > 0.9
    assert acc(online) > acc(static) + 0.3


def test_online_predict_does_not_mutate_the_model():
    c, s, _ = periodic_trace(2000)
    m = ngram.OnlineTwoGram(c, s, 10, window=40_000)
    before = m.counts.copy()
    m.predict(c, s)
    assert np.array_equal(before, m.counts)
    with pytest.raises(ConfigError):
        ngram.OnlineTwoGram(c, s, 10, decay=0.0)


def test_three_gram_uses_longer_context_when_it_is_seen():
    # a sequence where the pair after (A then B) depends on what came before A
    block = [1] * 40 + [2] * 40 + [3] * 40 + [1] * 40 + [4] * 40 + [5] * 40
    c = np.array(block * 40, dtype=np.int64)
    s = np.full(len(c), 1000, dtype=np.int64)
    tri = ngram.ThreeGram(c, s, 10, window=40_000).predict(c, s)
    assert (tri.source == 2).mean() > 0.9
