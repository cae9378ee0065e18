"""The request trace: rescaling keeps the request sequence and hits the rate, validation refuses
malformed arrays, head/segment/cipher_mix."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError, TraceError
from cryptoffload.workloads.request_trace import Trace
from cryptoffload.workloads.web_trace import generate_trace


@pytest.fixture(scope="module")
def big():
    return generate_trace(30_000, seed=7)



def test_rescaled_hits_rate_and_keeps_sequence(big):
    for rate in (10.0, 733.0, 20_000.0):
        r = big.rescaled(rate)
        assert (len(r) - 1) / r.time[-1] == pytest.approx(rate, rel=1e-12)
        assert r.offered_rate == pytest.approx(rate, rel=1e-12)
        assert r.time[0] == 0.0 and np.all(np.diff(r.time) >= 0)
        assert np.array_equal(r.client, big.client) and np.array_equal(r.size, big.size)
        assert np.array_equal(r.cipher, big.cipher)
        assert np.allclose(r.time, big.time * (r.time[-1] / big.time[-1]), rtol=1e-12)
    assert big.offered_rate == pytest.approx((len(big) - 1) / big.time[-1])


@pytest.mark.parametrize("rate", [0, -5, float("nan"), float("inf"), "fast", None])
def test_rescaled_rejects_bad_rates(big, rate):
    with pytest.raises(ConfigError):
        big.rescaled(rate)


def test_rescaled_degenerate_traces():
    single = Trace(np.zeros(1), np.zeros(1, np.int64), np.zeros(1, np.int8), np.ones(1, np.int64), "x")
    assert single.rescaled(5.0).time.tolist() == [0.0]
    simultaneous = Trace(np.zeros(3), np.arange(3), np.zeros(3, np.int8), np.ones(3, np.int64), "x")
    assert simultaneous.offered_rate == math.inf
    with pytest.raises(TraceError):
        simultaneous.rescaled(5.0)


@st.composite
def traces(draw):
    n = draw(st.integers(min_value=2, max_value=60))
    gaps = draw(st.lists(st.floats(min_value=0.0, max_value=1e4, allow_nan=False), min_size=n - 1, max_size=n - 1))
    gaps[draw(st.integers(0, n - 2))] += draw(st.floats(min_value=1e-6, max_value=1e4))
    time = np.concatenate([[0.0], np.cumsum(gaps)])
    client = np.array(draw(st.lists(st.integers(0, 2**40), min_size=n, max_size=n)), dtype=np.int64)
    size = np.array(draw(st.lists(st.integers(0, 10**9), min_size=n, max_size=n)), dtype=np.int64)
    return Trace(time, client, (client % 10).astype(np.int8), size, "hypothesis")


@settings(max_examples=150, deadline=None)
@given(tr=traces(), rate=st.floats(min_value=3e-3, max_value=1e7))
def test_rescaled_properties(tr, rate):
    r = tr.rescaled(rate)
    assert len(r) == len(tr)
    assert r.time[0] == 0.0
    assert np.all(np.diff(r.time) >= 0)
    assert r.offered_rate == pytest.approx(rate, rel=1e-12)
    assert np.array_equal(np.argsort(r.time, kind="stable"), np.argsort(tr.time, kind="stable"))
    assert np.array_equal(r.client, tr.client) and np.array_equal(r.size, tr.size)
    # rescaling twice is rescaling once
    again = r.rescaled(rate / 3).rescaled(rate)
    assert np.allclose(again.time, r.time, rtol=1e-9, atol=0)


def test_trace_validation():
    t = np.array([0.0, 1.0, 2.0])
    c = np.array([1, 2, 3])
    k = np.array([1, 2, 3], dtype=np.int8)
    s = np.array([10, 20, 30])
    Trace(t, c, k, s, "ok")
    with pytest.raises(TraceError):
        Trace(t[:2], c, k, s, "short")
    with pytest.raises(TraceError):
        Trace(t + 1.0, c, k, s, "not rebased")
    with pytest.raises(TraceError):
        Trace(np.array([0.0, 2.0, 1.0]), c, k, s, "unsorted")
    with pytest.raises(TraceError):
        Trace(t, c, np.array([0, 10, 1]), s, "cipher out of range")
    with pytest.raises(TraceError):
        Trace(t, c, k, np.array([1, -1, 1]), "negative size")
    with pytest.raises(TraceError):
        Trace(np.array([0.0, np.nan, 2.0]), c, k, s, "nan")
    with pytest.raises(ConfigError):
        Trace(t, c, k, s, "n_ciphers", n_ciphers=0)
    tr = Trace(t, c, k, s, "ok")
    with pytest.raises(ValueError):
        tr.time[0] = 5.0  # read-only


def test_head_and_cipher_mix():
    tr = Trace(
        np.array([0.0, 1.0, 1.0, 4.0]), np.array([3, 3, 5, 7]), np.array([3, 3, 5, 7], np.int8),
        np.array([100, 100, 600, 200]), "hand", n_ciphers=8,
    )
    assert len(tr.head(2)) == 2 and len(tr.head(100)) == 4 and len(tr.head(0)) == 0
    assert tr.head(2).client.tolist() == [3, 3]
    with pytest.raises(ConfigError):
        tr.head(-1)
    count = tr.cipher_mix()
    assert count.shape == (8,) and count.sum() == pytest.approx(1.0)
    assert count[[3, 5, 7]].tolist() == [0.5, 0.25, 0.25]
    assert tr.cipher_mix("bytes")[[3, 5, 7]].tolist() == [0.2, 0.6, 0.2]
    assert tr.cipher_mix("count").tolist() == count.tolist()
    with pytest.raises(ConfigError):
        tr.cipher_mix("weight")
    assert tr.offered_rate == pytest.approx(3 / 4.0)
    assert tr.head(0).cipher_mix().tolist() == [0.0] * 8


def test_segment_rebases_time_and_names_its_slice():
    tr = Trace(np.array([0.0, 1.0, 3.0, 6.0]), np.array([1, 2, 3, 4]), np.array([1, 2, 3, 4], np.int8),
               np.array([5, 6, 7, 8]), "log")
    seg = tr.segment(1, 3)
    assert seg.time.tolist() == [0.0, 2.0] and seg.client.tolist() == [2, 3] and seg.source == "log[1:3]"
    assert tr.segment(2).size.tolist() == [7, 8]
    for bad in ((2, 2), (0, 5), (-1, 2)):
        with pytest.raises(ConfigError, match="segment"):
            tr.segment(*bad)
