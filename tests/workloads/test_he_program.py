"""HE programs: items classified from the ops (inputs, weights, keys, results), sizes from the
ring, host ops kept off the device, working sets and measured wall times."""

from __future__ import annotations

import json

import pytest
from he_trace_helpers import CT7, PT7, SET_C, small_ops, trace_of

from cryptoffload.workloads import he_program as hp
from cryptoffload.workloads.he_trace import load_trace, program_from_trace


def test_trace_loads_and_classifies_items(tmp_path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace_of(small_ops())))
    prog = load_trace(path)
    assert prog.source == "trace" and len(prog.device_ops) == 4
    it = prog.items
    assert it["x"].kind == hp.INPUT and it["x"].nbytes == CT7 and it["x"].last_use == 1
    assert it["w0"].kind == hp.PLAINTEXT and it["w0"].fetched and it["w0"].nbytes == PT7
    assert it["galois:1"].kind == hp.KEY and it["galois:1"].nbytes == SET_C.ksk_bytes
    assert it["3"].output and it["3"].last_use is None  # the result is kept
    assert it["0"].last_use == 1 and it["1"].last_use == 2
    assert prog.weight_bytes == PT7 and prog.key_total_bytes == SET_C.ksk_bytes
    assert prog.measured_wall_s() is None
    ws = prog.working_set(prog.ops[1])
    assert ws == 2 * CT7 + CT7


def test_host_ops_encode_encrypt_decrypt_and_wall_times() -> None:
    ops = [
        {"id": "e", "op": "encrypt", "level": 7, "inputs": ["m"], "output": "ct", "bytes_out": CT7},
        {"id": "p", "op": "encode", "level": 7, "inputs": [], "output": "pt", "bytes_out": PT7},
        {"id": "m1", "op": "mul_plain", "level": 7, "inputs": ["ct", "pt"], "output": "y", "bytes_in": CT7,
         "bytes_out": CT7, "wall_s": 0.002},
        {"id": "r", "op": "relinearize", "level": 7, "inputs": ["y"], "output": "z", "bytes_in": CT7,
         "bytes_out": CT7, "wall_s": 0.01},
        {"id": "d", "op": "decrypt", "inputs": ["z"], "output": "out"},
    ]
    prog = program_from_trace(trace_of(ops, key_bytes={"relin": 12345}))
    assert prog.items["ct"].kind == hp.INPUT
    assert prog.items["pt"].kind == hp.PLAINTEXT and prog.ops[2].plaintext == "pt"
    assert prog.items["relin"].nbytes == 12345  # a size given in the trace wins
    assert prog.items["z"].output
    assert prog.measured_wall_s() == pytest.approx(0.012)
    assert [op.on_device for op in prog.ops] == [False, False, True, True, False]
