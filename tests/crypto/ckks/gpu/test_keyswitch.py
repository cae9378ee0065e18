"""Hybrid key switching (keyswitch.py) on the twin, against big-integer arithmetic: the digits
are the centred residues of each digit's modulus, ModDown divides by P with rounding, and a
switched component decrypts under the new key to what it was under the old one, up to a small
error."""

from __future__ import annotations

import math
import secrets

import numpy as np

from cryptoffload.crypto.ckks.gpu import keyswitch
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.scheme import RnsScheme

from .gpu_helpers import PARAMS, seed_randomness

CHAIN = prime_chain(PARAMS.poly_modulus_degree, PARAMS.coeff_mod_bits)
N = PARAMS.poly_modulus_degree


def _scheme() -> RnsScheme:
    return seed_randomness(RnsScheme(CHAIN, np), b"keyswitch")


def _residues(values: list[int], primes: list[int]) -> np.ndarray:
    return np.array([[v % p for v in values] for p in primes], dtype=np.uint64)


def _centred(res: np.ndarray, primes: list[int]) -> list[int]:
    """The centred integers of coefficient-form residues (CRT, Python integers)."""
    m = math.prod(primes)
    out = []
    for j in range(res.shape[1]):
        x = sum(int(res[i, j]) * (m // p) * pow(m // p, -1, p) for i, p in enumerate(primes)) % m
        out.append(x - m if x > m // 2 else x)
    return out


def test_digits_are_the_centred_residues_of_each_digit_modulus() -> None:
    s = _scheme()
    ar, ring, level = s.ar, s.ring, s.top
    rows, qp = ring.data_rows(level), ring.qp_rows(level)
    q = [ring.primes[r] for r in rows]
    values = [secrets.randbelow(math.prod(q)) for _ in range(N)]
    d = ar.ntt(_residues(values, q), rows)
    out = keyswitch.decompose(ar, d, [0], level)[0]
    digits = ring.level_digits(level)
    assert out.shape == (len(digits), len(qp), N)
    for g, digit in enumerate(digits):
        qg = math.prod(ring.primes[r] for r in digit)
        want = [(v % qg) - qg if v % qg > qg // 2 else v % qg for v in values]
        got = ar.intt(out[g].copy(), qp)
        assert np.array_equal(got, _residues(want, [ring.primes[r] for r in qp])), g


def test_mod_down_divides_by_p_with_rounding() -> None:
    s = _scheme()
    ar, ring, level = s.ar, s.ring, s.top
    rows, qp = ring.data_rows(level), ring.qp_rows(level)
    q = math.prod(ring.primes[r] for r in rows)
    p = ring.p_product
    ys = [[secrets.randbelow(q) - q // 2 for _ in range(N)] for _ in range(2)]
    rs = [[secrets.randbelow(p // 2) - p // 4 for _ in range(N)] for _ in range(2)]   # away from the +-P/2 tie
    primes = [ring.primes[r] for r in qp]
    x = np.stack([ar.ntt(_residues([p * y + r for y, r in zip(yy, rr)], primes), qp) for yy, rr in zip(ys, rs)])
    out = keyswitch.mod_down(ar, x, level)
    assert out.shape == (2, len(rows), N)
    for b in range(2):
        assert _centred(ar.intt(out[b].copy(), rows), [ring.primes[r] for r in rows]) == ys[b]


def test_a_switched_component_decrypts_under_the_new_key() -> None:
    """d s' = c0 + c1 s + e with e small: |e| below 2^24 where Q is ~2^130 (a wrong key gives
    an error the size of Q)."""
    s = _scheme()
    ar, ring, level = s.ar, s.ring, s.top
    rows = ring.data_rows(level)
    q = [ring.primes[r] for r in rows]
    sk, other = s.gen_secret(), s.gen_secret()
    key = s.gen_switch(sk, other.ntt)
    d = ar.ntt(_residues([secrets.randbelow(math.prod(q)) for _ in range(N)], q), rows)

    def error(with_key) -> int:
        c = keyswitch.switch(ar, d, [0], [(0, 0, -1)], with_key[None], ar.table(np.zeros(1)), level)[0]
        diff = ar.sub(ar.add(c[0], ar.mul(c[1], sk.ntt[: len(rows)], rows), rows),
                      ar.mul(d, other.ntt[: len(rows)], rows), rows)
        return max(abs(v) for v in _centred(ar.intt(diff.copy(), rows), q))

    assert error(key) < 2 ** 24
    assert error(s.gen_switch(sk, s.gen_secret().ntt)) > 2 ** 100
