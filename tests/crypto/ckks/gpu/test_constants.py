"""Complex slots and constants at a chosen scale on the twin, against numpy's complex arithmetic:
encode_complex at any level and scale, mul_const (real, imaginary, complex, integer at scale 1)
with the scale bookkeeping a bootstrap relies on, add_const; each constant op equal bit for bit
to the plaintext op of the encoded constant; refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import CkksError

from .gpu_helpers import FEW, PARAMS, TOL

finite = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)
constants = st.builds(complex, finite, finite)


def slots(seed: int, n: int = PARAMS.slots) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)


def near(got: np.ndarray, want: np.ndarray, tol: float = TOL) -> None:
    err = float(np.max(np.abs(got - want)))
    assert err < tol, f"max error {err:.3g} >= {tol:.3g}"


@pytest.mark.parametrize("level", range(PARAMS.levels + 1))
def test_complex_values_encrypt_at_every_level_and_scale(twin, level):
    z = slots(level)
    for scale in (2.0 ** 20, 2.0 ** 25.5, 1e7):
        ct = twin.encrypt_complex(z, level=level, scale=scale)
        assert (twin.level(ct), twin.scale(ct)) == (level, scale)
        near(twin.decrypt_complex(ct), z, 2.0 ** 14 / scale)   # fresh noise: ~2^11 units in a slot at N = 2048
        pt = twin.encode_complex(z, level=level, scale=scale)
        near(twin.decrypt_complex(twin.add_plain(twin.encrypt_complex(z, level=level, scale=scale), pt)), 2 * z,
             2.0 ** 15 / scale)
    near(twin.decrypt(twin.encrypt_complex(z)), z.real)


@FEW
@given(c=constants, scale_bits=st.sampled_from([20, 25, 30]))
def test_mul_const_multiplies_every_slot_at_the_chosen_scale(twin, c, scale_bits):
    z = slots(1)
    ct = twin.encrypt_complex(z)
    out = twin.mul_const(ct, c, scale=2.0 ** scale_bits)
    assert twin.level(out) == twin.level(ct) and twin.scale(out) == twin.scale(ct) * 2.0 ** scale_bits
    rounded = complex(round(c.real * 2 ** scale_bits), round(c.imag * 2 ** scale_bits)) / 2 ** scale_bits
    res = twin.rescale(out)
    # the rescale's rounding: ~2^11 units in a slot, like fresh noise, at the result's scale
    near(twin.decrypt_complex(res), rounded * z, 2.0 ** 14 / twin.scale(res))


def test_a_constant_at_the_next_prime_keeps_the_scale_through_the_rescale(twin):
    """What a polynomial evaluation does: encode each coefficient at the prime the next rescale
    divides by, so the scale after it is the ciphertext's own, exactly."""
    ct = twin.encrypt_complex(slots(2))
    prime = float(twin.primes[twin.level(ct)])
    out = twin.rescale(twin.mul_const(ct, 0.75 - 0.5j, scale=prime))
    assert twin.scale(out) == twin.scale(ct)
    near(twin.decrypt_complex(out), (0.75 - 0.5j) * slots(2))
    both = twin.add(out, twin.mod_switch_to(ct, twin.level(out)))   # same scale: adds without adjustment
    near(twin.decrypt_complex(both), (1.75 - 0.5j) * slots(2), 2 * TOL)


def test_integer_constants_at_scale_one_are_exact_and_use_no_level(twin):
    ct = twin.encrypt_complex(slots(3))
    for k in (2, -3, 1j, 0):
        out = twin.mul_const(ct, k, scale=1)
        assert (twin.level(out), twin.scale(out)) == (twin.level(ct), twin.scale(ct))
        near(twin.decrypt_complex(out), k * slots(3), 4 * TOL)
    doubled = twin.mul_const(ct, 2, scale=1)
    assert np.array_equal(doubled.raw.data, twin.add(ct, ct).raw.data)   # 2 x = x + x, residue for residue


@FEW
@given(c=constants)
def test_add_const_adds_to_every_slot(twin, c):
    for level in (0, PARAMS.levels):
        ct = twin.encrypt_complex(slots(4), level=level)
        near(twin.decrypt_complex(twin.add_const(ct, c)), slots(4) + c)


def test_constant_ops_equal_the_plaintext_ops_of_the_encoded_constant(twin):
    ct = twin.encrypt_complex(slots(5))
    for c in (0.3, -1.25j, 0.7 + 0.1j):
        scale = 2.0 ** 24
        pt = twin.encode_complex(np.full(twin.slots, c), level=twin.level(ct), scale=scale)
        assert np.array_equal(twin.mul_const(ct, c, scale=scale).raw.data, twin.mul_plain(ct, pt).raw.data)
        like = twin.encode_complex(np.full(twin.slots, c), like=ct)
        assert np.array_equal(twin.add_const(ct, c).raw.data, twin.add_plain(ct, like).raw.data)


def test_bad_constants_and_scales_are_refused(twin):
    ct = twin.encrypt([0.5])
    for bad, msg in [("x", "real or complex number"), (True, "real or complex number"), ([1, 2], "real or complex"),
                     (float("nan"), "finite"), (complex(1, float("inf")), "finite")]:
        with pytest.raises(CkksError, match=msg):
            twin.mul_const(ct, bad)
        with pytest.raises(CkksError, match=msg):
            twin.add_const(ct, bad)
    for scale in (0, -1.0, float("inf"), "2", True):
        with pytest.raises(CkksError, match="scale must be a positive"):
            twin.mul_const(ct, 0.5, scale=scale)
    low = twin.mod_switch_to(twin.encrypt([0.5], scale=2.0 ** 10), 0)
    with pytest.raises(CkksError, match="does not fit"):
        twin.mul_const(low, 2.0 ** 40, scale=2.0 ** 10)   # 2^50 against a 40-bit modulus
    with pytest.raises(CkksError, match="out of bounds"):
        twin.mul_const(ct, 0.5, scale=2.0 ** 100)
    with pytest.raises(CkksError, match="at most"):
        twin.encode_complex(np.zeros(twin.slots + 1))
    with pytest.raises(CkksError, match="finite"):
        twin.encode_complex([1, complex(math.nan, 0)])
