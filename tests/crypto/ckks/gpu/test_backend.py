"""The gpu-twin backend (the gpu backend's CPU twin) through the CKKS interface: every op at
every level against plaintext arithmetic and against SEAL on the same inputs, property tests,
SEAL's refusals with SEAL's messages, contexts, and no key material in any output."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import CkksError, CkksParams, backend_from_context, make_backend
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_SECRET,
    pack_frame,
    pack_sections,
    unpack_frame,
    unpack_sections,
)
from cryptoffload.crypto.ckks.gpu import RnsCkksBackend
from cryptoffload.errors import ConfigError, CryptoffloadError

from ..ckks_helpers import MISUSE_CASES, misuse
from .gpu_helpers import FEW, PARAMS, TOL, close, padded, vectors

LEVELS = range(PARAMS.levels, -1, -1)


@FEW
@given(x=vectors)
def test_decrypt_encrypt_roundtrip(twin, x):
    close(twin.decrypt(twin.encrypt(x)), padded(x))


def _ops_at(b, level, x, y, rotations=True):
    """Every op on encryptions of x and y at ``level``: name -> (ciphertext, expected slots)."""
    cx, cy = b.encrypt(x, level=level), b.encrypt(y, level=level)
    pt = b.encode(y, like=cx)
    out = {"add": (b.add(cx, cy), x + y), "sub": (b.sub(cx, cy), x - y), "negate": (b.negate(cx), -x),
           "add_plain": (b.add_plain(cx, pt), x + y), "sub_plain": (b.sub_plain(cx, pt), x - y)}
    if rotations:
        out["rotate"] = (b.rotate(cx, 3), np.roll(x, -3))
        out["rotate_composed"] = (b.rotate(cx, -5), np.roll(x, 5))
        for i, (c, s) in enumerate(zip(b.rotate_many(cx, [1, 17, -4, 6]), [1, 17, -4, 6])):
            out[f"rotate_many{i}"] = (c, np.roll(x, -s))
    if level > 0:   # at level 0 a product's scale (2^60) exceeds the 40-bit modulus: refused, as SEAL does
        out["mul_size3"] = (b.mul(cx, cy), x * y)
        out["mul_plain"] = (b.rescale(b.mul_plain(cx, pt)), x * y)
        out["mul_relin"] = (b.rescale(b.relinearize(b.mul(cx, cy))), x * y)
        out["mod_switch"] = (b.mod_switch_to(cx, level - 1), x)
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_every_op_at_every_level_matches_plaintext_arithmetic(twin, level):
    rng = np.random.default_rng(level)
    x, y = rng.uniform(-1, 1, twin.slots), rng.uniform(-1, 1, twin.slots)
    for name, (ct, want) in _ops_at(twin, level, x, y).items():
        assert twin.level(ct) == (level - 1 if name in ("mul_plain", "mul_relin", "mod_switch") else level), name
        close(twin.decrypt(ct), want)


def test_errors_are_of_the_order_of_seals_on_the_same_inputs(twin, seal):
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, twin.slots), rng.uniform(-1, 1, twin.slots)
    level = PARAMS.levels
    ours = {k: float(np.max(np.abs(twin.decrypt(c) - w))) for k, (c, w) in _ops_at(twin, level, x, y, False).items()}
    theirs = {k: float(np.max(np.abs(seal.decrypt(c) - w))) for k, (c, w) in _ops_at(seal, level, x, y, False).items()}
    for cx, b in ((twin.encrypt(x), twin), (seal.encrypt(x), seal)):
        err = float(np.max(np.abs(b.decrypt(b.rotate(cx, 3)) - np.roll(x, -3))))
        (ours if b is twin else theirs)["rotate"] = err
    for k in theirs:
        assert ours[k] <= 4 * max(theirs[k], 1e-7), (k, ours[k], theirs[k])


def test_scales_follow_seals_exactly(twin, seal):
    x = np.linspace(-1, 1, 50)
    scales = []
    for b in (twin, seal):
        c = b.encrypt(x)
        c2 = b.rescale(b.relinearize(b.mul(c, c)))
        c3 = b.rescale(b.mul_plain(c2, b.encode(x, like=c2)))
        scales.append([b.scale(c), b.scale(c2), b.scale(c3)])
    assert scales[0] == scales[1]
    assert twin.primes[1:-1] == seal.primes[1:-1]


@FEW
@given(x=vectors, step=st.integers(-(PARAMS.slots - 1), PARAMS.slots - 1))
def test_any_rotation_amount(twin, x, step):
    close(twin.decrypt(twin.rotate(twin.encrypt(x), step)), np.roll(padded(x), -step))


@FEW
@given(x=vectors, y=vectors, a=st.floats(-2, 2))
def test_linear_and_product_identities(twin, x, y, a):
    X, Y = padded(x), padded(y)
    cx, cy = twin.encrypt(x), twin.encrypt(y)
    lhs = twin.rescale(twin.relinearize(twin.mul(twin.add(cx, cy), cx)))
    close(twin.decrypt(lhs), (X + Y) * X)
    close(twin.decrypt(twin.rescale(twin.mul_plain(cx, twin.encode(np.full(twin.slots, a), like=cx)))), a * X)


def test_rotate_many_is_hoisted_and_equals_single_rotations(twin):
    assert twin.hoists_rotations
    x = np.linspace(-1, 1, twin.slots)
    c = twin.encrypt(x)
    for s, out in zip([1, 2, 3, 17, -5, 0], twin.rotate_many(c, [1, 2, 3, 17, -5, 0])):
        close(twin.decrypt(out), np.roll(x, -s))
        close(twin.decrypt(out), twin.decrypt(twin.rotate(c, s)))


def test_conjugation(twin):
    z = np.linspace(-1, 1, twin.slots) + 1j * np.linspace(1, -1, twin.slots)
    c = twin.encrypt_complex(z)
    assert np.max(np.abs(twin.decrypt_complex(twin.conjugate(c)) - np.conj(z))) < TOL
    close(twin.decrypt(twin.conjugate(twin.encrypt(z.real))), z.real)
    other = make_backend("gpu-twin", PARAMS, insecure_study=True)
    other.keygen([])
    with pytest.raises(CkksError, match="no conjugation key"):
        other.conjugate(other.encrypt([1.0]))


@pytest.mark.parametrize("case", MISUSE_CASES)
def test_misuse_refused_with_seals_messages(twin, seal, case):
    msgs = []
    for b in (twin, seal):
        with pytest.raises(CkksError) as exc:
            misuse(b, case)
        msgs.append(str(exc.value).split("(")[0])
    assert msgs[0] == msgs[1]
    assert isinstance(exc.value, CryptoffloadError)


def test_a_product_of_a_size3_ciphertext_is_refused(twin):
    ct = twin.encrypt([0.5])
    with pytest.raises(CkksError, match="needs a size-2 ciphertext"):
        twin.mul(twin.mul(ct, ct), ct)      # SEAL makes size 4, which no relinearisation key takes


def test_parameters_need_the_study_flag_beyond_128_bit_security():
    with pytest.raises(ConfigError, match="128-bit security"):
        RnsCkksBackend(PARAMS)
    secure = CkksParams(8192, (60, 40, 40, 60), 40)
    assert RnsCkksBackend(secure).chain.total_bits <= 218


def test_ciphertexts_round_trip_and_foreign_or_garbled_frames_are_refused(twin, seal):
    x = np.linspace(-1, 1, 40)
    c = twin.rescale(twin.relinearize(twin.mul(twin.encrypt(x), twin.encrypt(x))))
    blob = twin.serialize_ciphertext(c)
    back = twin.deserialize_ciphertext(blob)
    assert (twin.level(back), twin.scale(back)) == (twin.level(c), twin.scale(c))
    assert np.array_equal(back.raw.data, c.raw.data)
    pt = twin.encode(x, level=1)
    assert np.array_equal(twin.deserialize_plaintext(twin.serialize_plaintext(pt)).raw.data, pt.raw.data)
    garbled = bytearray(blob)
    garbled[len(blob) // 2] ^= 1
    other = make_backend("gpu-twin", PARAMS, insecure_study=True)
    other.keygen([])
    for bad, msg in ((bytes(garbled), "corrupted"), (blob[:-9], "truncated"), (b"junk" * 40, "bad magic"),
                     (seal.serialize_ciphertext(seal.encrypt(x)), "seal"),
                     (other.serialize_ciphertext(other.encrypt(x)), "another key set"),
                     (twin.serialize_plaintext(pt), "expected a serialised ciphertext")):
        with pytest.raises(CkksError, match=msg):
            twin.deserialize_ciphertext(bad)


def test_residues_beyond_their_prime_are_refused_even_in_a_valid_frame(twin):
    blob = twin.serialize_ciphertext(twin.encrypt([1.0]))
    payload = bytearray(unpack_frame(blob, KIND_CIPHERTEXT, twin.name, None, None)[0])
    payload[-4:] = (2 ** 32 - 1).to_bytes(4, "little")
    forged = pack_frame(KIND_CIPHERTEXT, twin.name, twin.params.digest(), twin.key_id, bytes(payload))
    with pytest.raises(CkksError, match="not below its prime"):
        twin.deserialize_ciphertext(forged)


def test_frames_of_the_gpu_backend_load_on_the_twin(twin):
    x = np.linspace(-1, 1, 40)
    blob = twin.serialize_ciphertext(twin.encrypt(x))
    payload = unpack_frame(blob, KIND_CIPHERTEXT, twin.name, None, None)[0]
    as_gpu = pack_frame(KIND_CIPHERTEXT, "gpu", twin.params.digest(), twin.key_id, payload)
    close(twin.decrypt(twin.deserialize_ciphertext(as_gpu)), padded(x, twin.slots))


def test_public_context_evaluates_but_cannot_decrypt(twin):
    pub = twin.public_context()
    server = backend_from_context(pub, insecure_study=True)
    assert type(server) is RnsCkksBackend and not server.can_decrypt
    assert server.key_bytes() == twin.key_bytes() and sorted(server.rotation_steps) == sorted(twin.rotation_steps)
    x = np.linspace(-1, 1, 30)
    ct = server.deserialize_ciphertext(twin.serialize_ciphertext(twin.encrypt(x)))
    res = server.rescale(server.relinearize(server.mul(ct, server.rotate(ct, 3))))
    with pytest.raises(CkksError, match="no secret key"):
        server.decrypt(res)
    close(twin.decrypt(twin.deserialize_ciphertext(server.serialize_ciphertext(res))),
          padded(x, twin.slots) * np.roll(padded(x, twin.slots), -3))
    assert b'"secret"' not in pub[:4096]


def test_secret_context_round_trip_file_mode_and_mismatch(twin, tmp_path):
    path = twin.save_secret_context(tmp_path / "keys.bin")
    assert path.stat().st_mode & 0o777 == 0o600
    again = RnsCkksBackend.from_secret_context(path.read_bytes(), insecure_study=True)
    x = np.linspace(-1, 1, 30)
    close(again.decrypt(again.deserialize_ciphertext(twin.serialize_ciphertext(twin.encrypt(x)))),
          padded(x, twin.slots))
    payload, kid, _pd = unpack_frame(path.read_bytes(), KIND_SECRET, twin.name, None, None)
    header, sec = unpack_sections(payload, "secret context")
    s = np.frombuffer(sec["secret"], dtype=np.int8).astype(np.int64)
    sec["secret"] = ((s + 2) % 3 - 1).astype(np.int8).tobytes()      # another ternary key
    forged = pack_frame(KIND_SECRET, twin.name, twin.params.digest(), kid, pack_sections(
        {k: v for k, v in header.items() if k != "sections"}, list(sec.items())))
    with pytest.raises(CkksError, match="does not belong to the public key"):
        RnsCkksBackend.from_secret_context(forged, insecure_study=True)


def test_no_key_material_in_any_output(twin, capsys):
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen([1])
    secret = bytes(b._sk.small.tobytes())
    c = b.rotate(b.encrypt([1.0, 2.0]), 1)
    texts = [repr(b), str(b), repr(c), repr(b._sk), repr(b.scheme), repr(b.encode([1.0]))]
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    for t in texts:
        assert len(t) < 200 and "array" not in t
    with pytest.raises(CkksError) as exc:
        b.add(c, b.mod_switch_to(c, 0))
    assert secret.hex()[:32] not in str(exc.value)


def test_close_wipes_the_secret_key_and_keygen_wipes_the_old_one():
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen([1])
    old = b._sk
    small, ntt = old.small, old.ntt
    assert small.any() and ntt.any()
    b.keygen([1])                       # a new key set: the old secret is zeroed, not just dropped
    assert not small.any() and not ntt.any()
    sk = b._sk
    c = b.encrypt([1.0, 2.0])
    assert np.allclose(b.decrypt(c)[:2], [1.0, 2.0], atol=TOL)
    b.close()
    assert not sk.small.any() and not sk.ntt.any() and not b.can_decrypt
    with pytest.raises(CkksError, match="no secret key"):
        b.decrypt(c)
    b.close()                           # idempotent
    assert b.rotate(c, 1) is not None   # evaluation keys still work
    with make_backend("gpu-twin", PARAMS, insecure_study=True) as b2:
        b2.keygen([])
        sk2 = b2._sk
    assert not sk2.ntt.any()


def test_keygen_leaves_no_copy_of_a_secret_derived_key_behind(monkeypatch):
    """s^2 and the automorphisms of s exist only while their switching keys are made."""
    from cryptoffload.crypto.ckks.gpu import scheme as scheme_mod

    wiped = []
    real = scheme_mod.wipe
    monkeypatch.setattr(scheme_mod, "wipe", lambda a: (wiped.append(a), real(a)))
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen([1, 2])
    assert wiped and all(not a.any() for a in wiped)
    digits = len(b.scheme.ring.digits)
    assert len(wiped) == 3 * (1 + 2 * digits)   # relin + 2 Galois keys: each s_from, and per digit two temporaries


def test_a_dense_layer_of_scalar_weights_is_the_encoded_products_sum(twin):
    """mul_scalar_sums in one launch equals the interface's loop (encode each weight, mul_plain,
    add) -- the constants are what encoding gives -- and a row of zeros is None."""
    from cryptoffload.crypto.ckks.batched import BatchedOps

    rng = np.random.default_rng(11)
    xs = [twin.encrypt(rng.uniform(-1, 1, twin.slots)) for _ in range(5)]
    w = rng.uniform(-0.5, 0.5, (3, 5))
    w[1] = 0.0
    w[2, 3] = 0.0
    before = twin.kernel_launches
    got = twin.mul_scalar_sums(xs, w, "fc")
    assert twin.kernel_launches - before == 2        # the gather, the layer
    want = BatchedOps.mul_scalar_sums(twin, xs, w, "fc")
    assert got[1] is None and want[1] is None
    for g, v in zip([got[0], got[2]], [want[0], want[2]]):
        assert np.array_equal(g.raw.data, v.raw.data)
    plain = np.stack([twin.decrypt(x) for x in xs])
    close(twin.decrypt(got[0]), w[0] @ plain)


def test_a_dense_layer_refuses_what_is_not_a_weight_matrix(twin):
    xs = [twin.encrypt(np.ones(4)) for _ in range(2)]
    with pytest.raises(CkksError, match=r"weights must be a finite matrix with 2 columns"):
        twin.mul_scalar_sums(xs, np.ones((1, 3)))
    with pytest.raises(CkksError, match="finite"):
        twin.mul_scalar_sums(xs, np.array([[1.0, np.nan]]))


def test_batched_squares_equal_one_by_one_across_batches(twin, monkeypatch):
    """squares() over more ciphertexts than one batch: the batched key switches and rescales
    give each ciphertext exactly what mul, relinearize and rescale give it alone."""
    from cryptoffload.crypto.ckks.gpu import backend as gpu_backend

    monkeypatch.setattr(gpu_backend, "BATCH", 2)
    rng = np.random.default_rng(12)
    xs = [twin.encrypt(rng.uniform(-1, 1, twin.slots)) for _ in range(5)]
    got = twin.squares(xs)
    for g, x in zip(got, xs):
        want = twin.rescale(twin.relinearize(twin.mul(x, x)))
        assert np.array_equal(g.raw.data, want.raw.data) and twin.scale(g) == twin.scale(want)
