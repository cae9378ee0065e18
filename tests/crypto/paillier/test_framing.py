"""Ciphertext frames: round trip, the bound each records (version 3; version 2 read with n/3),
and every corruption refused.

The attack: version 1 had no checksum, and 20 of 31 bit flips inside ciphertext bodies
decrypted to garbage with exit 0. Now every single-bit flip anywhere in a frame is refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import ENCRYPTION


def test_round_trip_one_and_many(keys) -> None:
    pk, sk = keys
    c = ENCRYPTION.encrypt(pk, 42)
    assert sk.decrypt(pl.ciphertext_from_bytes(pk, c.to_bytes())) == 42
    cts = ENCRYPTION.encrypt_many(pk, list(range(5)))
    assert sk.decrypt_many(pl.ciphertexts_from_bytes(pk, pl.ciphertexts_to_bytes(cts))) == list(range(5))
    empty = pl.ciphertexts_to_bytes([], pk)
    assert pl.ciphertexts_from_bytes(pk, empty) == []
    with pytest.raises(pl.PaillierError, match="public key"):
        pl.ciphertexts_to_bytes([])
    with pytest.raises(pl.CiphertextFormatError, match="one ciphertext"):
        pl.ciphertext_from_bytes(pk, pl.ciphertexts_to_bytes(cts))


def test_every_bit_flip_is_refused(keys) -> None:
    pk, sk = keys
    blob = pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [7, 8]))
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
    blob = ENCRYPTION.encrypt(pk, 42).to_bytes()
    with pytest.raises(pl.KeyMismatchError, match="not this key"):
        pl.ciphertext_from_bytes(opk, blob)
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        pl.ciphertext_from_bytes(pk, blob[:-1])
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        pl.ciphertext_from_bytes(pk, blob + b"\0")
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        pl.ciphertext_from_bytes(pk, b"XXXX" + blob[4:])
    with pytest.raises(pl.CiphertextFormatError, match="version 9"):
        pl.ciphertext_from_bytes(pk, blob[:4] + b"\x09" + blob[5:])
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        pl.ciphertext_from_bytes(pk, b"")
    body = bytearray(blob)
    body[40] ^= 0x10
    with pytest.raises(pl.CiphertextFormatError, match="checksum"):
        pl.ciphertext_from_bytes(pk, bytes(body))
    with pytest.raises(pl.CiphertextFormatError, match="must be bytes"):
        pl.ciphertext_from_bytes(pk, "text")  # type: ignore[arg-type]


def test_intact_frame_of_a_non_ciphertext_refused(keys) -> None:
    """A frame whose checksum is right but whose value is no unit mod n^2 (made by hand)."""
    from cryptoffload.crypto.paillier import framing

    pk, _ = keys
    with pytest.raises(pl.CiphertextFormatError, match="ciphertext 1: .*unit"):
        framing.unpack(pk, framing.pack(pk, [ENCRYPTION.encrypt(pk, 1).value, pk.n]))


def test_version_1_data_refused_with_the_fix(keys) -> None:
    pk, _ = keys
    old = pl.CIPHERTEXT_MAGIC + b"\x01" + pk.fingerprint + ENCRYPTION.encrypt(pk, 3).value.to_bytes(pk.ciphertext_bytes, "big")
    with pytest.raises(pl.CiphertextFormatError, match="version 1 .*encrypt the plaintexts again"):
        pl.ciphertexts_from_bytes(pk, old)


def _version_2(pk, values: list[int]) -> bytes:
    from cryptoffload.crypto.paillier import framing

    body = framing._HEADER.pack(pl.CIPHERTEXT_MAGIC, 2, pk.fingerprint, len(values)) + b"".join(
        v.to_bytes(pk.ciphertext_bytes, "big") for v in values)
    return body + framing._checksum(body)


def test_the_bound_travels_in_the_header(keys) -> None:
    """Version 3 records |m| <= B in a field of the key's plaintext size: 0, any bound and n/3
    itself round-trip; a frame written without one records n/3 (nothing is known)."""
    from cryptoffload.crypto.paillier import framing

    pk, sk = keys
    cts = ENCRYPTION.encrypt_many(pk, [3, 4])
    for bound in (0, 1, 1 << 64, pk.max_int):
        frame = pl.frame_from_bytes(pk, pl.ciphertexts_to_bytes(cts, bound=bound))
        assert (frame.bound, frame.version, frame.bound_recorded) == (bound, 3, True)
        assert sk.decrypt_many(frame.ciphertexts) == [3, 4]
    assert pl.frame_from_bytes(pk, ENCRYPTION.encrypt(pk, 1).to_bytes()).bound == pk.max_int
    blob = pl.ciphertexts_to_bytes(cts, bound=7)
    assert len(blob) == framing.frame_size(pk, 2) == 29 + 128 + 2 * 256 + 16  # 1024-bit key
    for bad in (-1, pk.max_int + 1, True, 1.0):
        with pytest.raises(pl.CiphertextFormatError, match=r"bound must be an integer in \[0, n/3\]"):
            pl.ciphertexts_to_bytes(cts, bound=bad)  # type: ignore[arg-type]


def test_a_bound_above_n_over_3_is_refused_even_with_its_checksum_redone(keys) -> None:
    from cryptoffload.crypto.paillier import framing

    pk, _ = keys
    blob = pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [3]), bound=3)
    start, size = framing._HEADER.size, framing.bound_bytes(pk)
    for bound in (pk.max_int + 1, pk.n - 1, (1 << (8 * size)) - 1):
        body = blob[:start] + bound.to_bytes(size, "big") + blob[start + size:-16]
        with pytest.raises(pl.CiphertextFormatError, match="header records a bound of .* above the key's signed "
                           "limit n/3"):
            pl.frame_from_bytes(pk, body + framing._checksum(body))
        with pytest.raises(pl.CiphertextFormatError, match="above the key's signed limit"):
            framing.read_header(pk, body[:framing.header_size(pk)], len(body) + 16)


def test_version_2_frames_are_read_with_the_bound_n_over_3(keys) -> None:
    """Files from before bounds stay readable; their bound is the whole signed range, and the
    frame says it was not recorded."""
    pk, sk = keys
    old = _version_2(pk, [c.value for c in ENCRYPTION.encrypt_many(pk, [9, 10])])
    frame = pl.frame_from_bytes(pk, old)
    assert (frame.bound, frame.version, frame.bound_recorded) == (pk.max_int, 2, False)
    assert sk.decrypt_many(frame.ciphertexts) == [9, 10]
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        pl.frame_from_bytes(pk, old[:-1])
    bad = bytearray(old)
    bad[40] ^= 1
    with pytest.raises(pl.CiphertextFormatError, match="checksum"):
        pl.frame_from_bytes(pk, bytes(bad))


def test_read_header_agrees_with_the_whole_frame(keys, other_keys) -> None:
    """The header read alone (to check bounds before reading 1 GiB operands) says what the
    whole frame says, and refuses what does not fit it."""
    from cryptoffload.crypto.paillier import framing

    pk, _ = keys
    opk, _ = other_keys
    for blob in (pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [1, 2, 3]), bound=3), pl.ciphertexts_to_bytes([], pk, bound=0),
                 _version_2(pk, [ENCRYPTION.encrypt(pk, 5).value])):
        header, values = framing.unpack_frame(pk, blob)
        assert framing.read_header(pk, blob[:framing.header_size(pk)], len(blob)) == header
        assert header.count == len(values)
    blob = pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [1, 2]), bound=2)
    head = blob[:framing.header_size(pk)]
    with pytest.raises(pl.CiphertextFormatError, match="truncated or garbled"):
        framing.read_header(pk, head, len(blob) - 1)
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        framing.read_header(pk, head[:40], len(blob))
    with pytest.raises(pl.KeyMismatchError, match="not this key"):
        framing.read_header(opk, blob[:framing.header_size(opk)], len(blob))
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        framing.read_header(pk, b"", 0)
    with pytest.raises(pl.CiphertextFormatError, match="version 1"):
        framing.read_header(pk, head[:4] + b"\x01" + head[5:], len(blob))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_bytes_are_a_frame_or_one_of_our_errors(keys, data) -> None:
    """Fuzz (issue 32): random bytes, and valid frames (both versions) with bytes changed,
    cut or appended, never crash the reader: a frame comes back whole (its header agreeing with
    read_header, its bound within n/3) or a PaillierError says why not."""
    from cryptoffload.crypto.paillier import framing

    pk, _ = keys
    base = data.draw(st.sampled_from([
        pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [1, 2]), bound=2), pl.ciphertexts_to_bytes([], pk, bound=0),
        _version_2(pk, [ENCRYPTION.encrypt(pk, 3).value]), b""]))
    blob = bytearray(data.draw(st.one_of(st.just(base), st.binary(max_size=700))))
    for _ in range(data.draw(st.integers(0, 3))):
        if blob:
            blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    blob = bytes(blob[:data.draw(st.integers(0, len(blob)))]) + data.draw(st.binary(max_size=8))
    try:
        header, values = framing.unpack_frame(pk, blob)
    except pl.PaillierError:
        return
    assert header.count == len(values) and 0 <= header.bound <= pk.max_int
    assert framing.read_header(pk, blob[:framing.header_size(pk)], len(blob)) == header
