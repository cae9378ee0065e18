"""Mod-raise (modraise.py) and the sparse-secret encapsulation (sparse.py) on raw arrays, against
big-integer arithmetic: a raised ciphertext decrypts, modulo the whole chain, to exactly the
level-0 decryption plus q_0 I, with |I| within (h + 1) / 2 for the secret's Hamming weight h (and
near its expected spread); the encapsulation's switches keep the message; the three kernel sets
agree bit for bit from the same randomness."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cryptoffload.crypto.ckks.gpu import sparse
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum
from cryptoffload.crypto.ckks.gpu.keystore import EvalKeys
from cryptoffload.crypto.ckks.gpu.modraise import mod_raise
from cryptoffload.crypto.ckks.gpu.scheme import RawCt, RnsScheme

from .gpu_helpers import PARAMS, seed_randomness

#: P of two primes (dnum 2): the encapsulation's basis takes one of them
HYBRID = params_for_dnum(PARAMS, 2)
CHAIN = prime_chain(HYBRID.poly_modulus_degree, HYBRID.coeff_mod_bits)
N = HYBRID.poly_modulus_degree


def scheme(kernels: str = "cuda-host", seed: bytes = b"raise") -> RnsScheme:
    return seed_randomness(RnsScheme(CHAIN, np, kernels), seed)


def centred(s: RnsScheme, poly: np.ndarray, level: int) -> list[int]:
    """The centred integers of an NTT-form polynomial at ``level`` (CRT with Python integers)."""
    rows = s.rows(level)
    coeff = s.ar.intt(poly.copy(), rows)
    primes = [s.ring.primes[r] for r in rows]
    big = math.prod(primes)
    out = []
    for j in range(s.n):
        v = sum(int(coeff[i, j]) * (big // q) * pow(big // q, -1, q) for i, q in enumerate(primes)) % big
        out.append(v - big if v > big // 2 else v)
    return out


def phase(s: RnsScheme, ct: RawCt, secret_ntt: np.ndarray) -> list[int]:
    """``c0 + c1 s`` as centred integers modulo the ciphertext's modulus."""
    rows = s.rows(ct.level)
    return centred(s, s.ar.add(ct.data[0], s.ar.mul(ct.data[1], secret_ntt[: len(rows)], rows), rows), ct.level)


def low_ciphertext(s: RnsScheme, pk) -> tuple[RawCt, np.ndarray]:
    z = np.random.default_rng(7).uniform(-1, 1, s.n // 2) * (1 + 1j)
    return s.encrypt(s.encode(z, 0, 2.0 ** 24), pk), z


def overflows(s: RnsScheme, ct: RawCt, raised: RawCt, secret_ntt: np.ndarray) -> list[int]:
    """``I`` with ``phase(raised) = phase(ct) + q0 I``, asserting the equality exactly."""
    q0 = math.prod(s.ring.primes[r] for r in s.rows(0))
    low, high = phase(s, ct, secret_ntt), phase(s, raised, secret_ntt)
    assert all((h - m) % q0 == 0 for h, m in zip(high, low))
    return [(h - m) // q0 for h, m in zip(high, low)]


def test_a_raised_ciphertext_decrypts_to_the_message_plus_q0_times_a_small_integer() -> None:
    s = scheme()
    sk = s.gen_secret()
    ct, _ = low_ciphertext(s, s.gen_public(sk))
    for level in (1, s.top):
        raised = mod_raise(s, ct, level)
        assert (raised.level, raised.scale, raised.data.shape) == (level, ct.scale, (2, CHAIN.limbs(level), N))
        overflow = overflows(s, ct, raised, sk.ntt)
        h = int(np.count_nonzero(sk.small))
        assert max(abs(i) for i in overflow) <= (h + 1) // 2
        # each I is a sum of h terms of spread q0 / sqrt(12): 6 standard deviations over 2048 coefficients
        assert max(abs(i) for i in overflow) <= 6 * math.sqrt(h / 12) + 1
        assert np.std(overflow) > 0.5 * math.sqrt(h / 12)   # a raise that dropped c1 s would give I = 0


def test_the_encapsulation_switches_to_a_weight_h_secret_and_back() -> None:
    s = scheme()
    sk = s.gen_secret()
    ct, z = low_ciphertext(s, s.gen_public(sk))
    enc, back, ephemeral = sparse.gen_encapsulation(s, sk, 32)
    assert int(np.count_nonzero(ephemeral.small)) == 32 and set(np.unique(ephemeral.small)) <= {-1, 0, 1}
    sparse_ct = sparse.to_sparse(s, ct, enc)
    assert sparse_ct.level == 0 and np.max(np.abs(s.decrypt(sparse_ct, ephemeral) - z)) < 2.0 ** -12
    raised = mod_raise(s, sparse_ct, s.top)
    overflow = overflows(s, sparse_ct, raised, ephemeral.ntt)
    assert max(abs(i) for i in overflow) <= 16          # (h + 1) / 2 for h = 32: a deterministic bound
    keys = EvalKeys(s.ar)
    keys.put(sparse.SPARSE_TO_DENSE, back)
    dense = sparse.to_dense(s, raised, keys)
    # the switch back adds a key switch's error (a few thousand units) to m + q0 I
    err = [abs(a - b) for a, b in zip(phase(s, dense, sk.ntt), phase(s, raised, ephemeral.ntt))]
    assert max(err) < 2 ** 16
    ephemeral.wipe()
    assert not np.any(ephemeral.small) and not np.any(ephemeral.ntt)


def test_the_encapsulation_key_lives_on_level_zero_and_part_of_p_only() -> None:
    ring = scheme().ring
    basis = sparse.encapsulation_basis(ring)
    assert basis.digits == tuple((int(r),) for r in ring.data_rows(0))
    assert len(basis.special) == 1 and ring.primes[basis.special[0]] > max(ring.primes[r] for r in ring.data_rows(0))
    assert sparse.key_modulus_bits(ring, basis) == math.prod(
        [ring.primes[r] for r in ring.data_rows(0)] + [ring.primes[basis.special[0]]]).bit_length()
    assert not sparse.is_secure(ring, basis, 32)          # N = 2048: only a study


def _raise_pipeline(kernels: str) -> list[np.ndarray]:
    s = scheme(kernels, b"kernels")
    sk = s.gen_secret()
    ct, _ = low_ciphertext(s, s.gen_public(sk))
    enc, back, _eph = sparse.gen_encapsulation(s, sk, 32)
    keys = EvalKeys(s.ar)
    keys.put(sparse.SPARSE_TO_DENSE, back)
    down = sparse.to_sparse(s, ct, enc)
    up = mod_raise(s, down, s.top)
    return [enc.to_sparse, back, down.data, up.data, sparse.to_dense(s, up, keys).data, mod_raise(s, ct, 2).data]


def test_kernel_sets_raise_and_switch_bit_for_bit() -> None:
    base = _raise_pipeline("cuda-host")
    for kernels in ("numba", "ref"):
        for i, (x, y) in enumerate(zip(base, _raise_pipeline(kernels))):
            assert np.array_equal(x, y), (kernels, i)


def test_mod_raise_refuses_a_ciphertext_above_level_zero() -> None:
    s = scheme()
    sk = s.gen_secret()
    ct = s.encrypt(s.encode(np.zeros(s.n // 2), 1, 2.0 ** 24), s.gen_public(sk))
    with pytest.raises(ValueError, match="level 0"):
        mod_raise(s, ct, 2)
