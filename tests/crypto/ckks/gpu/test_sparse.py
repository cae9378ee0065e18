"""The sparse-secret encapsulation through the backend: the sampler's exact Hamming weight, the
keys made and wiped, mod_raise with and without them (its result decrypts to the message plus
q_0 I, seen in the slots as a shift by whole multiples of q_0 / scale), public contexts that
carry the keys to a server, the security guard, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import CkksError, CkksParams, backend_from_context, make_backend
from cryptoffload.crypto.ckks.gpu import sparse
from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum
from cryptoffload.crypto.ckks.gpu.sampling import Sampler

from .gpu_helpers import FEW, PARAMS

HYBRID = params_for_dnum(PARAMS, 2)


@FEW
@given(log_n=st.integers(4, 12), data=st.data())
def test_the_sparse_sampler_draws_exactly_h_signed_ones(log_n, data):
    n = 1 << log_n
    h = data.draw(st.integers(1, n))
    v = Sampler().sparse_ternary(n, h)
    assert v.shape == (n,) and int(np.count_nonzero(v)) == h and set(np.unique(v)) <= {-1, 0, 1}


def test_the_sparse_sampler_spreads_positions_and_signs():
    draws = np.stack([Sampler().sparse_ternary(256, 32) for _ in range(200)])
    hits = np.count_nonzero(draws, axis=0)             # each position: binomial(200, 1/8), mean 25
    assert hits.min() > 5 and hits.max() < 50
    assert abs(int(draws.sum())) < 4 * math.sqrt(200 * 32)   # signs balanced
    with pytest.raises(ValueError):
        Sampler().sparse_ternary(256, 0)


@pytest.fixture(scope="module")
def boot():
    b = make_backend("gpu-twin", HYBRID, insecure_study=True)
    b.keygen([1], conjugation=True, ephemeral_weight=32)
    return b


def raised_slots(b, z, scale=2.0 ** 22):
    """Slots of a raised encryption of ``z`` at level 0, and q_0 / scale."""
    ct = b.encrypt_complex(z, level=0, scale=scale)
    out = b.mod_raise(ct)
    assert (b.level(out), b.scale(out), b.size(out)) == (b.params.levels, scale, 2)
    return b.decrypt_complex(out), b.primes[0] / scale


def test_mod_raise_under_the_sparse_secret_shifts_the_slots_by_few_multiples_of_q0(boot):
    z = np.random.default_rng(0).uniform(-1, 1, boot.slots) * (1 + 1j)
    got, unit = raised_slots(boot, z)
    # slots of q0 I / scale: I's coefficients are at most 16 in size, so a slot moves by at most
    # 16 N q0 / scale (with margin: the slots of a random I are ~sqrt(N) times its spread)
    shift = (got - z) / unit
    assert 0.5 < np.std(shift) < 16 * math.sqrt(boot.params.poly_modulus_degree)
    assert boot.raise_weight == 32 and boot.mod_raise_keys() == ["encapsulation:to_sparse",
                                                                 "encapsulation:sparse_to_dense"]


def test_without_encapsulation_the_raise_is_under_the_dense_secret_and_shifts_more(boot):
    plain = make_backend("gpu-twin", HYBRID, insecure_study=True)
    plain.keygen([])
    assert plain.raise_weight is None and plain.mod_raise_keys() == []
    z = np.random.default_rng(1).uniform(-1, 1, plain.slots) * (1 + 1j)
    dense, unit = raised_slots(plain, z)
    sparse_got, unit_s = raised_slots(boot, z)
    # I's spread grows with sqrt(h): ~2N/3 non-zero coefficients against 32
    assert np.std((dense - z) / unit) > 3 * np.std((sparse_got - z) / unit_s)


def test_the_keys_are_counted_and_the_ephemeral_secret_is_not_kept(boot):
    sizes = boot.key_bytes()
    assert sizes["encapsulation:sparse_to_dense"] == sizes["relin"]
    basis = sparse.encapsulation_basis(boot.scheme.ring)
    rows = len(boot.scheme.ring.data_rows(0)) + len(basis.special)
    assert sizes["encapsulation:to_sparse"] == len(basis.digits) * 2 * rows * boot.params.poly_modulus_degree * 4
    assert sizes["encapsulation:to_sparse"] < sizes["relin"]     # level 0 and one special prime only
    assert not any(isinstance(v, sparse.SecretKey) for v in vars(boot).values() if v is not boot._sk)


def test_a_server_raises_with_the_keys_of_a_public_context(boot):
    server = backend_from_context(boot.public_context(), insecure_study=True)
    assert server.raise_weight == 32 and not server.can_decrypt
    client = backend_from_context(boot.secret_context(), insecure_study=True)
    z = np.random.default_rng(2).uniform(-1, 1, boot.slots) * 0.5
    ct = server.deserialize_ciphertext(client.serialize_ciphertext(client.encrypt_complex(z, level=0,
                                                                                           scale=2.0 ** 22)))
    out = client.deserialize_ciphertext(server.serialize_ciphertext(server.mod_raise(ct)))
    shift = (client.decrypt_complex(out) - z) / (client.primes[0] / 2.0 ** 22)
    assert 0.5 < np.std(shift) < 16 * math.sqrt(client.params.poly_modulus_degree)


def test_mod_raise_refusals(boot):
    ct = boot.encrypt([0.5])
    with pytest.raises(CkksError, match="level 3; mod_switch_to"):
        boot.mod_raise(ct)
    low = boot.encrypt([0.5], level=0, scale=2.0 ** 15)
    for bad in (0, boot.params.levels + 1, 1.5, True):
        with pytest.raises(CkksError, match="target level"):
            boot.mod_raise(low, bad)
    with pytest.raises(CkksError, match="size-2"):
        boot.mod_raise(boot.mul(low, low))
    assert boot.level(boot.mod_raise(low, 1)) == 1
    for bad in (0, -3, boot.slots + 1, 2.5):
        with pytest.raises(CkksError, match="ephemeral weight"):
            boot.add_encapsulation_keys(bad)


def test_the_encapsulation_is_refused_where_its_security_is_not_known():
    small = CkksParams(2048, (27, 27), 20)        # within the 54-bit bound: a secure key set
    b = make_backend("gpu-twin", small)
    with pytest.raises(CkksError, match="not known to be 128-bit secure"):
        b.keygen([], ephemeral_weight=32)
    b.keygen([])
    with pytest.raises(CkksError, match="not known to be 128-bit secure"):
        b.add_encapsulation_keys(32)
