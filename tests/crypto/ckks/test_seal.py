"""The SEAL adapter: Galois keys from steps, transparent results, plaintext serialisation,
secret contexts written owner-only."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksError, SealBackend
from cryptoffload.errors import ConfigError

from .ckks_helpers import PARAMS, TOL, close, padded


def test_positive_only_steps_and_added_keys():
    """Steps, not Galois elements, reach SEAL (a list of positive ints is ambiguous in the
    bindings); keys added later belong to the same key set."""
    b = SealBackend(PARAMS)
    b.keygen([3, 6], relin=False)
    x = np.arange(b.slots, dtype=float) / b.slots
    ct = b.encrypt(x)
    close(b.decrypt(b.rotate(ct, 3)), np.roll(x, -3))
    with pytest.raises(CkksError, match="no relinearisation key"):
        b.relinearize(b.mul(ct, ct))
    with pytest.raises(CkksError, match="no Galois key"):
        b.rotate(ct, 1)
    b.add_rotation_keys([1, -7])
    close(b.decrypt(b.rotate(ct, -7)), np.roll(x, 7))
    close(b.decrypt(b.rotate(ct, 1)), np.roll(x, -1))
    assert sorted(b.key_bytes()) == ["galois:-7", "galois:1", "galois:3", "galois:6"]


def test_zero_weight_is_not_transparent(seal, emu):
    """SEAL throws on an unencrypted (transparent) result; the adapter re-encrypts zero."""
    for b in (seal, emu):
        ct = b.encrypt([0.5, 1.0])
        z = b.mul_plain(ct, b.encode(np.zeros(4), like=ct))
        assert (b.level(z), b.scale(z), b.size(z)) == (b.level(ct), b.scale(ct) ** 2, 2)
        d = b.sub(ct, ct)
        assert np.max(np.abs(b.decrypt(z))) < TOL and np.max(np.abs(b.decrypt(d))) < TOL
        assert b.size(b.mul_plain(b.mul(ct, ct), b.encode(np.zeros(4), like=ct))) == 3


def test_seal_plaintext_serialisation(seal):
    pt = seal.encode([1.0, 2.0], level=1)
    back = seal.deserialize_plaintext(seal.serialize_plaintext(pt))
    assert seal.level(back) == 1
    close(seal.decode(back)[:2], np.array([1.0, 2.0]))


def test_secret_context_saved_owner_only(seal, tmp_path):
    path = seal.save_secret_context(tmp_path / "client.keys")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    client = SealBackend.load_secret_context(path)
    assert client.can_decrypt and client.fingerprint == seal.fingerprint
    x = np.linspace(0, 1, 10)
    close(client.decrypt(seal.encrypt(x)), padded(x))
    with pytest.raises(CkksError, match="expected a serialised secret context"):
        SealBackend.from_secret_context(seal.public_context())
    # a private file (cryptoffload.private_files): a planted context would encrypt under its planter's key
    link = tmp_path / "link.keys"
    link.symlink_to(path)
    with pytest.raises(CkksError, match=f"the CKKS secret context file {link} is a symbolic link"):
        SealBackend.load_secret_context(link)
    os.chmod(path, 0o644)
    with pytest.raises(CkksError, match=f"open to others .mode 0644.; run: chmod 600 {path}"):
        SealBackend.load_secret_context(path)


def test_inflation_bounded_before_seal_loads(seal):
    """A ciphertext or a context key whose SEAL object would inflate past SEAL's in-memory size
    at these parameters is refused before SEAL reads it; a real one passes."""
    import zlib

    from cryptoffload.crypto.ckks.framing import KIND_CIPHERTEXT, KIND_PUBLIC, pack_frame, pack_sections
    from cryptoffload.crypto.ckks.framing import unpack_frame, unpack_sections
    from cryptoffload.crypto.ckks.inflate import COMPR_ZLIB, InflateLimit, seal_header

    bomb = zlib.compress(bytes(64 << 20), 9)
    bomb = seal_header(COMPR_ZLIB, 16 + len(bomb)) + bomb
    frame = pack_frame(KIND_CIPHERTEXT, "seal", seal.params.digest(), seal.key_id, bomb)
    with pytest.raises(InflateLimit, match="deserialize_ciphertext: the ciphertext inflates to more than"):
        seal.deserialize_ciphertext(frame)
    ctx = seal.public_context()
    payload, key_id, digest = unpack_frame(ctx, KIND_PUBLIC, "seal", None, None)
    header, sections = unpack_sections(payload, "context")
    header.pop("sections")
    SealBackend.from_public_context(ctx)
    sections["relin"] = bomb
    bad = pack_frame(KIND_PUBLIC, "seal", digest, key_id, pack_sections(header, list(sections.items())))
    with pytest.raises(InflateLimit, match=r"public context \(relin keys\) inflates to more than"):
        SealBackend.from_public_context(bad)


def test_a_key_file_keeps_the_galois_keys_whole_and_reads_back_the_same_key_set(seal, tmp_path):
    """The key file (crypto/ckks/keyfile.py): 0600; the keys it reads back are the same key set
    (its ciphertexts decrypt, its rotations rotate, its public context is the one keygen gave);
    the Galois keys lie uncompressed at byte 0, their compact form beside; a backend read from
    it writes the same key file again."""
    from cryptoffload.crypto.ckks.inflate import COMPR_NONE

    path = seal.save_key_file(tmp_path / "client.keys")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    head = path.read_bytes()[:16]
    assert head[:2] == b"\x5e\xa1" and head[6] == COMPR_NONE  # SEAL's magic, compression mode none
    client = SealBackend.load_key_file(path)
    assert client.can_decrypt and client.fingerprint == seal.fingerprint and client.key_bytes() == seal.key_bytes()
    x = np.linspace(-1, 1, 32)
    close(client.decrypt(client.rotate(seal.encrypt(x), 5)), np.roll(padded(x), -5))
    close(seal.decrypt(client.relinearize(client.mul(client.encrypt(x), client.encrypt(x)))), padded(x * x))
    assert client.public_context() == seal.public_context()  # the compact keys, read back on use
    again = SealBackend.load_key_file(client.save_key_file(tmp_path / "again.keys"))
    close(again.decrypt(seal.rotate(seal.encrypt(x), 64)), np.roll(padded(x), -64))
    secret = seal.save_secret_context(tmp_path / "client.ctx")  # a secret context is read as well
    assert SealBackend.load_key_file(secret).fingerprint == seal.fingerprint


def test_a_corrupted_or_exposed_key_file_is_refused(seal, tmp_path):
    path = seal.save_key_file(tmp_path / "client.keys")
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 4] ^= 1  # inside the Galois keys
    path.write_bytes(bytes(raw))
    with pytest.raises(CkksError, match="corrupted .its Galois region does not match its digest.; remove it"):
        SealBackend.load_key_file(path)
    raw[len(raw) // 4] ^= 1
    raw[-100] ^= 1  # inside the frame
    path.write_bytes(bytes(raw))
    with pytest.raises(CkksError, match="corrupted .checksum mismatch."):
        SealBackend.load_key_file(path)
    os.chmod(path, 0o640)
    with pytest.raises(ConfigError, match=f"open to others .mode 0640.; run: chmod 600 {path}"):
        SealBackend.load_key_file(path, error=ConfigError)


def test_plaintexts_kept_in_a_file_read_back_the_same_and_bound_to_their_key_set(seal, tmp_path):
    """save_plaintext_file / load_plaintext_file: the same values at the same levels, 0600, one
    file refused when corrupted or when read by another key set (its frame's key id)."""
    pts = [seal.encode(np.linspace(-1, 1, 16) * k, level=k % 3) for k in range(1, 6)]
    path = seal.save_plaintext_file(tmp_path / "w.weights", pts)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    back = seal.load_plaintext_file(path)
    assert [seal.level(p) for p in back] == [seal.level(p) for p in pts]
    for a, b in zip(pts, back):
        close(seal.decode(a)[:16], seal.decode(b)[:16])
    ct = seal.encrypt(np.ones(16), level=seal.level(back[1]))
    close(seal.decrypt(seal.rescale(seal.mul_plain(ct, back[1])))[:16], seal.decode(pts[1])[:16])
    other = SealBackend(PARAMS)
    other.keygen([1])
    with pytest.raises(CkksError, match="belongs to another key set"):
        other.load_plaintext_file(path)
    raw = bytearray(path.read_bytes())
    raw[1000] ^= 4
    path.write_bytes(bytes(raw))
    with pytest.raises(CkksError, match="corrupted .its plaintext region does not match its digest."):
        seal.load_plaintext_file(path)
