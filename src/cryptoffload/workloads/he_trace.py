"""HE programs read from a recorded trace: the JSON that
:class:`cryptoffload.crypto.ckks.RecordingBackend` writes from a real encrypted inference
(schema ``cryptoffload-he-trace/1``, documented in ``docs/studies/isc-he-cnn.md``).

Why a reader of its own: a trace is outside input (a user's ``--model trace.json``), so every
field is checked before a program is built from it -- ops in program order, one writer per
value, sizes present and positive, levels within the parameters, keys only on the ops that use
them -- and every refusal names the op (index and id) and what to fix.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.checks import LEVEL, OBJECT_BYTES, OP_S, ROTATION_STEP, load_json, shown
from cryptoffload.errors import ConfigError
from cryptoffload.io import read_input_text
from cryptoffload.workloads.he_program import (DEVICE_OPS, KEYED_OPS, OPS, PLAIN_OPS, SCHEMA, HEOp,
                                               HEProgram)

MAX_TRACE_BYTES = 256 * 1024 * 1024  # an HE trace (JSON): millions of ops


def _where(src: str, i: int, raw: Mapping[str, object]) -> str:
    ident = raw.get("id") if isinstance(raw, dict) else None
    return f"{src}: op #{i}" + (f" (id {ident!r})" if ident is not None else "")


def _int_field(src: str, i: int, raw: Mapping[str, object], key: str, *, required: bool, minimum: int = 0) -> int | None:
    if key not in raw or raw[key] is None:
        if required:
            op = raw.get("op", "?")
            raise ConfigError(f"{_where(src, i, raw)}: {op} is missing its size field '{key}'")
        return None
    v = raw[key]
    bound = OBJECT_BYTES if key.endswith("bytes") or key.startswith("bytes") else LEVEL
    if isinstance(v, bool) or not isinstance(v, int) or not max(minimum, bound.floor) <= v <= bound.ceiling:
        unit = f" {bound.unit}" if bound.unit else ""
        raise ConfigError(f"{_where(src, i, raw)}: field '{key}' must be an integer between "
                          f"{max(minimum, int(bound.floor)):,} and {int(bound.ceiling):,}{unit}, got {shown(v)}")
    return v


def params_from_dict(raw: object, src: str) -> CkksParams:
    """The trace's ``params`` (``scale_bits`` defaults to 30, EVA's, when a trace omits it)."""
    try:
        return CkksParams.from_dict({"scale_bits": 30, **raw} if isinstance(raw, dict) else raw)
    except (CkksError, ConfigError) as exc:
        raise ConfigError(f"{src}: {exc}") from None


def program_from_trace(data: object, src: str = "trace") -> HEProgram:
    """Validate a decoded trace and build its program. Every refusal names the op index."""
    trace, params, raw_ops = _check_header(data, src)
    key_bytes = _size_map(trace.get("key_bytes"), src, "key_bytes")
    input_bytes = _size_map(trace.get("input_bytes"), src, "input_bytes")
    reader = _OpReader(src, params, raw_ops)
    ops = [reader.read(i, raw) for i, raw in enumerate(raw_ops)]
    if not any(op.on_device for op in ops):
        raise ConfigError(f"{src}: the trace has no op that runs on the device")
    return HEProgram(str(trace.get("name", Path(src).stem)), "trace", params, ops, key_bytes, input_bytes)


def _check_header(data: object, src: str) -> tuple[Mapping[str, object], CkksParams, list[object]]:
    """The trace (a JSON object), its schema checked, its parameters and non-empty op list."""
    if not isinstance(data, dict):
        raise ConfigError(f"{src}: a trace is a JSON object with 'schema', 'params' and 'ops'")
    if data.get("schema") != SCHEMA:
        raise ConfigError(f"{src}: schema must be {SCHEMA!r}, got {data.get('schema')!r}")
    params = params_from_dict(data.get("params"), src)
    raw_ops = data.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise ConfigError(f"{src}: 'ops' must be a non-empty list")
    return data, params, raw_ops


class _OpReader:
    """Reads the ops in program order, remembering what earlier ops produced (ids, outputs, the
    sizes of encoded plaintexts) to check each op's references."""

    def __init__(self, src: str, params: CkksParams, raw_ops: list[object]) -> None:
        self.src = src
        self.params = params
        self.ids: set[str] = set()
        self.later_outputs = {str(r.get("output", r.get("id"))) for r in raw_ops if isinstance(r, dict)}
        self.produced: set[str] = set()
        self.encoded: dict[str, int] = {}

    def read(self, i: int, raw: object) -> HEOp:
        src = self.src
        op, name, ident = self._name_and_id(i, raw)
        output = str(op.get("output", ident))
        level = self._level(i, op, name)
        inputs = self._inputs(i, op)
        bytes_out = _int_field(src, i, op, "bytes_out", required=name != "decrypt", minimum=1) or 0
        bytes_in = _int_field(src, i, op, "bytes_in", required=name in DEVICE_OPS and bool(inputs), minimum=1) or 0
        inputs, plaintext, pt_bytes = self._plaintext(i, op, name, ident, inputs)
        keys = _keys(src, i, op, name)
        wall = _wall_s(src, i, op)
        if name == "encode":
            self.encoded[output] = bytes_out
        self.produced.add(output)
        return HEOp(i, ident, name, level, inputs, output, bytes_in, bytes_out, keys, plaintext, pt_bytes,
                    wall, str(op.get("phase", "")))

    def _name_and_id(self, i: int, raw: object) -> tuple[Mapping[str, object], str, str]:
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.src}: op #{i} must be an object, got {type(raw).__name__}")
        name = raw.get("op")
        if name not in OPS:
            raise ConfigError(f"{_where(self.src, i, raw)}: unknown op {name!r} (known: {', '.join(OPS)})")
        ident = str(raw.get("id", i))
        if ident in self.ids:
            raise ConfigError(f"{_where(self.src, i, raw)}: id {ident!r} is used twice")
        self.ids.add(ident)
        return raw, name, ident

    def _level(self, i: int, raw: Mapping[str, object], name: str) -> int:
        """The op's level (default: the top), within the parameters' levels."""
        level = _int_field(self.src, i, raw, "level", required=name in DEVICE_OPS or name == "encrypt")
        level = self.params.levels if level is None else level
        if not 0 <= level <= self.params.levels:
            raise ConfigError(f"{_where(self.src, i, raw)}: level {level} is outside 0..{self.params.levels} "
                              f"(the trace's params have {self.params.data_primes} data primes)")
        return level

    def _inputs(self, i: int, raw: Mapping[str, object]) -> tuple[str, ...]:
        """The op's inputs, none of them the output of a later op."""
        inputs_raw = raw.get("inputs", [])
        if not isinstance(inputs_raw, list):
            raise ConfigError(f"{_where(self.src, i, raw)}: 'inputs' must be a list of ids or names")
        inputs = tuple(str(x) for x in inputs_raw)
        for x in inputs:
            if x not in self.produced and x in self.later_outputs and x not in self.encoded:
                raise ConfigError(f"{_where(self.src, i, raw)}: input {x!r} is produced by a later op "
                                  "(ops must be listed in program order)")
        return inputs

    def _plaintext(self, i: int, raw: Mapping[str, object], name: str, ident: str,
                   inputs: tuple[str, ...]) -> tuple[tuple[str, ...], str | None, int]:
        """For an op that reads a plaintext: its ciphertext inputs, the plaintext's name (an
        encoded input, the one named, or ``pt:<id>``) and size; other ops read none."""
        plaintext = raw.get("plaintext")
        pt_bytes = _int_field(self.src, i, raw, "plaintext_bytes", required=False, minimum=1) or 0
        if name not in PLAIN_OPS:
            if plaintext is not None:
                raise ConfigError(f"{_where(self.src, i, raw)}: only {', '.join(PLAIN_OPS)} read a plaintext")
            return inputs, plaintext, pt_bytes
        ct_inputs = [x for x in inputs if x not in self.encoded]
        pt_inputs = [x for x in inputs if x in self.encoded]
        if plaintext is None and pt_inputs:
            plaintext = pt_inputs[0]
        if plaintext is None:
            plaintext = f"pt:{ident}"
        plaintext = str(plaintext)
        if plaintext in self.encoded:
            pt_bytes = pt_bytes or self.encoded[plaintext]
        elif not pt_bytes:
            raise ConfigError(f"{_where(self.src, i, raw)}: {name} is missing its size field 'plaintext_bytes' "
                              "(and its plaintext is not the output of an encode op)")
        return tuple(ct_inputs), plaintext, pt_bytes


