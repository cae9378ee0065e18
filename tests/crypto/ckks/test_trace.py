"""The op tracer: a recorded program loads through he_program with the right ops, keys and sizes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cryptoffload.crypto.ckks import TracingEvaluator
from cryptoffload.workloads.he_program import load_trace

from .ckks_helpers import PARAMS


def _traced_program(tr: TracingEvaluator) -> np.ndarray:
    """A small CNN-like step: conv-ish rotations and weights, a square, a bias and a sum."""
    x = np.linspace(-1, 1, 64)
    tr.set_phase("conv1")
    ct = tr.encrypt(x, name="image")
    w = tr.encode(np.full(64, 0.5), like=ct, name="w_conv")
    acc = tr.mul_plain(ct, w)
    acc = tr.add(acc, tr.mul_plain(tr.rotate(ct, 3), w))  # w read twice: one stored weight
    acc = tr.rescale(acc)
    tr.set_phase("act1")
    sq = tr.rescale(tr.relinearize(tr.mul(acc, acc)))
    tr.set_phase("fc")
    ra, rb = tr.rotate_many(sq, [1, 2])
    out = tr.add(tr.add(sq, ra), rb)
    out = tr.sub(out, tr.negate(out))
    skip = tr.negate(tr.mod_switch_to(ct, 1))  # a branch left as a second output
    tr.decrypt(skip)
    return tr.decrypt(out)


@pytest.mark.parametrize("which", ["emulator", "seal"])
def test_trace_loads_through_he_program(seal, emu, tmp_path, which):
    b = seal if which == "seal" else emu
    tr = TracingEvaluator(b, name="tiny-cnn")
    _traced_program(tr)
    trace = tr.trace()
    assert trace["schema"] == "cryptoffload-he-trace/1"
    assert trace["params"] == {"poly_modulus_degree": 8192, "coeff_modulus_bits": [60, 40, 40, 60],
                               "scale_bits": 40, "slots": 4096}
    for rec in trace["ops"]:
        assert {"id", "op", "level", "inputs", "output", "bytes_in", "bytes_out", "keys", "wall_s",
                "phase"} <= set(rec)
    path = tr.save(tmp_path / "trace.json")
    assert json.loads(path.read_text())["name"] == "tiny-cnn"
    prog = load_trace(path)
    counts = prog.op_counts()
    # rotate(3) is two key switches (-1, 4); rotate_many([1, 2]) two more
    assert counts["rotate"] == 4 and counts["mul_plain"] == 2 and counts["encode"] == 1
    assert counts["mod_switch"] == 1 and counts["relinearize"] == 1 and counts["decrypt"] == 2
    assert prog.params == PARAMS
    rot = [op for op in prog.ops if op.op == "rotate"]
    assert [op.keys for op in rot] == [("galois:-1",), ("galois:4",), ("galois:1",), ("galois:2",)]
    assert all(op.bytes_in == 2 * 8192 * 3 * 8 for op in rot[:2]) and rot[2].level == 0
    mp = [op for op in prog.ops if op.op == "mul_plain"]
    assert len({op.plaintext for op in mp}) == 1 and mp[0].plaintext_bytes == 8192 * 3 * 8
    mul = next(op for op in prog.ops if op.op == "mul")
    assert mul.level == 1 and mul.bytes_out == 3 * 8192 * 2 * 8 and mul.phase == "act1"
    # one stored weight (read twice), the keys this program used, the key sizes of the backend
    assert prog.weight_bytes == 8192 * 3 * 8
    assert prog.key_total_bytes == 5 * PARAMS.ksk_bytes
    assert prog.measured_wall_s() is not None and prog.summary()["device_ops"] > 10


def test_trace_names_unseen_inputs(emu):
    tr = TracingEvaluator(emu, phase="p")
    ext = emu.encrypt([1.0])  # encrypted outside the tracer: a program input
    tr.name_input(ext, "client")
    other = tr.deserialize_ciphertext(emu.serialize_ciphertext(emu.encrypt([2.0])))
    out = tr.add(ext, other)
    out2 = tr.rotate(out, 0)  # identity: no op, same value
    tr.add(out2, out)
    t = tr.trace()
    assert t["ops"][0]["inputs"] == ["client", "input:0"]
    assert t["ops"][1]["inputs"] == [0, 0]
    assert t["input_bytes"] == {"client": 2 * 8192 * 3 * 8, "input:0": 2 * 8192 * 3 * 8}
    assert all(op["phase"] == "p" for op in t["ops"])
    assert tr.level(out) == emu.level(out)  # non-op methods pass through
