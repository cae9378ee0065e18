"""The recording backend: a recorded program loads through he_program with the right ops, keys and
sizes; without an inner backend it records the same program with nothing measured."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksBackend, CkksError, CkksParams, RecordingBackend
from cryptoffload.workloads.he_trace import load_trace
from late_device import LateDevice, fake_clock

from .ckks_helpers import PARAMS, ROTATIONS


def _traced_program(tr: CkksBackend) -> np.ndarray:
    """A small CNN-like step: conv-ish rotations and weights, a square, a bias and a sum."""
    x = np.linspace(-1, 1, 64)
    tr.set_phase("conv1")
    ct = tr.label(tr.encrypt(x), "image")
    w = tr.label(tr.encode(np.full(64, 0.5), like=ct), "w_conv")
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
    tr = RecordingBackend(b, trace_name="tiny-cnn")
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
    tr = RecordingBackend(emu, phase="p")
    ext = emu.encrypt([1.0])  # encrypted outside the tracer: a program input
    tr.label(ext, "client")
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
    with pytest.raises(CkksError, match="already the program input 'client'"):
        tr.label(ext, "other")


def test_trace_names_the_weights_and_the_image(emu):
    tr = RecordingBackend(emu)
    _traced_program(tr)
    named = {op["name"]: op["op"] for op in tr.ops if "name" in op}
    assert named == {"image": "encrypt", "w_conv": "encode"}
    assert tr.summary()["calls"]["rotate"] == 3  # rotate(3) and rotate_many([1, 2]): 4 key switches


def test_simulated_recording_needs_no_backend(emu):
    """Without an inner backend: the same trace (ops, levels, inputs, keys, sizes), no values,
    no times -- a program's shape, for any parameters (even beyond the security bound)."""
    real = RecordingBackend(emu)
    _traced_program(real)
    sim = RecordingBackend(params=PARAMS)
    sim.keygen([1, -1, 2, 4, -4, 5, 64])
    with pytest.raises(CkksError, match="keeps no values"):
        _traced_program(sim)                       # the program decrypts: nothing to decrypt
    def shape(ops):
        return [{k: v for k, v in op.items() if k != "wall_s"} for op in ops if op["op"] != "decrypt"]
    assert shape(sim.ops) == shape(real.ops)[: len(sim.ops)] and len(sim.ops) == len(shape(real.ops))
    assert all(op["wall_s"] is None for op in sim.ops) and sim.summary()["wall_s"] == {}
    assert sim.trace()["key_bytes"] == emu.key_bytes() and not sim.measured
    big = RecordingBackend(params=CkksParams(8192, (60, 60, 60, 60, 60), 40))  # 300 bits: a study only
    big.keygen([])
    assert big.level(big.encrypt([1.0])) == 3
    with pytest.raises(CkksError, match="wraps a CkksBackend"):
        RecordingBackend("seal")  # type: ignore[arg-type]


def test_wall_s_is_the_ops_device_work_exactly(monkeypatch):
    """On a device whose work finishes only when waited for (tests/late_device.py), each op's
    ``wall_s`` is its own work exactly: the recorder waits before starting the timer (the
    previous op's work is not counted) and before stopping it (this op's is)."""
    clock = fake_clock(monkeypatch)
    work = {op: float(2 ** k) for k, op in enumerate(
        ("encrypt", "encode", "mul_plain", "rotate", "rotate_many", "add", "rescale", "mul", "relinearize", "sub",
         "negate", "mod_switch_to", "decrypt", "keygen"))}
    dev = LateDevice(PARAMS, clock, work)
    dev.keygen(ROTATIONS)                            # queued before the program, never an op's time
    tr = RecordingBackend(dev)
    _traced_program(tr)
    one_to_one = {k: v for k, v in work.items() if k not in ("rotate", "rotate_many", "mod_switch_to", "keygen")}
    for rec in tr.ops:
        if rec["op"] in one_to_one:
            assert rec["wall_s"] == one_to_one[rec["op"]], rec
    # rotate(3): two key switches sharing one call's work; rotate_many([1, 2]): one each
    assert [r["wall_s"] for r in tr.ops if r["op"] == "rotate"] == [work["rotate"] / 2] * 2 + [work["rotate_many"] / 2] * 2
    assert [r["wall_s"] for r in tr.ops if r["op"] == "mod_switch"] == [work["mod_switch_to"]]
    recorded = sum(r["wall_s"] for r in tr.ops)
    assert clock.now == work["keygen"] + recorded and clock.queued == 0.0
    dev.encrypt([1.0])                               # queued outside the recorder ...
    tr.synchronize()                                 # ... waited for through it (forwarded)
    assert clock.queued == 0.0 and clock.now == work["keygen"] + recorded + work["encrypt"]
