"""Profile loader: every value is ``{ value = <number>, source = "..." }`` and every refusal
names the file and the dotted field."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.errors import CryptoffloadError, ProfileError
from cryptoffload.profiles import (
    ProfileValue,
    builtin_profile_path,
    load_profile,
    resolve_profile,
    write_profile,
)
from cryptoffload.profiles.loader import MAX_DEPTH, MAX_PROFILE_BYTES
from cryptoffload.sim.reconfig.platform import required_fields

META = '[meta]\nname = "t"\nkind = "cited"\ndescription = "a test profile"\n'
GOOD_BODY = (
    "[board]\n"
    'slots = { value = 2, source = "paper A, section 3" }\n'
    'clock_hz = { value = 66e6, source = "paper A, section 2" }\n'
    "[ciphers.aes-ecb]\n"
    'fpga_mbps = { value = 8880.0, source = "paper A, Table 2" }\n'
)


def _write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refused(path: Path, *needles: str, required: tuple[str, ...] = ()) -> str:
    with pytest.raises(ProfileError) as info:
        load_profile(path, required=required)
    msg = str(info.value)
    assert str(path) in msg, msg
    for n in needles:
        assert n in msg, msg
    return msg


# ---- accepted files -----------------------------------------------------------------------
def test_good_profile_loads_values_sources_and_meta(tmp_path: Path) -> None:
    prof = load_profile(_write(tmp_path, META + GOOD_BODY), required=("board.slots", "ciphers.aes-ecb.fpga_mbps"))
    assert (prof.name, prof.kind, prof.description) == ("t", "cited", "a test profile")
    assert prof.value("board.slots") == 2.0 and isinstance(prof.value("board.slots"), float)
    assert prof.value("board.clock_hz") == 66e6
    assert prof.source("ciphers.aes-ecb.fpga_mbps") == "paper A, Table 2"
    assert prof.get("board.nothing") is None and prof.get("board.nothing", 1.5) == 1.5
    assert prof.section("ciphers") == {"aes-ecb": {"fpga_mbps": 8880.0}}
    assert set(prof.values) == {"board.slots", "board.clock_hz", "ciphers.aes-ecb.fpga_mbps"}


def test_profile_accessors_name_the_missing_field(tmp_path: Path) -> None:
    path = _write(tmp_path, META + GOOD_BODY)
    prof = load_profile(path)
    for accessor in (prof.value, prof.source):
        with pytest.raises(ProfileError, match=r"board\.nothing"):
            accessor("board.nothing")


# ---- refused files: message names the file and the dotted field ---------------------------
def test_missing_required_field(tmp_path: Path) -> None:
    path = _write(tmp_path, META + GOOD_BODY)
    _refused(path, "'ciphers.des-ecb.fpga_mbps'", "missing", required=("board.slots", "ciphers.des-ecb.fpga_mbps"))


@pytest.mark.parametrize(
    "value",
    ['"fast"', "true", "false", "nan", "+inf", "-inf", "[1, 2]", "2000-01-01"],
    ids=["string", "true", "false", "nan", "inf", "-inf", "array", "date"],
)
def test_non_numeric_or_non_finite_value(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path, META + GOOD_BODY + f'bad_mbps = {{ value = {value}, source = "x" }}\n')
    _refused(path, "'ciphers.aes-ecb.bad_mbps'", "not a finite number")


def test_value_without_source(tmp_path: Path) -> None:
    path = _write(tmp_path, META + "[board]\nslots = { value = 2 }\n")
    _refused(path, "'board.slots'", "no source")


@pytest.mark.parametrize("source", ['""', '"   "', "3"], ids=["empty", "blank", "not-a-string"])
def test_empty_or_non_string_source(tmp_path: Path, source: str) -> None:
    path = _write(tmp_path, META + f"[board]\nslots = {{ value = 2, source = {source} }}\n")
    _refused(path, "'board.slots'", "no source")


def test_source_without_value(tmp_path: Path) -> None:
    path = _write(tmp_path, META + '[board]\nslots = { source = "paper" }\n')
    _refused(path, "'board.slots'", "no value")


def test_bare_number_without_inline_table(tmp_path: Path) -> None:
    path = _write(tmp_path, META + "[board]\nslots = 2\n")
    _refused(path, "'board.slots'", "value = <number>")


def test_missing_meta(tmp_path: Path) -> None:
    _refused(_write(tmp_path, GOOD_BODY), "'meta'", "missing")


def test_meta_that_is_not_a_table(tmp_path: Path) -> None:
    _refused(_write(tmp_path, 'meta = "x"\n' + GOOD_BODY), "'meta'")


@pytest.mark.parametrize("key", ["name", "kind", "description"])
def test_missing_meta_key(tmp_path: Path, key: str) -> None:
    lines = [ln for ln in META.splitlines() if not ln.startswith(key)]
    path = _write(tmp_path, "\n".join(lines) + "\n" + GOOD_BODY)
    _refused(path, f"'meta.{key}'", "missing")


@pytest.mark.parametrize("key", ["name", "description"])
def test_blank_meta_key(tmp_path: Path, key: str) -> None:
    meta = {"name": "t", "kind": "cited", "description": "d", key: "   "}
    text = "[meta]\n" + "".join(f'{k} = "{v}"\n' for k, v in meta.items())
    _refused(_write(tmp_path, text + GOOD_BODY), f"'meta.{key}'")


def test_bad_meta_kind(tmp_path: Path) -> None:
    path = _write(tmp_path, META.replace('kind = "cited"', 'kind = "guessed"') + GOOD_BODY)
    msg = _refused(path, "'meta.kind'")
    assert "cited" in msg and "measured" in msg


def test_invalid_toml(tmp_path: Path) -> None:
    path = _write(tmp_path, META + "[board\nslots = { value = 2, source = 'x' }\n")
    _refused(path, "not valid TOML")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.toml"
    path.write_bytes(META.encode() + b'[board]\nslots = { value = 2, source = "caf\xe9" }\n')
    _refused(path)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(path) in str(info.value) and "not found" in str(info.value)


def test_missing_file_without_toml_suffix_but_with_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not found"):
        resolve_profile(str(tmp_path / "absent"))


def test_unknown_builtin_name() -> None:
    with pytest.raises(ProfileError) as info:
        load_profile("no_such_profile_xyz")
    assert "no_such_profile_xyz" in str(info.value)


def test_profile_error_is_a_user_error() -> None:
    assert issubclass(ProfileError, CryptoffloadError)


# ---- built-in profile ---------------------------------------------------------------------
def test_builtin_virtex2_profile_has_every_required_field_with_a_source() -> None:
    req = required_fields()
    assert len(req) > 10
    prof = load_profile("virtex2_ciphers", required=req)
    assert prof.kind == "cited"
    assert prof.path == "profiles/virtex2_ciphers.toml"
    assert builtin_profile_path("virtex2_ciphers").is_file()
    for name in req:
        assert math.isfinite(prof.value(name))
    for name, pv in prof.values.items():
        assert isinstance(pv.source, str) and pv.source.strip(), name
    assert prof.value("board.slots") == 2
    assert prof.value("ciphers.aes-ecb.fpga_mbps") == 8880.0


def test_builtin_profile_by_path_is_the_same_profile() -> None:
    by_name = load_profile("virtex2_ciphers")
    by_path = load_profile(builtin_profile_path("virtex2_ciphers"))
    assert by_name.values == by_path.values


# ---- writing ------------------------------------------------------------------------------
def _meta(kind: str = "measured") -> dict:
    return {"name": "rt", "kind": kind, "description": "round trip", "cpu": "test cpu", "cores": 4,
            "libraries": {"libgcrypt": "1.10"}, "cipher_ids": ["aes-ecb", "des-ecb"]}


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    values = {
        "board.slots": ProfileValue(2, "paper, section 3.2"),
        "board.config_clock_hz": ProfileValue(66e6, "paper, section 2.3"),
        "ciphers.aes-ecb.software_mbps": ProfileValue(28362.5, 'measured "here", 1 core'),
        "ciphers.des-ecb.software_mbps": ProfileValue(1.5e-6, "tiny\nmulti-line source"),
    }
    out = write_profile(tmp_path / "sub" / "rt.toml", _meta(), values)
    assert out == tmp_path / "sub" / "rt.toml"
    prof = load_profile(out, required=list(values))
    assert prof.kind == "measured" and prof.name == "rt"
    assert prof.meta["cores"] == 4 and prof.meta["libraries"] == {"libgcrypt": "1.10"}
    assert prof.values == {k: ProfileValue(float(v.value), v.source, "measured") for k, v in values.items()}
    assert out.read_text(encoding="utf-8").count('provenance = "measured"') == len(values)  # written, not inferred


def test_write_is_atomic_and_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    write_profile(path, _meta(), {"a.b_s": ProfileValue(1.0, "s1")})
    write_profile(path, _meta(), {"a.b_s": ProfileValue(2.0, "s2")})
    assert load_profile(path).values == {"a.b_s": ProfileValue(2.0, "s2", "measured")}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    write_profile(path, _meta(), {"a.b_s": ProfileValue(1.0, "s1")})
    before = path.read_bytes()
    with pytest.raises(Exception):
        write_profile(path, {**_meta(), "bad": object()}, {"a.b_s": ProfileValue(2.0, "s2")})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]


@pytest.mark.parametrize(
    "values",
    [
        {"a.b_s": ProfileValue(math.nan, "s")},
        {"a.b_s": ProfileValue(math.inf, "s")},
        {"a.b_s": ProfileValue(1.0, "  ")},
        {"a.b_s": ProfileValue(1.0, "s"), "a.b_s.c_s": ProfileValue(2.0, "s")},  # leaf and table at once
        {"a.b_s.c_s": ProfileValue(2.0, "s"), "a.b_s": ProfileValue(1.0, "s")},
        {"a.value.c": ProfileValue(1.0, "s")},  # would read back as a value, not a table
        {"meta.x": ProfileValue(1.0, "s")},
        {"a..b": ProfileValue(1.0, "s")},
    ],
    ids=["nan", "inf", "blank-source", "leaf-then-table", "table-then-leaf", "value-table", "meta", "empty-part"],
)
def test_write_refuses_what_would_not_load_back(tmp_path: Path, values: dict) -> None:
    path = tmp_path / "p.toml"
    with pytest.raises(ProfileError):
        write_profile(path, _meta(), values)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


_part = st.from_regex(r"[a-z][a-z0-9_-]{0,7}", fullmatch=True).filter(lambda s: s not in ("meta", "value", "source"))
# a duration (profiles/rules.py; the other kinds have their own tests): 0, or 1e-12 .. 1e6 s
_leaf = st.from_regex(r"x[a-z0-9-]{0,7}_s", fullmatch=True)
_field = st.tuples(_part, _part, _leaf).map(".".join)
_number = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-12, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.integers(min_value=0, max_value=10**6),
)
_source = st.text(min_size=1, max_size=40).filter(lambda s: s.strip())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.dictionaries(_field, st.builds(ProfileValue, _number, _source), min_size=1, max_size=8))
def test_random_values_round_trip_exactly(tmp_path: Path, values: dict[str, ProfileValue]) -> None:
    path = write_profile(tmp_path / "h.toml", _meta(), values)
    prof = load_profile(path, required=list(values))
    assert set(prof.values) == set(values)
    for k, pv in values.items():
        got = prof.values[k]
        assert got.value == pv.value
        assert math.copysign(1.0, got.value) == math.copysign(1.0, pv.value)
        assert got.source == pv.source


# ---- values their field cannot hold, and hostile files ------------------------------------
@pytest.mark.parametrize("line, needles", [
    ('rotate_s = { value = -0.001, source = "x" }', ("'board.rotate_s'", "a duration", "cannot be negative")),
    ('lanes = { value = 2.5, source = "x" }', ("'board.lanes'", "a count", "whole number")),
    ('link_gbps = { value = 0, source = "x" }', ("'board.link_gbps'", "a rate", "between 1e-09 and 1e+06 gbps")),
])
def test_values_their_field_cannot_hold(tmp_path: Path, line: str, needles: tuple[str, ...]) -> None:
    _refused(_write(tmp_path, META + "[board]\n" + line + "\n"), *needles)


def test_unordered_bounds(tmp_path: Path) -> None:
    body = '[x]\ncpu_share_min = { value = 0.8, source = "a" }\ncpu_share_max = { value = 0.2, source = "a" }\n'
    _refused(_write(tmp_path, META + body), "'x.cpu_share_min'", "swap")


def test_deeply_nested_toml_refused_cleanly(tmp_path: Path) -> None:
    _refused(_write(tmp_path, META + "a = " + "[" * 5000 + "]" * 5000 + "\n", "arrays.toml"), "nested too deeply")
    _refused(_write(tmp_path, META + "b = " + "{c=" * 3000 + "1" + "}" * 3000 + "\n", "inline.toml"),
             "nested too deeply")
    deep = ".".join(["t"] * 5000)
    _refused(_write(tmp_path, META + f'[{deep}]\nx = {{ value = 1, source = "s" }}\n', "tables.toml"),
             f"more than {MAX_DEPTH} levels")


def test_oversized_file_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(META.encode() + b"#" * MAX_PROFILE_BYTES)
    _refused(path, "at most")


def test_write_refuses_a_value_its_field_cannot_hold(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="a count"):
        write_profile(tmp_path / "p.toml", _meta(), {"board.slots": ProfileValue(1.5, "measured")})
    assert list(tmp_path.iterdir()) == []


def test_reading_needs_no_toml_writer_and_writing_says_it_is_missing(tmp_path: Path, monkeypatch) -> None:
    """tomli-w is imported when a profile is written, not when one is read: the GPU machine
    reads profiles before its wheels are installed; without it, writing is one line."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['tomli_w'] = None\n"
            "from cryptoffload.profiles import load_profile, builtin_profile_path\n"
            "from cryptoffload.calibrate import gpu\n"
            "print('read ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "read ok" in proc.stdout, proc.stderr[-1000:]
    from cryptoffload.errors import BackendUnavailable
    from cryptoffload.profiles import loader

    monkeypatch.setitem(sys.modules, "tomli_w", None)
    with pytest.raises(BackendUnavailable, match=r"^writing a profile needs tomli-w \(pip install tomli-w==1\.2\.0\)"):
        write_profile(tmp_path / "p.toml", {"name": "x", "kind": "measured", "description": "d"},
                      {"a.b_s": ProfileValue(1.0, "here")})
    with pytest.raises(BackendUnavailable):
        loader.toml_writer()


