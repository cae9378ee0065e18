"""The generated CNN program: op counts of the paper's shape, every size from the ring, a trace
round trip, and refused shapes."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.workloads import he_program as hp
from cryptoffload.workloads.he_cnn_generated import generate_cnn
from cryptoffload.workloads.he_trace import load_trace


def test_generated_cnn_shape_and_trace_round_trip(tmp_path) -> None:
    prog = generate_cnn()
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
    back = load_trace(path)
    assert back.summary() | {"name": None, "source": None} == prog.summary() | {"name": None, "source": None}


def test_generator_refuses_bad_shapes() -> None:
    with pytest.raises(ConfigError):
        generate_cnn(channels=0)
    with pytest.raises(ConfigError):
        generate_cnn(CkksParams(16384, (40, 40, 40, 40), 30))
