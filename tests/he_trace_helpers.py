"""What the trace tests share: the parameters, sizes and a small valid program as a trace."""

from __future__ import annotations

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.workloads import he_program as hp


N = 16384
SET_C = CkksParams(N, (50, 48, 48, 48, 48, 48, 48, 48, 52), 30)


def trace_of(ops, **extra):
    """A ``cryptoffload-he-trace/1`` object of ``ops`` at SET_C."""
    return {"schema": hp.SCHEMA, "params": SET_C.to_dict(), "ops": ops, **extra}


CT7 = 2 * N * 8 * 8
PT7 = N * 8 * 8


def small_ops():
    """Four device ops: rotate, add, mul_plain, rescale at level 7."""
    return [
        {"id": 0, "op": "rotate", "level": 7, "inputs": ["x"], "output": 0, "bytes_in": CT7, "bytes_out": CT7,
         "keys": ["galois:1"]},
        {"id": 1, "op": "add", "level": 7, "inputs": ["x", 0], "output": 1, "bytes_in": 2 * CT7, "bytes_out": CT7},
        {"id": 2, "op": "mul_plain", "level": 7, "inputs": [1], "output": 2, "bytes_in": CT7, "bytes_out": CT7,
         "plaintext": "w0", "plaintext_bytes": PT7},
        {"id": 3, "op": "rescale", "level": 7, "inputs": [2], "output": 3, "bytes_in": CT7, "bytes_out": 2 * N * 7 * 8},
    ]