# ---- issue 22 item 7: absurd numbers (a floor and a ceiling per unit) ------------------------
@pytest.mark.parametrize("line, needles", [
    ('rotate_s = { value = 1e-300, source = "x" }',
     ("'board.rotate_s'", "a duration in s", "0 or a number between 1e-12 and 1e+06 s", "got 1e-300")),
    ('cpu_ms = { value = 1e308, source = "x" }',
     ("'board.cpu_ms'", "a duration in ms", "between 1e-09 and 1e+09 ms", "got 1e+308")),
    ('link_gbps = { value = 1e-300, source = "x" }', ("'board.link_gbps'", "in gbps", "between 1e-09 and 1e+06 gbps")),
    ('h2d_bytes_per_s = { value = 1e308, source = "x" }', ("'board.h2d_bytes_per_s'", "between 1 and 1e+15 bytes/s")),
    ('nand_capacity_tb = { value = 1e-300, source = "x" }', ("'board.nand_capacity_tb'", "between 1e-12 and 1e+06 TB")),
    ('slots = { value = 99999999999999999999999, source = "x" }', ("'board.slots'", "between 1 and 1e+09")),
    ('slots = { value = ' + "9" * 400 + ', source = "x" }', ("'board.slots'", "not a finite number")),
    ('keys_share = { value = 1e-300, source = "x" }', ("'board.keys_share'", "between 1e-12 and 1")),
    ('plain_factor = { value = 1e308, source = "x" }', ("'board.plain_factor'", "between 1e-09 and 1e+09")),
], ids=["duration-tiny", "duration-ms-huge", "rate-tiny", "rate-huge", "capacity-tiny", "count-huge",
        "integer-beyond-float", "fraction-tiny", "ratio-huge"])
