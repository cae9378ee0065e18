"""Tests of the web-server request traces (seed 002): generator, Trace, loader.

The distribution tests compute the analytic CDFs here, from the constants printed in the paper
(eqs. 1-3), rather than through the module, and measure runs and gaps on the generated trace
itself.
"""

from __future__ import annotations

import gzip
import hashlib
import ipaddress
import math
import os
from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError, CryptoffloadError, TraceError
from cryptoffload.workloads.web_trace import (
    GAP,
    RETURN_TIME,
    RUN_LENGTH,
    Trace,
    generate_trace,
    load_trace,
    sample_inverse_cdf,
    save_trace_csv,
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


# ------------------------------------------------------------------------------ generator


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
    assert lengths.min() >= 1 and lengths.max() <= 1000
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


def test_realised_return_times_are_not_shorter_than_Fc(big):
    rets = realised_returns(big)
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
    default = generate_trace(50_000, seed=2, max_wait=math.inf)  # the paper's rules, no leaving
    leaving = generate_trace(50_000, seed=2, max_wait=10.0)
    assert np.array_equal(default.time, leaving.time)  # same arrivals
    assert np.unique(leaving.client).size > 5 * np.unique(default.client).size
    assert np.median(realised_returns(leaving)) < np.median(realised_returns(default))


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


# ------------------------------------------------------------------------------ Trace


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
@given(tr=traces(), rate=st.floats(min_value=1e-3, max_value=1e7))
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


# ------------------------------------------------------------------------------ loader


def blake63(text):
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1


def test_csv_round_trip(tmp_path):
    tr = generate_trace(5_000, seed=4).rescaled(123.0)
    path = tmp_path / "trace.csv"
    save_trace_csv(tr, path)
    assert path.read_text().splitlines()[0] == "time,client,bytes,cipher"
    back = load_trace(path)
    for name in ("time", "client", "cipher", "size"):
        assert np.array_equal(getattr(back, name), getattr(tr, name)), name
    assert back.bad_lines == 0 and back.bad_examples == [] and back.source == str(path)
    save_trace_csv(tr.head(10), path)  # overwrite in place
    assert len(load_trace(path)) == 10
    assert sorted(os.listdir(tmp_path)) == ["trace.csv"]  # no temporary file left


def test_csv_round_trip_with_cipher_names(tmp_path):
    names = ["aes-ecb", "des-ecb", "twofish"]
    tr = Trace(np.array([0.0, 0.5]), np.array([10, 11]), np.array([2, 0], np.int8), np.array([5, 6]), "x",
               n_ciphers=3)
    path = tmp_path / "named.csv"
    save_trace_csv(tr, path, cipher_names=names)
    assert "twofish" in path.read_text()
    back = load_trace(path, n_ciphers=3, cipher_names=[n.upper() for n in names])
    assert back.cipher.tolist() == [2, 0]
    with pytest.raises(ConfigError):
        load_trace(path, n_ciphers=2, cipher_names=names)


def test_csv_without_header_clients_and_sorting(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text(
        "\n"
        "105.5,192.168.0.1,100\n"
        "100.25,42,2000\n"
        "103,2001:db8::1,0\n"
        "103,crawler.example.org,7\n"
        "100.25,::ffff:10.0.0.7,3\n"
    )
    tr = load_trace(path)
    assert tr.bad_lines == 0
    assert tr.time.tolist() == [0.0, 0.0, 2.75, 2.75, 5.25]
    v6 = int.from_bytes(hashlib.blake2b(ipaddress.ip_address("2001:db8::1").packed, digest_size=8).digest(), "big") >> 1
    # stable sort: equal times keep file order
    assert tr.client.tolist() == [42, int(ipaddress.ip_address("10.0.0.7")), v6, blake63("crawler.example.org"),
                                  int(ipaddress.ip_address("192.168.0.1"))]
    assert tr.size.tolist() == [2000, 3, 0, 7, 100]
    assert np.array_equal(tr.cipher, tr.client % 10)


def test_csv_header_iso_times_and_cipher_column(tmp_path):
    path = tmp_path / "iso.csv"
    path.write_text(
        "# exported by hand\n"
        "time,client,bytes,cipher\n"
        "2003-12-01T10:00:00+09:00,7,10,3\n"
        "2003-12-01T01:00:01.5Z,8,20,\n"
        "2003-12-01 01:00:00.25,9,30,9\n"
    )
    tr = load_trace(path)
    assert tr.bad_lines == 0
    # 10:00+09:00 = 01:00Z; naive is taken as UTC
    assert tr.time.tolist() == [0.0, 0.25, 1.5]
    assert tr.client.tolist() == [7, 9, 8]
    assert tr.cipher.tolist() == [3, 9, 8]  # empty cipher -> client mod 10


def test_bad_lines_are_counted_with_line_numbers(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(
        "0,1,10\n"  # 1 ok
        "1,2,-5\n"  # 2 negative bytes
        "yesterday,3,10\n"  # 3 bad time
        "2,4\n"  # 4 too few fields
        "\n"  # 5 empty: skipped, not bad
        "3,5,10,12\n"  # 6 cipher out of range
        "nan,6,10\n"  # 7 not finite
        "4,7,1e3\n"  # 8 ok (integral float)
        "5,8,ten\n"  # 9 bad bytes
        "2003-12-01T00:00:00,9,1\n"  # 10 mixes datetimes with seconds
    )
    tr = load_trace(path)
    assert len(tr) == 2 and tr.size.tolist() == [10, 1000]
    assert tr.bad_lines == 7
    assert len(tr.bad_examples) == 5
    assert [e.split(":")[0] for e in tr.bad_examples] == ["line 2", "line 3", "line 4", "line 6", "line 7"]
    assert "negative" in tr.bad_examples[0]


def test_clf_with_time_zones_and_dash_bytes(tmp_path):
    path = tmp_path / "access_log"
    path.write_text(
        '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326\n'
        '10.1.2.3 - - [10/Oct/2000:20:55:30 +0000] "GET /x HTTP/1.1" 304 -\n'
        'host.example.com - - [11/Oct/2000:05:55:40 +0900] "POST /f HTTP/1.1" 200 512 '
        '"http://ref.example/" "Mozilla/5.0 (X11; \\"quoted\\")"\n'
        "garbage line\n"
        '10.1.2.3 - - [31/Feb/2000:20:55:30 +0000] "GET /x HTTP/1.1" 200 5\n'
    )
    tr = load_trace(path)
    # 13:55:36 -0700 = 20:55:36Z; 05:55:40 +0900 = 20:55:40Z (10 Oct)
    assert tr.time.tolist() == [0.0, 6.0, 10.0]
    assert tr.size.tolist() == [0, 2326, 512]
    assert tr.client.tolist() == [int(ipaddress.ip_address("10.1.2.3")), int(ipaddress.ip_address("127.0.0.1")),
                                  blake63("host.example.com")]
    assert np.array_equal(tr.cipher, tr.client % 10)
    assert tr.bad_lines == 2
    assert tr.bad_examples[0].startswith("line 4: ") and tr.bad_examples[1].startswith("line 5: ")
    assert np.array_equal(load_trace(path, fmt="clf").time, tr.time)


def test_clf_gzip(tmp_path):
    path = tmp_path / "access_log.gz"
    with gzip.open(path, "wt") as fh:
        fh.write('a - - [01/Dec/2003:00:00:00 +0900] "GET / HTTP/1.0" 200 1\n')
        fh.write('b - - [01/Dec/2003:00:00:02 +0900] "GET / HTTP/1.0" 200 2\n')
    tr = load_trace(path)
    assert tr.time.tolist() == [0.0, 2.0] and tr.size.tolist() == [1, 2]


def test_truncated_or_damaged_gzip_is_a_trace_error(tmp_path):
    """The attack: a truncated .gz ended in click's "Aborted." with exit 1 (EOFError)."""
    lines = "".join(f"{i}.0,10.0.0.{i % 7},{100 + i}\n" for i in range(2000))
    whole = gzip.compress(lines.encode())
    (tmp_path / "cut.csv.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(TraceError, match="truncated or damaged"):
        load_trace(tmp_path / "cut.csv.gz")
    damaged = bytearray(whole)
    damaged[len(damaged) // 2] ^= 0xFF
    (tmp_path / "bad.csv.gz").write_bytes(bytes(damaged))
    with pytest.raises(TraceError):
        load_trace(tmp_path / "bad.csv.gz")
    (tmp_path / "plain.csv.gz").write_bytes(lines.encode())  # not gzip at all
    with pytest.raises(TraceError, match="cannot read trace"):
        load_trace(tmp_path / "plain.csv.gz")


def test_all_bad_file_raises(tmp_path):
    path = tmp_path / "junk.csv"
    path.write_text("hello world\nfoo,bar\n")
    with pytest.raises(TraceError) as err:
        load_trace(path)
    msg = str(err.value)
    assert str(path) in msg and "no valid request lines" in msg and "2 bad" in msg and "line 1:" in msg
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(TraceError, match="no valid request lines"):
        load_trace(empty)


def test_missing_file_and_bad_options(tmp_path):
    missing = tmp_path / "nope.log"
    with pytest.raises(TraceError) as err:
        load_trace(missing)
    assert str(missing) in str(err.value)
    assert isinstance(err.value, CryptoffloadError)
    (tmp_path / "t.csv").write_text("0,1,1\n")
    with pytest.raises(ConfigError):
        load_trace(tmp_path / "t.csv", fmt="xml")
    with pytest.raises(ConfigError):
        load_trace(tmp_path / "t.csv", n_ciphers=0)
    with pytest.raises(TraceError):
        save_trace_csv(generate_trace(3, seed=1), tmp_path / "no-such-dir" / "t.csv")


def test_loaded_trace_rescales(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("0,1,1\n10,2,1\n20,3,1\n")
    r = load_trace(path).rescaled(1.0)
    assert r.time.tolist() == [0.0, 1.0, 2.0]
    assert datetime.fromtimestamp(0, timezone.utc).year == 1970  # sanity of the time base