def _keys(src: str, i: int, raw: Mapping[str, object], name: str) -> tuple[str, ...]:
    """The evaluation keys an op uses: as listed, or relinearize's ``relin`` and a rotation's
    ``galois:<step>`` by default; only keyed ops use any."""
    keys_raw = raw.get("keys", [])
    if not isinstance(keys_raw, list) or not all(isinstance(k, str) for k in keys_raw):
        raise ConfigError(f"{_where(src, i, raw)}: 'keys' must be a list of key names")
    keys = tuple(keys_raw)
    if name == "relinearize" and not keys:
        keys = ("relin",)
    if name == "rotate" and not keys:
        step = raw.get("step")
        if step is None:
            raise ConfigError(f"{_where(src, i, raw)}: rotate names no key ('keys': ['galois:<step>'])")
        if isinstance(step, bool) or not isinstance(step, int) or not abs(step) <= ROTATION_STEP.ceiling:
            raise ConfigError(f"{_where(src, i, raw)}: rotate's 'step' must be an integer between "
                              f"-{int(ROTATION_STEP.ceiling):,} and {int(ROTATION_STEP.ceiling):,}, got {shown(step)}")
        keys = (f"galois:{step}",)
    for k in keys:   # conj and encapsulation:*: a bootstrap's conjugation and mod-raise keys
        if k not in ("relin", "conj") and not k.startswith(("galois:", "encapsulation:")):
            raise ConfigError(f"{_where(src, i, raw)}: key {k!r} must be 'relin', 'conj', 'galois:<step>' or "
                              "'encapsulation:<name>'")
    if name not in KEYED_OPS and keys:
        raise ConfigError(f"{_where(src, i, raw)}: {name} uses no evaluation key")
    return keys


