"""Tests of the log reader and writer (workloads/trace_log.py): CSV and Common Log Format in, CSV
out, bad lines counted with their line numbers, round trips exact."""

from __future__ import annotations

import gzip
import hashlib
import ipaddress
import os
from datetime import datetime, timezone

import numpy as np
import pytest

from cryptoffload.errors import ConfigError, CryptoffloadError, TraceError
from cryptoffload.workloads.request_trace import Trace
from cryptoffload.workloads.trace_log import load_trace, save_trace_csv
from cryptoffload.workloads.web_trace import generate_trace


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
        "103,2001:db8::1,1\n"
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
    assert tr.size.tolist() == [2000, 3, 1, 7, 100]
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
        "4,7,1e3\n"  # 8 bad: bytes are ASCII digits (the one integer grammar), not a float
        "5,8,ten\n"  # 9 bad bytes
        "2003-12-01T00:00:00,9,1\n"  # 10 mixes datetimes with seconds
        "6,10,1000\n"  # 11 ok
    )
    tr = load_trace(path)
    assert len(tr) == 2 and tr.size.tolist() == [10, 1000]
    assert tr.bad_lines == 8
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
    # 13:55:36 -0700 = 20:55:36Z; 05:55:40 +0900 = 20:55:40Z (10 Oct); the 304 with no body ('-')
    # has nothing to encrypt: a bad line, counted
    assert tr.time.tolist() == [0.0, 4.0]
    assert tr.size.tolist() == [2326, 512]
    assert tr.client.tolist() == [int(ipaddress.ip_address("127.0.0.1")), blake63("host.example.com")]
    assert np.array_equal(tr.cipher, tr.client % 10)
    assert tr.bad_lines == 3
    assert [e.split(":")[0] for e in tr.bad_examples] == ["line 2", "line 4", "line 5"]
    assert "nothing to encrypt" in tr.bad_examples[0]
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


# -- issue 32: one grammar, a floor and a ceiling for every number of a trace -----------------


@pytest.mark.parametrize("line, reason", [
    ("1,2,1_000", "not an integer (ASCII digits)"),          # Python's int() reads 1000
    ("1,2,\u0661\u0662", "not an integer (ASCII digits)"),   # Arabic-Indic 12, which int() reads
    ("1,2,\uff11\uff12", "not an integer (ASCII digits)"),   # full-width 12
    ("1,2,0", "nothing to encrypt"),                        # a 0-byte record
    ("1,2,-7", "negative"),
    ("1,2,1099511627777", "outside 1..1,099,511,627,776 bytes"),  # past a TiB
    ("1,2," + "9" * 5000, "not an integer"),                # never converted
    ("1_0,2,5", "neither seconds nor"),                     # float() reads 10.0
    ("\u0661,2,5", "neither seconds nor"),
    ("1e300,2,5", "outside +-1e+11 s"),
    ("inf,2,5", "neither seconds nor"),
    ("\uff12\uff10\uff10\uff13-12-01T00:00:00,2,5", "ASCII digits"),
])
def test_numbers_of_a_trace_follow_the_one_grammar_and_its_bounds(tmp_path, line: str, reason: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(f"0,1,10\n{line}\n", encoding="utf-8")
    tr = load_trace(path)
    assert len(tr) == 1 and tr.bad_lines == 1 and reason in tr.bad_examples[0], tr.bad_examples


def test_clf_timestamps_with_digits_of_other_scripts_are_bad_lines(tmp_path) -> None:
    path = tmp_path / "access_log"
    path.write_text('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.0" 200 5\n'
                    '1.2.3.4 - - [\u0661\u0660/Oct/2000:13:55:36 +0000] "GET / HTTP/1.0" 200 5\n', encoding="utf-8")
    tr = load_trace(path)
    assert len(tr) == 1 and tr.bad_lines == 1 and "bad timestamp" in tr.bad_examples[0]


def test_a_trace_past_the_request_ceiling_is_refused_early(tmp_path, monkeypatch) -> None:
    """A log of 10^12 requests is refused once it passes the ceiling, not read to its end."""
    from cryptoffload.workloads import trace_log

    monkeypatch.setattr(trace_log, "LOG_REQUESTS", trace_log.LOG_REQUESTS.__class__("requests", 1, 1000, "requests",
                                                                                    integer=True))
    path = tmp_path / "big.csv"
    path.write_text("".join(f"{i},1,10\n" for i in range(1500)))
    with pytest.raises(TraceError, match=r"more than 1,000 requests .* by line 1,001; a trace holds at most 1,000"):
        load_trace(path)
