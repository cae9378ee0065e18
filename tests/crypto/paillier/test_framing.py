"""Ciphertext frames: round trip, and every corruption refused.

The attack: version 1 had no checksum, and 20 of 31 bit flips inside ciphertext bodies
decrypted to garbage with exit 0. Now every single-bit flip anywhere in a frame is refused."""

from __future__ import annotations

import pytest

from cryptoffload.crypto import paillier as pl


def test_round_trip_one_and_many(keys) -> None:
    pk, sk = keys
    c = pk.encrypt(42)
    assert sk.decrypt(pk.ciphertext_from_bytes(c.to_bytes())) == 42
    cts = pk.encrypt_many(list(range(5)))
    assert sk.decrypt_many(pl.ciphertexts_from_bytes(pk, pl.ciphertexts_to_bytes(cts))) == list(range(5))
    empty = pl.ciphertexts_to_bytes([], pk)
    assert pl.ciphertexts_from_bytes(pk, empty) == []
    with pytest.raises(pl.PaillierError, match="public key"):
        pl.ciphertexts_to_bytes([])
    with pytest.raises(pl.CiphertextFormatError, match="one ciphertext"):
        pk.ciphertext_from_bytes(pl.ciphertexts_to_bytes(cts))


def test_every_bit_flip_is_refused(keys) -> None:
    pk, sk = keys
    blob = pl.ciphertexts_to_bytes(pk.encrypt_many([7, 8]))
    refused = 0
    for bit in range(0, 8 * len(blob), 7):  # every 7th bit: header, both bodies, checksum
        bad = bytearray(blob)
        bad[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(pl.CiphertextFormatError):
            pl.ciphertexts_from_bytes(pk, bytes(bad))
        refused += 1
    assert refused == -(-8 * len(blob) // 7)


def test_corruption_messages_say_what_is_wrong(keys, other_keys) -> None:
    pk, _ = keys
    opk, _ = other_keys
    blob = pk.encrypt(42).to_bytes()
    with pytest.raises(pl.KeyMismatchError, match="not this key"):
        opk.ciphertext_from_bytes(blob)
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        pk.ciphertext_from_bytes(blob[:-1])
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        pk.ciphertext_from_bytes(blob + b"\0")
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        pk.ciphertext_from_bytes(b"XXXX" + blob[4:])
    with pytest.raises(pl.CiphertextFormatError, match="version 9"):
        pk.ciphertext_from_bytes(blob[:4] + b"\x09" + blob[5:])
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        pk.ciphertext_from_bytes(b"")
    body = bytearray(blob)
    body[40] ^= 0x10
    with pytest.raises(pl.CiphertextFormatError, match="checksum"):
        pk.ciphertext_from_bytes(bytes(body))
    with pytest.raises(pl.CiphertextFormatError, match="must be bytes"):
        pk.ciphertext_from_bytes("text")  # type: ignore[arg-type]


def test_intact_frame_of_a_non_ciphertext_refused(keys) -> None:
    """A frame whose checksum is right but whose value is no unit mod n^2 (made by hand)."""
    from cryptoffload.crypto.paillier import framing

    pk, _ = keys
    with pytest.raises(pl.CiphertextFormatError, match="ciphertext 1: .*unit"):
        framing.unpack(pk, framing.pack(pk, [pk.encrypt(1).value, pk.n]))


def test_version_1_data_refused_with_the_fix(keys) -> None:
    pk, _ = keys
    old = pl.CIPHERTEXT_MAGIC + b"\x01" + pk.fingerprint + pk.encrypt(3).value.to_bytes(pk.ciphertext_bytes, "big")
    with pytest.raises(pl.CiphertextFormatError, match="version 1 .*encrypt the plaintexts again"):
        pl.ciphertexts_from_bytes(pk, old)
