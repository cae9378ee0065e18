"""HE programs read from a trace: every refusal names the op and what is wrong; unreadable
files and wrong schemas are refused."""

from __future__ import annotations

import copy

import pytest
from he_trace_helpers import SET_C, small_ops, trace_of

from cryptoffload.errors import ConfigError
from cryptoffload.workloads.he_trace import load_trace, program_from_trace


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
    ops = copy.deepcopy(small_ops())
    mutate(ops)
    with pytest.raises(ConfigError) as exc:
        program_from_trace(trace_of(ops), "t.json")
    assert needle in str(exc.value)


def test_bad_trace_files(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_trace(bad)
    with pytest.raises(ConfigError, match="schema"):
        program_from_trace({"schema": "other", "params": SET_C.to_dict(), "ops": small_ops()})
    with pytest.raises(ConfigError, match="non-empty"):
        program_from_trace(trace_of([]))
