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
    # issue 32: integers are integers (JSON 3.0 is not a size) and each has a ceiling with its unit
    (lambda ops: ops[1].update(bytes_out=4096.0), "field 'bytes_out' must be an integer between 1 and "
                                                  "1,099,511,627,776 bytes, got 4096.0"),
    (lambda ops: ops[1].update(bytes_out=10**15), "field 'bytes_out' must be an integer between 1 and"),
    (lambda ops: ops[2].update(level=True), "field 'level' must be an integer between 0 and 1,000, got True"),
    (lambda ops: ops[0].update(keys=[], step=1.5), "rotate's 'step' must be an integer"),
    (lambda ops: ops[0].update(wall_s=1e300), "wall_s must be 0 or between 1e-12 and 1e+06 s, got 1e+300"),
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
    with pytest.raises(ConfigError, match="is not acceptable JSON"):
        load_trace(bad)
    with pytest.raises(ConfigError, match="schema"):
        program_from_trace({"schema": "other", "params": SET_C.to_dict(), "ops": small_ops()})
    with pytest.raises(ConfigError, match="non-empty"):
        program_from_trace(trace_of([]))


@pytest.mark.parametrize("text, reason", [
    ('{"schema": "x", "n": NaN}', "NaN is not JSON"),
    ('{"schema": "x", "n": Infinity}', "Infinity is not JSON"),
    ('{"schema": "x", "n": 1e400}', "out of range"),
    ('{"schema": "x", "n": ' + "9" * 5000 + "}", "5,000 digits"),
    ('{"schema": "x", "schema": "y"}', "appears twice"),
])
def test_a_trace_file_is_strict_json(tmp_path, text: str, reason: str) -> None:
    """Python's json reads NaN, Infinity, 1e400 (as inf), integers of any length and a key
    twice (the last wins); a trace from outside is refused for each, naming the file."""
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"t.json is not acceptable JSON: .*{reason}"):
        load_trace(path)
