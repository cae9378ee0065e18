"""The emulator against SEAL: identical bookkeeping, values within CKKS noise, and the
overflow SEAL hides."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksError, EmulatorBackend

from .ckks_helpers import PARAMS, close


def test_emulator_agrees_with_seal(seal, emu):
    """The same program on both: values within CKKS noise, levels/scales/sizes identical."""
    rng = np.random.default_rng(7)
    x, w, bias = rng.uniform(-1, 1, 200), rng.uniform(-1, 1, 200), rng.uniform(-1, 1, 200)

    def program(b):
        ct = b.encrypt(x)
        acc = b.mul_plain(ct, b.encode(w, like=ct))
        acc = b.add(acc, b.rotate(acc, 1))
        acc = b.add(acc, b.rotate(acc, 2))
        acc = b.rescale(acc)
        acc = b.add_plain(acc, b.encode(bias, like=acc))
        sq = b.rescale(b.relinearize(b.mul(acc, acc)))
        other = b.mod_switch_to(b.encrypt(x), b.level(sq))
        meta = [(b.level(c), b.scale(c), b.ciphertext_bytes(c)) for c in (acc, sq, other)]
        return b.decrypt(sq), meta

    got_s, meta_s = program(seal)
    got_e, meta_e = program(emu)
    assert meta_s == meta_e
    close(got_s, got_e, 2.0 ** 24 / 2.0 ** 38)  # two levels deep: scale ~2^40 again, noise x ~4
    assert seal.key_bytes() == emu.key_bytes() == seal.measured_key_bytes()


def test_emulator_refuses_overflow_where_seal_returns_garbage(seal, emu):
    """Overflow depends on the polynomial's coefficients: a constant vector is the constant
    polynomial (2^22 x 2^40 > the 60-bit prime at level 0), one slot of the same size spreads
    over N coefficients and fits."""

    def square_to_level0(b, x):
        ct = b.encrypt(x)
        return b.mod_switch_to(b.rescale(b.relinearize(b.mul(ct, ct))), 0)

    dense = np.full(PARAMS.slots, 2.0 ** 11)
    assert np.max(np.abs(seal.decrypt(square_to_level0(seal, dense)) - dense ** 2)) > 1.0  # garbage
    with pytest.raises(CkksError, match="overflows"):
        emu.decrypt(square_to_level0(emu, dense))
    sparse = np.zeros(PARAMS.slots)
    sparse[5] = 2.0 ** 11
    for b in (seal, emu):
        got = b.decrypt(square_to_level0(b, sparse))
        assert np.max(np.abs(got - sparse ** 2)) < 1e-3 * 2.0 ** 22


def test_emulator_coefficients_follow_seal_slot_order(emu):
    n = PARAMS.poly_modulus_degree
    roots = np.array([pow(3, i, 2 * n) for i in range(PARAMS.slots)])
    coeffs = emu.coefficients(np.cos(np.pi * roots * 123 / n))  # = (X^123 + X^-123) / 2
    assert np.argsort(-np.abs(coeffs))[:2].tolist() == [123, n - 123]
    assert np.max(np.abs(coeffs)) == pytest.approx(0.5)


def test_shape_only_emulator_keeps_the_bookkeeping_not_the_values(emu):
    shapes = EmulatorBackend(PARAMS, values=False)
    shapes.keygen([1])
    ct = shapes.encrypt(np.full(PARAMS.slots, 2.0 ** 30))    # no overflow check: nothing is encoded
    sq = shapes.rescale(shapes.relinearize(shapes.mul(ct, ct)))
    ref = emu.rescale(emu.relinearize(emu.mul(emu.encrypt([0.5]), emu.encrypt([0.5]))))
    assert (shapes.level(sq), shapes.scale(sq), shapes.ciphertext_bytes(sq)) == \
        (emu.level(ref), emu.scale(ref), emu.ciphertext_bytes(ref))
    with pytest.raises(CkksError, match="level mismatch"):
        shapes.add(sq, ct)
    with pytest.raises(CkksError, match="no Galois key"):
        shapes.rotate(ct, 2)
    for op in (lambda: shapes.decrypt(sq), lambda: shapes.decode(shapes.encode([1.0])),
               lambda: shapes.serialize_ciphertext(sq)):
        with pytest.raises(CkksError, match="keeps no values"):
            op()
    back = EmulatorBackend.from_public_context(shapes.public_context())
    assert not back.keeps_values and back.key_bytes() == shapes.key_bytes()
