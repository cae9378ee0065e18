"""The CKKS interface on SEAL and on the emulator: every op against numpy, the same refusals
with the same messages, public contexts that evaluate but cannot decrypt."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import CkksError, backend_from_context, make_backend
from cryptoffload.errors import CryptoffloadError

from .ckks_helpers import FEW, MISUSE_CASES, PARAMS, close, misuse, padded, vectors


@FEW
@given(x=vectors)
def test_encrypt_decrypt_roundtrip(backend, x):
    got = backend.decrypt(backend.encrypt(x))
    assert got.shape == (PARAMS.slots,)
    close(got, padded(x))


@FEW
@given(x=vectors, y=vectors)
def test_arithmetic_matches_numpy(backend, x, y):
    b = backend
    X, Y = padded(x), padded(y)
    cx, cy = b.encrypt(x), b.encrypt(y)
    close(b.decrypt(b.add(cx, cy)), X + Y)
    close(b.decrypt(b.sub(cx, cy)), X - Y)
    close(b.decrypt(b.negate(cx)), -X)
    prod = b.mul(cx, cy)
    assert b.size(prod) == 3 and b.ciphertext_bytes(prod) == 3 * 8192 * 3 * 8
    close(b.decrypt(prod), X * Y)  # SEAL decrypts size 3 too
    relin = b.relinearize(prod)
    assert b.size(relin) == 2
    res = b.rescale(relin)
    assert b.level(res) == PARAMS.levels - 1
    assert b.scale(res) == pytest.approx(PARAMS.scale ** 2 / b.primes[PARAMS.levels], rel=0)
    close(b.decrypt(res), X * Y)
    pt = b.encode(y, like=cx)
    assert (b.level(pt), b.scale(pt)) == (b.level(cx), b.scale(cx))
    close(b.decrypt(b.add_plain(cx, pt)), X + Y)
    close(b.decrypt(b.sub_plain(cx, pt)), X - Y)
    close(b.decrypt(b.rescale(b.mul_plain(cx, pt))), X * Y)
    # second level: a bias after a rescale needs the rescaled scale (encode like=)
    bias = b.encode(x, like=res)
    close(b.decrypt(b.add_plain(res, bias)), X * Y + X)
    low = b.mod_switch_to(cx, 0)
    assert (b.level(low), b.scale(low)) == (0, b.scale(cx))
    close(b.decrypt(low), X)


@FEW
@given(x=vectors, step=st.sampled_from([1, -1, 2, 3, 5, -4, 64, PARAMS.slots - 1]))
def test_rotation_matches_numpy(backend, x, step):
    b = backend
    X = padded(x)
    close(b.decrypt(b.rotate(b.encrypt(x), step)), np.roll(X, -step))


def test_rotate_many_and_scalar_encode(backend):
    b = backend
    x = np.linspace(-1, 1, b.slots)
    outs = b.rotate_many(b.encrypt(x), [1, 2, -1])
    for out, s in zip(outs, [1, 2, -1]):
        close(b.decrypt(out), np.roll(x, -s))
    close(b.decrypt(b.encrypt(0.5)), np.full(b.slots, 0.5))


@pytest.mark.parametrize("case", MISUSE_CASES)
def test_misuse_refused_identically(seal, emu, case):
    msgs = []
    for b in (seal, emu):
        with pytest.raises(CkksError) as exc:
            misuse(b, case)
        msgs.append(str(exc.value).split("(")[0])
    assert msgs[0] == msgs[1]
    assert isinstance(exc.value, CryptoffloadError)


def test_scale_mismatch_message(seal, emu):
    for b in (seal, emu):
        ct = b.encrypt([0.5])
        sq = b.rescale(b.relinearize(b.mul(ct, ct)))  # scale 2^80 / q2, not 2^40
        with pytest.raises(CkksError, match="scale mismatch"):
            b.add(sq, b.mod_switch_to(ct, 1))
        with pytest.raises(CkksError, match="scale mismatch"):
            b.add_plain(sq, b.encode([1.0], level=1))


@pytest.mark.parametrize("bad", [[np.nan], np.zeros(PARAMS.slots + 1), np.zeros((2, 2)), [1j], ["a"]])
def test_encode_refuses_bad_values(seal, emu, bad):
    for b in (seal, emu):
        with pytest.raises(CkksError):
            b.encode(bad)


def test_encode_refuses_values_too_large(seal, emu):
    for b in (seal, emu):
        with pytest.raises(CkksError, match="encoded values are too large"):
            b.encode(np.full(8, 2.0 ** 60), level=0)


def test_public_context_evaluates_but_cannot_decrypt(seal, emu):
    for b in (seal, emu):
        pub = b.public_context()
        server = type(b).from_public_context(pub)
        assert not server.can_decrypt and b.can_decrypt
        assert server.key_bytes() == b.key_bytes()
        x = np.linspace(-1, 1, 30)
        ct = server.deserialize_ciphertext(b.serialize_ciphertext(b.encrypt(x)))
        res = server.rescale(server.relinearize(server.mul(ct, server.rotate(ct, 1))))
        res = server.add_plain(res, server.encode(x, like=res))
        with pytest.raises(CkksError, match="no secret key"):
            server.decrypt(res)
        with pytest.raises(CkksError, match="no secret"):
            server.keygen()
        close(b.decrypt(b.deserialize_ciphertext(server.serialize_ciphertext(res))),
              padded(x) * np.roll(padded(x), -1) + padded(x))
        assert isinstance(backend_from_context(pub), type(b))
    pub = seal.public_context()
    assert b'"secret"' not in pub[:4096] and len(pub) < len(seal.secret_context())


@pytest.mark.parametrize("name", ["seal", "emulator", "gpu-twin"])
def test_added_rotation_keys_join_the_key_set(name):
    """``add_rotation_keys`` (written once in ``CheckedBackend``): only steps without a key are
    made, in the order asked, the key set keeps its id, and a public context cannot add keys."""
    b = make_backend(name, PARAMS, insecure_study=True)
    b.keygen([3], relin=False)
    key_id = b.key_id
    b.add_rotation_keys([3, 1, 0, -7, 1 - b.slots])
    assert b.rotation_steps == [3, 1, -7] and b.key_id == key_id
    server = type(b).from_public_context(b.public_context(), insecure_study=True)
    with pytest.raises(CkksError, match="add_rotation_keys: this backend holds no secret key"):
        server.add_rotation_keys([2])