def test_values_outside_their_units_range_are_refused(tmp_path: Path, line: str, needles: tuple[str, ...]) -> None:
    _refused(_write(tmp_path, META + "[board]\n" + line + "\n"), *needles)


@pytest.mark.parametrize("spelled", ["nan", "+nan", "-nan", "inf", "+inf", "-inf"])
def test_nan_and_inf_spelled_in_toml_are_refused_with_the_range(tmp_path: Path, spelled: str) -> None:
    path = _write(tmp_path, META + f'[board]\nrotate_s = {{ value = {spelled}, source = "x" }}\n')
    _refused(path, "'board.rotate_s'", "not a finite number", "between 1e-12 and 1e+06 s")


# ---- issue 26: a kind and a plausible range per value ---------------------------------------
RANGED = META.replace('"cited"', '"derived"') + (
    "[ops]\n"
    'rotate_s = { value = 2e-6, source = "assumed: no figure", provenance = "assumed", '
    'range = [1e-6, 4e-6], range_why = "half to twice" }\n'
    'pmul_s = { value = 1e-7, source = "fitted to Table 1: least squares" }\n'
    'add_s = { value = 5e-8, source = "a paper, Table 3" }\n'
)


def test_a_value_carries_its_kind_and_range(tmp_path: Path) -> None:
    prof = load_profile(_write(tmp_path, RANGED))
    assert prof.provenance("ops.rotate_s") == "assumed"
    assert prof.range("ops.rotate_s") == (1e-6, 4e-6)
    assert prof.values["ops.rotate_s"].range_why == "half to twice"
    # a file without the key: the kind inferred once, by the loader
    assert prof.provenance("ops.pmul_s") == "fitted" and prof.range("ops.pmul_s") is None
    assert prof.provenance("ops.add_s") == "cited"
    with pytest.raises(ProfileError, match="'ops.nothing' is missing"):
        prof.range("ops.nothing")


