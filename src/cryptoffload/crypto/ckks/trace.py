"""The op tracer: a ``cryptoffload-he-trace/1`` record of what an encrypted program does.

The trace schema is documented in ``docs/studies/isc-he-cnn.md`` and loaded by
:func:`cryptoffload.workloads.he_program.load_trace`.
"""

from __future__ import annotations

import json
import os
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.params import WORD_BYTES
from cryptoffload.io import atomic_write

__all__ = ["TRACE_SCHEMA", "TracingEvaluator"]

TRACE_SCHEMA = "cryptoffload-he-trace/1"


class TracingEvaluator:
    """Wraps a backend, runs every op on it and records a ``cryptoffload-he-trace/1`` trace.

    Why: the in-storage study needs the program an encrypted inference really runs -- op
    order, levels, which weights and keys each op reads, and sizes -- to model when bytes must
    reach the accelerator; measuring the ops here also gives the CPU baseline (``wall_s``).

    Naming: each op gets an integer ``id``, its output the same id. A ciphertext the tracer
    did not produce (encrypted or deserialised elsewhere) is a *program input*, named by
    :meth:`name_input` or ``input:<k>`` on first use, with its size in ``input_bytes``. A
    plaintext from :meth:`encode` is an ``encode`` op (a stored weight); ``*_plain`` ops name it
    in ``plaintext`` and give ``plaintext_bytes``. A rotation that the library composes from
    several keys is recorded as one ``rotate`` op per key switch (wall time split evenly); a
    ``mod_switch_to`` over several levels as one ``mod_switch`` per dropped level, as SEAL does.
    Non-op methods (``level``, sizes, serialisation, ...) pass through unrecorded.
    """

    def __init__(self, backend: CkksBackend, *, phase: str | None = None, name: str = "he-trace") -> None:
        self.backend = backend
        self.name = name
        self._phase = phase
        self._ops: list[dict[str, Any]] = []
        self._names: dict[int, Any] = {}
        self._pinned: list[Any] = []  # objects that cannot be weak-referenced
        self._inputs: dict[str, int] = {}
        self._n_inputs = 0
        self._n_plain = 0

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.backend, attr)

    # -- phases and names ----------------------------------------------------------------------
    def set_phase(self, name: str | None) -> None:
        """Label the following ops (a layer name such as ``conv1``)."""
        self._phase = name

    @property
    def phase(self) -> str | None:
        return self._phase

    def _bind(self, obj: Any, name: Any) -> None:
        key = id(obj)
        self._names[key] = name
        try:
            weakref.finalize(obj, self._names.pop, key, None)
        except TypeError:
            self._pinned.append(obj)

    def name_input(self, ct: Ciphertext, name: str) -> Ciphertext:
        """Name a program input (e.g. the client's ``image``) before its first use."""
        if not isinstance(name, str) or not name or name.isdigit():
            raise CkksError(f"an input name must be a non-numeric string, got {name!r}")
        self._bind(ct, name)
        self._inputs[name] = self.backend.ciphertext_bytes(ct)
        return ct

    def _ref(self, ct: Any) -> Any:
        name = self._names.get(id(ct))
        if name is None:
            name = f"input:{self._n_inputs}"
            self._n_inputs += 1
            self.name_input(ct, name)
        return name

    def _pt_ref(self, pt: Any) -> Any:
        name = self._names.get(id(pt))
        if name is None:
            name = f"pt:{self._n_plain}"
            self._n_plain += 1
            self._bind(pt, name)
        return name

    # -- recording -----------------------------------------------------------------------------
    def _record(self, op: str, level: int, inputs: list[Any], bytes_in: int, bytes_out: int, wall: float,
                keys: Sequence[str] = (), **extra: Any) -> int:
        i = len(self._ops)
        rec: dict[str, Any] = {"id": i, "op": op, "level": int(level), "inputs": inputs, "output": i,
                               "bytes_in": int(bytes_in), "bytes_out": int(bytes_out), "keys": list(keys)}
        rec.update(extra)
        rec["wall_s"] = wall
        rec["phase"] = self._phase or ""
        self._ops.append(rec)
        return i

    def _timed(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        t = time.perf_counter()
        out = fn(*args)
        return out, time.perf_counter() - t

    @property
    def _vec(self) -> int:
        return self.backend.slots * WORD_BYTES

    def _ctb(self, ct: Any) -> int:
        return self.backend.ciphertext_bytes(ct)

    def _unary(self, op: str, fn: Callable[..., Any], ct: Ciphertext, *args: Any, keys: Sequence[str] = ()) -> Any:
        lv = self.backend.level(ct)
        ref = self._ref(ct)
        out, wall = self._timed(fn, ct, *args)
        self._bind(out, self._record(op, lv, [ref], self._ctb(ct), self._ctb(out), wall, keys))
        return out

    def _binary(self, op: str, fn: Callable[..., Any], a: Ciphertext, b: Ciphertext) -> Any:
        lv = self.backend.level(a)
        refs = [self._ref(a), self._ref(b)]
        out, wall = self._timed(fn, a, b)
        self._bind(out, self._record(op, lv, refs, self._ctb(a) + self._ctb(b), self._ctb(out), wall))
        return out

    def _plain_op(self, op: str, fn: Callable[..., Any], ct: Ciphertext, pt: Plaintext) -> Any:
        lv = self.backend.level(ct)
        ref, pref = self._ref(ct), self._pt_ref(pt)
        out, wall = self._timed(fn, ct, pt)
        self._bind(out, self._record(op, lv, [ref], self._ctb(ct), self._ctb(out), wall, (), plaintext=pref,
                                     plaintext_bytes=self.backend.plaintext_bytes(pt)))
        return out

    # -- the backend's methods, recorded ------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        self.backend.keygen(rotations, relin)

    def encode(self, values: Any, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None, name: str | None = None) -> Plaintext:
        """Encode (recorded as a host-side ``encode`` op: the output is a stored weight);
        ``name`` is a label kept in the record (``"name"``)."""
        pt, wall = self._timed(lambda: self.backend.encode(values, like=like, level=level, scale=scale))
        extra = {"name": name} if name else {}
        nb = self.backend.plaintext_bytes(pt)
        # bytes_in of a host-side encode/encrypt: the float64 slot vector it reads
        self._bind(pt, self._record("encode", self.backend.level(pt), [], self._vec, nb, wall, **extra))
        return pt

    def encrypt(self, values: Any, *, name: str | None = None) -> Ciphertext:
        """Encrypt (a host-side ``encrypt`` op, whose output is a program input in DRAM)."""
        ct, wall = self._timed(self.backend.encrypt, values)
        extra = {"name": name} if name else {}
        nb = self._ctb(ct)
        self._bind(ct, self._record("encrypt", self.backend.level(ct), [], self._vec, nb, wall, **extra))
        return ct

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        lv = self.backend.level(ct)
        ref = self._ref(ct)
        out, wall = self._timed(self.backend.decrypt, ct)
        self._record("decrypt", lv, [ref], self._ctb(ct), max(1, out.nbytes), wall)
        return out

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("add", self.backend.add, a, b)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("sub", self.backend.sub, a, b)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("mul", self.backend.mul, a, b)

    def negate(self, a: Ciphertext) -> Ciphertext:
        return self._unary("negate", self.backend.negate, a)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("add_plain", self.backend.add_plain, ct, pt)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("sub_plain", self.backend.sub_plain, ct, pt)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("mul_plain", self.backend.mul_plain, ct, pt)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        return self._unary("relinearize", self.backend.relinearize, ct, keys=("relin",))

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        return self._unary("rescale", self.backend.rescale, ct)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        be = self.backend
        cur = be.level(ct_or_pt)
        if isinstance(ct_or_pt, Plaintext):
            ref = self._pt_ref(ct_or_pt)
            out, wall = self._timed(be.mod_switch_to, ct_or_pt, level)
            # a plaintext at another level is another stored weight: a host-side encode
            self._bind(out, self._record("encode", be.level(out), [], be.plaintext_bytes(ct_or_pt),
                                         be.plaintext_bytes(out), wall, **{"from": ref}))
            return out
        ref = self._ref(ct_or_pt)
        out, wall = self._timed(be.mod_switch_to, ct_or_pt, level)
        if level == cur:
            self._bind(out, ref)
            return out
        per_limb = self._ctb(ct_or_pt) // (cur + 1)  # sizes are linear in the limbs
        n = cur - int(level)
        for lv in range(cur, int(level), -1):
            ref = self._record("mod_switch", lv, [ref], per_limb * (lv + 1), per_limb * lv, wall / n)
        self._bind(out, ref)
        return out

    def _rotation_records(self, ct: Ciphertext, steps: int, wall: float, ref: Any, **extra: Any) -> Any:
        plan = self.backend.rotation_plan(steps)
        lv = self.backend.level(ct)
        nb = self._ctb(ct)
        for key in plan:
            ref = self._record("rotate", lv, [ref], nb, nb, wall / len(plan), (key,), step=int(steps), **extra)
        return ref

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        ref = self._ref(ct)
        out, wall = self._timed(self.backend.rotate, ct, steps)
        self._bind(out, self._rotation_records(ct, steps, wall, ref))
        return out

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Recorded per step (wall time split evenly over the key switches); ``hoisted`` marks
        a backend that shares the decomposition across steps."""
        steps = list(steps)
        ref = self._ref(ct)
        outs, wall = self._timed(self.backend.rotate_many, ct, steps)
        switches = sum(len(self.backend.rotation_plan(s)) for s in steps) or 1
        extra = {"hoisted": True} if getattr(self.backend, "hoists_rotations", False) else {}
        for s, out in zip(steps, outs):
            share = wall * len(self.backend.rotation_plan(s)) / switches
            self._bind(out, self._rotation_records(ct, s, share, ref, **extra))
        return outs

    def deserialize_ciphertext(self, data: bytes, *, name: str | None = None) -> Ciphertext:
        """Deserialise; the ciphertext is a program input (named ``name`` or ``input:<k>``)."""
        ct = self.backend.deserialize_ciphertext(data)
        if name:
            self.name_input(ct, name)
        return ct

    # -- output ----------------------------------------------------------------------------
    @property
    def ops(self) -> list[dict[str, Any]]:
        return self._ops

    def trace(self) -> dict[str, Any]:
        """The JSON trace (schema ``cryptoffload-he-trace/1``)."""
        be = self.backend
        return {
            "schema": TRACE_SCHEMA,
            "name": self.name,
            "backend": be.name,
            "params": be.params.to_dict(),
            "key_bytes": dict(be.key_bytes()),
            "input_bytes": dict(self._inputs),
            "ops": [dict(op) for op in self._ops],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        return atomic_write(path, json.dumps(self.trace()))  # compact: a trace has thousands of ops

    def summary(self) -> dict[str, Any]:
        """Op counts and summed wall time per op (host-side ops included)."""
        counts: dict[str, int] = {}
        walls: dict[str, float] = {}
        for op in self._ops:
            counts[op["op"]] = counts.get(op["op"], 0) + 1
            walls[op["op"]] = walls.get(op["op"], 0.0) + op["wall_s"]
        return {"ops": len(self._ops), "counts": counts, "wall_s": walls}

