"""The serialised frame: round trips, and refusal of truncated, corrupted, foreign and
mismatched data before the library parses anything."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksError, CkksParams
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_PUBLIC,
    load_context_header,
    pack_frame,
    pack_sections,
    peek_context,
    unpack_frame,
    unpack_sections,
)

from .ckks_helpers import PARAMS, close, padded


def test_serialisation_roundtrip_and_refusals(seal, emu):
    for b in (seal, emu):
        x = np.linspace(-1, 1, 50)
        ct = b.rescale(b.relinearize(b.mul(b.encrypt(x), b.encrypt(x))))
        data = b.serialize_ciphertext(ct)
        back = b.deserialize_ciphertext(data)
        assert (b.level(back), b.scale(back), b.size(back)) == (b.level(ct), b.scale(ct), b.size(ct))
        close(b.decrypt(back), padded(x * x))
        with pytest.raises(CkksError, match="truncated"):
            b.deserialize_ciphertext(data[: len(data) // 2])
        with pytest.raises(CkksError, match="truncated"):
            b.deserialize_ciphertext(data[:10])
        garbled = bytearray(data)
        garbled[len(garbled) // 2] ^= 0x40
        with pytest.raises(CkksError, match="corrupted"):
            b.deserialize_ciphertext(bytes(garbled))
        with pytest.raises(CkksError, match="bad magic"):
            b.deserialize_ciphertext(b"\x00" * 200)
        other = type(b)(PARAMS)
        other.keygen([])
        with pytest.raises(CkksError, match="another key set"):
            other.deserialize_ciphertext(data)
        other_params = type(b)(CkksParams(8192, (60, 40, 60), 40))
        other_params.keygen([])
        with pytest.raises(CkksError, match="other CKKS parameters"):
            other_params.deserialize_ciphertext(data)
    with pytest.raises(CkksError, match="'emulator' backend"):
        seal.deserialize_ciphertext(emu.serialize_ciphertext(emu.encrypt([1.0])))


def test_frame_fields_are_checked_in_order():
    digest, kid = PARAMS.digest(), b"k" * 16
    frame = pack_frame(KIND_CIPHERTEXT, "emulator", digest, kid, b"payload")
    assert unpack_frame(frame, KIND_CIPHERTEXT, "emulator", digest, kid) == (b"payload", kid, digest)
    assert unpack_frame(frame, KIND_CIPHERTEXT, "emulator", None, None)[0] == b"payload"
    assert peek_context(frame) == ("emulator", KIND_CIPHERTEXT)
    with pytest.raises(CkksError, match="expected a serialised public context, got a ciphertext"):
        unpack_frame(frame, KIND_PUBLIC, "emulator", digest, kid)
    with pytest.raises(CkksError, match="'emulator' backend, not 'seal'"):
        unpack_frame(frame, KIND_CIPHERTEXT, "seal", digest, kid)
    with pytest.raises(CkksError, match="unexpected trailing bytes"):
        unpack_frame(frame + b"x", KIND_CIPHERTEXT, "emulator", digest, kid)
    with pytest.raises(CkksError, match="bytes"):
        unpack_frame("text", KIND_CIPHERTEXT, "emulator", digest, kid)


def test_context_sections_roundtrip_and_refusals():
    payload = pack_sections({"params": PARAMS.to_dict()}, [("a", b"12"), ("b", b"")])
    header, sections = unpack_sections(payload, "context")
    assert sections == {"a": b"12", "b": b""} and header["params"]["scale_bits"] == 40
    with pytest.raises(CkksError, match="section sizes do not add up"):
        unpack_sections(payload + b"!", "context")
    ctx = pack_frame(KIND_PUBLIC, "emulator", PARAMS.digest(), b"k" * 16, payload)
    params, _header, _sections, key_id = load_context_header("emulator", ctx, KIND_PUBLIC)
    assert params == PARAMS and key_id == b"k" * 16
    lying = pack_frame(KIND_PUBLIC, "emulator", CkksParams(8192, (60, 40, 60), 40).digest(), b"k" * 16, payload)
    with pytest.raises(CkksError, match="do not match its header"):
        load_context_header("emulator", lying, KIND_PUBLIC)


def test_peek_context_header_reads_the_header_only():
    """The JSON header of a context from its first bytes (what loading would allocate is
    bounded from it); a header running past the frame or not an object is refused."""
    from cryptoffload.crypto.ckks.framing import KIND_PUBLIC, pack_frame, pack_sections, peek_context_header

    payload = pack_sections({"galois": [[1, "galois:1"]]}, [("public", b"k" * 100)])
    frame = pack_frame(KIND_PUBLIC, "seal", bytes(16), bytes(16), payload)
    assert peek_context_header(frame) == {"galois": [[1, "galois:1"]], "sections": [["public", 100]]}
    with pytest.raises(CkksError, match="runs past the frame"):
        peek_context_header(frame[:62 + 4 + 20 + 16])
    bad = pack_frame(KIND_PUBLIC, "seal", bytes(16), bytes(16), struct.pack("<I", 2) + b"[]")
    with pytest.raises(CkksError, match="not an object"):
        peek_context_header(bad)