def test_a_cited_or_measured_profile_gives_its_values_its_kind(tmp_path: Path) -> None:
    text = META.replace('"cited"', '"measured"') + '[ops]\nrotate_s = { value = 2e-6, source = "fitted to x" }\n'
    assert load_profile(_write(tmp_path, text)).provenance("ops.rotate_s") == "measured"


@pytest.mark.parametrize(("entry", "needles"), [
    ('{ value = 5e-6, source = "s", range = [1e-6, 4e-6], range_why = "w" }', ("(5e-06) lies outside its range [1e-06, 4e-06]",)),
    ('{ value = 2e-6, source = "s", range = [1e-6, 4e-6] }', ("has a range but no range_why",)),
    ('{ value = 2e-6, source = "s", range_why = "w" }', ("has a range_why but no range",)),
    ('{ value = 2e-6, source = "s", range = [1e-6], range_why = "w" }', ("range must be [low, high]",)),
    ('{ value = 2e-6, source = "s", range = ["a", 3e-6], range_why = "w" }', ("range must be [low, high]",)),
    ('{ value = 2e-6, source = "s", range = [-1e-6, 4e-6], range_why = "w" }', ("range end of field 'ops.rotate_s' is a duration",)),
    ('{ value = 2e-6, source = "s", provenance = "guessed" }', ("provenance must be one of cited, assumed",)),
    ('{ value = 2e-6, source = "s", rnage = [1e-6, 4e-6] }', ("unknown key(s) rnage",)),
    ('{ value = 2e-6, source = "s", unverified = 1 }', ("unverified must be the reason",)),
])
def test_a_bad_kind_or_range_is_refused(tmp_path: Path, entry: str, needles: tuple[str, ...]) -> None:
    _refused(_write(tmp_path, META + f"[ops]\nrotate_s = {entry}\n"), "'ops.rotate_s'" if "range end" not in needles[0] else "", *needles)


