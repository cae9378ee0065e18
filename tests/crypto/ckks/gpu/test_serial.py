"""Byte layouts: exact lengths, residues below their primes, headers checked field by field."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksError
from cryptoffload.crypto.ckks.gpu import serial

Q = np.array([1047041, 1048193], dtype=np.uint64)


def limbs(level):
    return level + 1


def test_object_round_trip():
    data = (np.arange(2 * 2 * 8, dtype=np.uint64).reshape(2, 2, 8) * 7919) % Q[None, :, None]
    blob = serial.pack_object(1, 2.0 ** 30, data)
    level, scale, back = serial.unpack_object(blob, "ciphertext", 8, 1, limbs, Q, (2, 3))
    assert (level, scale) == (1, 2.0 ** 30) and np.array_equal(back, data)
    assert len(blob) == serial.OBJ_HEADER.size + 4 * data.size     # 4-byte words on the wire


@pytest.mark.parametrize("field, msg", [("level", "level"), ("size", "size"), ("rows", "rows"),
                                        ("scale", "scale"), ("length", "bytes of residues"),
                                        ("residue", "not below its prime"), ("header", "truncated")])
def test_each_malformed_field_is_refused(field, msg):
    data = np.ones((2, 2, 8), dtype=np.uint64)
    level, size, rows, scale = 1, 2, 2, 2.0 ** 30
    body = serial.residues_to_bytes(data)
    if field == "level":
        level = 5
    elif field == "size":
        size = 7
    elif field == "rows":
        rows = 1
    elif field == "scale":
        scale = float("nan")
    elif field == "length":
        body = body[:-4]
    elif field == "residue":
        body = body[:-4] + int(Q[1]).to_bytes(4, "little")
    blob = serial.OBJ_HEADER.pack(level, size, rows, scale) + body
    if field == "header":
        blob = blob[:5]
    with pytest.raises(CkksError, match=msg):
        serial.unpack_object(blob, "ciphertext", 8, 1, limbs, Q, (2, 3))


def test_secret_key_bytes():
    s = np.array([-1, 0, 1, 1], dtype=np.int8)
    assert np.array_equal(serial.secret_from_bytes(serial.secret_to_bytes(s), 4), s)
    with pytest.raises(CkksError, match="-1, 0 or 1"):
        serial.secret_from_bytes(bytes([2, 0, 0, 0]), 4)
    with pytest.raises(CkksError, match="expected 4"):
        serial.secret_from_bytes(bytes(3), 4)
