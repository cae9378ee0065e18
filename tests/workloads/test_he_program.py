"""HE programs: sizes from the ring, trace loading and its refusals, and the CNN generator."""

from __future__ import annotations

import copy
import json

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.workloads import he_program as hp

N = 16384
SET_C = CkksParams(N, (50, 48, 48, 48, 48, 48, 48, 48, 52), 30)


def _trace(ops, **extra):
    return {"schema": hp.SCHEMA, "params": SET_C.to_dict(), "ops": ops, **extra}


CT7 = 2 * N * 8 * 8
PT7 = N * 8 * 8


def _small_ops():
    return [
        {"id": 0, "op": "rotate", "level": 7, "inputs": ["x"], "output": 0, "bytes_in": CT7, "bytes_out": CT7,
         "keys": ["galois:1"]},
        {"id": 1, "op": "add", "level": 7, "inputs": ["x", 0], "output": 1, "bytes_in": 2 * CT7, "bytes_out": CT7},
        {"id": 2, "op": "mul_plain", "level": 7, "inputs": [1], "output": 2, "bytes_in": CT7, "bytes_out": CT7,
         "plaintext": "w0", "plaintext_bytes": PT7},
        {"id": 3, "op": "rescale", "level": 7, "inputs": [2], "output": 3, "bytes_in": CT7, "bytes_out": 2 * N * 7 * 8},
    ]


# -- traces ------------------------------------------------------------------------------------
def test_trace_loads_and_classifies_items(tmp_path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_trace(_small_ops())))
    prog = hp.load_trace(path)
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
    prog = hp.program_from_trace(_trace(ops, key_bytes={"relin": 12345}))
    assert prog.items["ct"].kind == hp.INPUT
    assert prog.items["pt"].kind == hp.PLAINTEXT and prog.ops[2].plaintext == "pt"
    assert prog.items["relin"].nbytes == 12345  # a size given in the trace wins
    assert prog.items["z"].output
    assert prog.measured_wall_s() == pytest.approx(0.012)
    assert [op.on_device for op in prog.ops] == [False, False, True, True, False]


@pytest.mark.parametrize("mutate, needle", [
    (lambda ops: ops[1].update(op="fancy_bootstrap"), "op #1 (id 1): unknown op 'fancy_bootstrap'"),
    (lambda ops: ops[0].pop("bytes_out"), "op #0 (id 0): rotate is missing its size field 'bytes_out'"),
    (lambda ops: ops[2].pop("plaintext_bytes"), "op #2 (id 2): mul_plain is missing its size field 'plaintext_bytes'"),
    (lambda ops: ops[3].pop("bytes_in"), "op #3 (id 3): rescale is missing its size field 'bytes_in'"),
    (lambda ops: ops[2].update(level=9), "op #2 (id 2): level 9 is outside 0..7"),
    (lambda ops: ops[0].update(keys=[]), "op #0 (id 0): rotate names no key"),
    (lambda ops: ops[1].update(inputs=["x", 3]), "op #1 (id 1): input '3' is produced by a later op"),
    (lambda ops: ops[1].update(bytes_out=-5), "op #1 (id 1): field 'bytes_out' must be an integer"),
    (lambda ops: ops[3].update(id=2), "op #3 (id 2): id '2' is used twice"),
])
def test_bad_traces_name_the_op(mutate, needle) -> None:
    ops = copy.deepcopy(_small_ops())
    mutate(ops)
    with pytest.raises(ConfigError) as exc:
        hp.program_from_trace(_trace(ops), "t.json")
    assert needle in str(exc.value)


def test_bad_trace_files(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        hp.load_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        hp.load_trace(bad)
    with pytest.raises(ConfigError, match="schema"):
        hp.program_from_trace({"schema": "other", "params": SET_C.to_dict(), "ops": _small_ops()})
    with pytest.raises(ConfigError, match="non-empty"):
        hp.program_from_trace(_trace([]))


# -- (b) the CNN generator -------------------------------------------------------------------
def test_generated_cnn_shape_and_trace_round_trip(tmp_path) -> None:
    prog = hp.generate_cnn()
    counts = prog.op_counts()
    # conv: 24 shared rotations; FC1: 100 neurons x 10 slot-sum rotations; FC2: 10 x 7
    assert counts["rotate"] == 24 + 100 * 10 + 10 * 7
    assert counts["mul"] == 5 + 1 and counts["relinearize"] == 5 + 1  # x^2 per channel, then once
    assert counts["mul_plain"] == 5 * 25 + 100 * 5 + 100 + 10 + 10
    plaintexts = [it for it in prog.items.values() if it.kind == hp.PLAINTEXT]
    assert len(plaintexts) == counts["mul_plain"] + counts["add_plain"]
    assert min(op.level for op in prog.device_ops) == 0  # all 7 levels used
    # every size follows the ring: a rotation at level l reads and writes 2 N (l+1) 8 bytes
    rot = next(op for op in prog.ops if op.op == "rotate")
    assert rot.bytes_out == prog.params.ciphertext_bytes(rot.level)
    path = prog.save_trace(tmp_path / "cnn.json")
    back = hp.load_trace(path)
    assert back.summary() | {"name": None, "source": None} == prog.summary() | {"name": None, "source": None}


def test_generator_refuses_bad_shapes() -> None:
    with pytest.raises(ConfigError):
        hp.generate_cnn(channels=0)
    with pytest.raises(ConfigError):
        hp.generate_cnn(CkksParams(16384, (40, 40, 40, 40), 30))