def test_a_count_range_must_be_whole(tmp_path: Path) -> None:
    entry = '{ value = 256, source = "s", range = [127.5, 512], range_why = "w" }'
    _refused(_write(tmp_path, META + f"[shape]\nnaive_baby = {entry}\n"), "range end of field 'shape.naive_baby' is a count")


def test_write_profile_keeps_kind_range_and_unverified(tmp_path: Path) -> None:
    values = {"ops.rotate_s": ProfileValue(2e-6, "assumed: none", "assumed", (1e-6, 4e-6), "half to twice", "not found"),
              "ops.add_s": ProfileValue(1e-7, "a paper")}
    path = write_profile(tmp_path / "w.toml", {"name": "w", "kind": "derived", "description": "d"}, values)
    prof = load_profile(path)
    assert prof.values["ops.rotate_s"] == values["ops.rotate_s"]
    assert prof.values["ops.add_s"] == ProfileValue(1e-7, "a paper", "cited")
    with pytest.raises(ProfileError, match="lies outside its range"):
        write_profile(tmp_path / "x.toml", {"name": "w", "kind": "derived", "description": "d"},
                      {"ops.rotate_s": ProfileValue(9e-6, "s", "assumed", (1e-6, 4e-6), "w")})
    assert not (tmp_path / "x.toml").exists()