def _wall_s(src: str, i: int, raw: Mapping[str, object]) -> float | None:
    """The op's measured wall time, where the trace recorded one."""
    wall = raw.get("wall_s")
    return None if wall is None else OP_S.check(f"{_where(src, i, raw)}: wall_s", wall)


def _size_map(raw: object, src: str, what: str) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{src}: '{what}' must map names to sizes in bytes")
    out = {}
    for k, v in raw.items():
        out[str(k)] = OBJECT_BYTES.check(f"{src}: {what}[{str(k)[:60]!r}]", v)
    return out


def load_trace(path: str | os.PathLike[str]) -> HEProgram:
    """The program of the trace file at ``path``; unreadable, not JSON or invalid: a ConfigError."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise ConfigError(f"{p}: trace file not found")
    text = read_input_text(p, "HE trace", max_bytes=MAX_TRACE_BYTES, error=ConfigError)
    return program_from_text(text, str(p))


def program_from_text(text: str | bytes, src: str = "trace") -> HEProgram:
    """The program of a trace's JSON text (strict JSON: no NaN or Infinity, no integer of more
    than 4,300 digits, no key twice; :func:`~cryptoffload.checks.strict_json`)."""
    return program_from_trace(load_json(src, text), src)


__all__ = ["load_trace", "params_from_dict", "program_from_text", "program_from_trace"]
