"""Bootstrapping's parts on the interface (constants.py and the defaults in backend.py): the
validators; the emulator's complex slots, constants, conjugation and shape-only mod_raise
against numpy; SEAL running real constants through encode and refusing the rest by name; the
recording backend keeping every new op (and its keys) in the trace."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksError, CkksParams, RecordingBackend, make_backend
from cryptoffload.crypto.ckks.constants import complex_slots, constant_scale, rounded, slot_constant
from cryptoffload.errors import ConfigError

from .ckks_helpers import PARAMS, TOL, close


def test_validators():
    assert slot_constant("op", 2) == 2 + 0j and slot_constant("op", np.float32(0.5)) == 0.5
    assert slot_constant("op", np.complex64(1j)) == 1j
    for bad in (True, "1", [1], None, float("inf")):
        with pytest.raises(CkksError, match="^op: "):
            slot_constant("op", bad)
    assert constant_scale("op", None, 8.0) == 8.0 and constant_scale("op", 3, 8.0) == 3.0
    assert rounded("op", 0.5 - 0.25j, 2.0 ** 4, 20) == (8, -4)
    with pytest.raises(CkksError, match="does not fit the 20-bit modulus"):
        rounded("op", 1.0, 2.0 ** 19, 20)
    assert np.array_equal(complex_slots("op", 1j, 4), np.full(4, 1j))
    assert np.array_equal(complex_slots("op", [1, 2j], 4), np.array([1, 2j, 0, 0]))
    with pytest.raises(CkksError, match="complex numbers"):
        complex_slots("op", ["a"], 4)


@pytest.fixture(scope="module")
def emu():
    b = make_backend("emulator", PARAMS)
    b.keygen([1], conjugation=True)
    return b


def test_the_emulator_runs_complex_slots_and_constants(emu):
    rng = np.random.default_rng(0)
    z = rng.uniform(-1, 1, emu.slots) + 1j * rng.uniform(-1, 1, emu.slots)
    ct = emu.encrypt_complex(z)
    assert np.allclose(emu.decrypt_complex(ct), z) and np.allclose(emu.decrypt(ct), z.real)
    out = emu.rescale(emu.mul_const(ct, 0.5 - 1j, scale=2.0 ** 20))
    assert emu.scale(out) == emu.scale(ct) * 2.0 ** 20 / emu.primes[emu.level(ct)]
    assert np.allclose(emu.decrypt_complex(out), (0.5 - 1j) * z)
    assert np.allclose(emu.decrypt_complex(emu.add_const(ct, 2 + 1j)), z + 2 + 1j)
    assert np.allclose(emu.decrypt_complex(emu.conjugate(emu.rotate(ct, 1))), np.conj(np.roll(z, -1)))
    assert np.allclose(emu.decrypt_complex(emu.mul_plain(ct, emu.encode_complex(z, like=ct))), z * z)
    with pytest.raises(CkksError, match="serialises real slot values only"):
        emu.serialize_ciphertext(ct)


def test_the_emulator_raises_the_shape_only(emu):
    low = emu.encrypt([0.5], level=0, scale=2.0 ** 20)
    with pytest.raises(CkksError, match="keeps slot values, not a secret key"):
        emu.mod_raise(low)
    shape = make_backend("emulator", PARAMS, values=False)
    shape.keygen([], ephemeral_weight=32)
    out = shape.mod_raise(shape.encrypt([0.5], level=0, scale=2.0 ** 20))
    assert (shape.level(out), shape.scale(out)) == (PARAMS.levels, 2.0 ** 20)
    assert shape.mod_raise_keys() == ["encapsulation:to_sparse", "encapsulation:sparse_to_dense"]
    plain = make_backend("emulator", PARAMS)
    plain.keygen([])
    with pytest.raises(CkksError, match="no conjugation key"):
        plain.conjugate(plain.encrypt([0.5]))


def test_seal_multiplies_by_real_constants_and_refuses_the_rest_by_name(seal):
    x = np.linspace(-1, 1, seal.slots)
    ct = seal.encrypt(x)
    close(seal.decrypt(seal.rescale(seal.mul_const(ct, -0.75))), -0.75 * x)
    close(seal.decrypt(seal.add_const(ct, 0.5)), x + 0.5)
    for call, name in [(lambda: seal.encode_complex([1j]), "encode_complex"), (lambda: seal.mul_const(ct, 1j), "encode_complex"),
                       (lambda: seal.decrypt_complex(ct), "decrypt_complex"), (lambda: seal.conjugate(ct), "conjugate"),
                       (lambda: seal.mod_raise(ct), "mod_raise"), (lambda: seal.encrypt_complex([1j]), "encrypt_complex")]:
        with pytest.raises(CkksError, match=f"^{name}: the seal backend"):
            call()
    big_p = CkksParams(8192, (60, 40, 40, 100), 40)
    with pytest.raises(ConfigError, match="special modulus is one prime of at most 60 bits"):
        make_backend("seal", big_p, insecure_study=True)
    assert make_backend("emulator", big_p, insecure_study=True).primes == make_backend(
        "emulator", CkksParams(8192, (60, 40, 40), 40), insecure_study=True).primes


def test_the_recording_backend_records_every_new_op_with_its_keys():
    rec = RecordingBackend(params=PARAMS)            # shape-only: a program's ops, no values
    rec.keygen([1], conjugation=True, ephemeral_weight=32)
    ct = rec.encrypt_complex([1j, 2], scale=2.0 ** 20)
    ct = rec.conjugate(rec.add_const(rec.mul_const(ct, 0.5j, scale=2.0 ** 10), 1))
    out = rec.mod_raise(rec.mod_switch_to(ct, 0))
    assert rec.level(out) == PARAMS.levels
    ops = [(op["op"], op["keys"]) for op in rec.ops if op["op"] != "mod_switch"]
    assert ops == [("encrypt", []), ("mul_const", []), ("add_const", []), ("conjugate", ["conj"]),
                   ("mod_raise", ["encapsulation:to_sparse", "encapsulation:sparse_to_dense"])]
    mul = next(op for op in rec.ops if op["op"] == "mul_const")
    assert mul["constant_scale"] == 2.0 ** 10 and mul["bytes_in"] == mul["bytes_out"]
    raise_op = rec.ops[-1]
    assert raise_op["level"] == 0 and raise_op["bytes_out"] == PARAMS.ciphertext_bytes(PARAMS.levels)
    pt = rec.encode_complex([1j], level=1)
    assert rec.ops[-1]["op"] == "encode" and rec.level(pt) == 1


def test_the_recording_backend_measures_the_twin():
    params = CkksParams(2048, (40, 30, 30, 40), 30)
    rec = RecordingBackend(make_backend("gpu-twin", params, insecure_study=True))
    rec.keygen([], conjugation=True, ephemeral_weight=32)
    z = np.linspace(-1, 1, rec.slots) * 1j
    ct = rec.encrypt_complex(z)
    got = rec.decrypt_complex(rec.conjugate(rec.mul_const(ct, 2, scale=1)))
    assert np.max(np.abs(got - np.conj(2 * z))) < 8 * TOL
    rec.mod_raise(rec.encrypt_complex(z, level=0, scale=2.0 ** 20))
    assert all(op["wall_s"] is not None for op in rec.ops)
    assert rec.summary()["counts"]["mod_raise"] == 1


@pytest.mark.parametrize("name", ["gpu-twin", "emulator"])
def test_slot_generator_names_the_roots_the_slots_are_values_at(name):
    """What a bootstrap's DFT matrices are built from: slot j is the polynomial at zeta^(g^j)."""
    params = CkksParams(1024, (30, 30), 20)
    b = make_backend(name, params, insecure_study=True)
    n, g = params.poly_modulus_degree, b.slot_generator
    assert g == (5 if name == "gpu-twin" else 3)
    rng = np.random.default_rng(4)
    if name == "gpu-twin":
        coeffs = rng.uniform(-1, 1, n)
        slots = b.scheme.fft.decode(coeffs, 1.0)
    else:
        slots = rng.uniform(-1, 1, params.slots) + 1j * rng.uniform(-1, 1, params.slots)
        coeffs = b.coefficients(slots)
    exps = np.array([pow(g, j, 2 * n) for j in range(params.slots)])
    zeta = np.exp(1j * np.pi * exps / n)
    want = np.polynomial.polynomial.polyval(zeta, coeffs)
    assert np.max(np.abs(slots - want)) < 1e-9
    assert RecordingBackend(b).slot_generator == g