BUILTINS = sorted(p.stem for p in builtin_profile_path("heax_set_c").parent.glob("*.toml"))


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_value_states_its_kind_and_every_assumed_or_fitted_one_a_range(name: str) -> None:
    """The issue's rule: an assumed or fitted value carries a range with its reason (the
    ``_min``/``_max`` ends of another value's range are that range, not values of their own)."""
    text = builtin_profile_path(name).read_text(encoding="utf-8")
    prof = load_profile(name)
    assert text.count("provenance = ") == len(prof.values)  # stated in the file, never inferred
    ends = {k for k in prof.values if k.rsplit("_", 1)[-1] in ("min", "max") and k.rsplit("_", 1)[0] in prof.values}
    bare = [k for k, v in prof.values.items() if v.provenance in ("assumed", "fitted") and v.range is None and k not in ends]
    assert bare == []
    for k in ends:  # a value's range and its _min/_max ends agree, unless the range sources its ends itself
        base = prof.values[k.rsplit("_", 1)[0]]
        assert base.range is not None, k
        if not base.range_why.startswith("low:"):  # "low: ...; high: ...": profiles/ranges.py (issue 35)
            assert prof.value(k) == base.range[0 if k.endswith("_min") else 1], k


def test_the_relabelled_values_of_issue_26() -> None:
    qat = load_profile("qat_dh8970")
    sw = qat.values["cpu.paper_sw_encryption_s"]
    assert sw.provenance == "derived" and sw.range == (3.786e-3, 4.246e-3)
    assert math.isclose(110 * 0.042 / 1151, 4.0139e-3, rel_tol=1e-4)  # the arithmetic its source states
    assert qat.values["card.reference_rsa1k_private_per_s"].unverified
    assert qat.values["card.reference_rsa2k_private_per_s"].unverified
    assert not qat.values["card.rsa2k_private_per_s"].unverified
    assert load_profile("tls_offload").provenance("handoff.nic_setup_s") == "assumed"
    assert load_profile("bsgs_u280").range("shape.naive_baby") == (128.0, 512.0)
    assert load_profile("heax_set_c").range("ops.keyswitch_s") == (6.4e-4, 9.6e-4)
    assert load_profile("he_cnn_paper_inputs").range("network.hidden") == (80.0, 120.0)
