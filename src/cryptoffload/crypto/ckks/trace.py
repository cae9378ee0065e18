"""The recording backend: a :class:`CkksBackend` that records every op of the program run on it.

Why a backend and not a wrapper the algorithms must know about: an algorithm written against
:class:`CkksBackend` (the HE-CNN plans, the BSGS kernel) runs unchanged on SEAL, on the
emulator and here, and a run here is its op trace -- op order, levels, which weights and keys
each op reads, and sizes -- which the in-storage study needs to model when bytes must reach
the accelerator (Lattigo runs its algorithms on a simulated evaluator the same way).

:class:`RecordingBackend` delegates every op to an inner backend and times it (``wall_s``: a
measured baseline, taken once the inner backend's device has finished the op -- on a GPU the
kernels' time, not their launch's), or, made without one, runs on a shape-only emulator
(levels, scales, sizes and keys, no values, nothing measured: ``wall_s`` is null) for a
program's shape alone.
The trace is ``cryptoffload-he-trace/1`` (schema in ``docs/studies/isc-he-cnn.md``), loaded by
:func:`cryptoffload.workloads.he_trace.load_trace`.

Naming: each op gets an integer ``id``, its output the same id. A ciphertext the recorder did
not produce (encrypted or deserialised elsewhere) is a *program input*, named by
:meth:`RecordingBackend.label` or ``input:<k>`` on first use, with its size in
``input_bytes``. A plaintext from ``encode`` is an ``encode`` op (a stored weight);
``*_plain`` ops name it in ``plaintext`` and give ``plaintext_bytes``. A rotation that the
library composes from several keys is recorded as one ``rotate`` op per key switch (wall time
split evenly); a ``mod_switch_to`` over several levels as one ``mod_switch`` per dropped level,
as SEAL does. Bootstrapping's parts are ops of their own: ``mul_const`` and ``add_const`` (a
constant, no plaintext read; ``constant_scale`` says what the constant was encoded at),
``conjugate`` (keyed ``conj``) and ``mod_raise`` (keyed with the sparse-secret encapsulation's
keys where the inner backend has them); complex encodings are ``encode`` ops. A bootstrap
(``bootstrap_setup``/``bootstrap``) runs the driver (``bootstrap/driver.py``) on the recorder
itself, so it is recorded op by op, each op's ``phase`` naming its phase and stage
(``CoeffToSlot:0``, ``EvalMod``, ...). Methods that are not ops (``level``, sizes,
serialisation, ...) pass through unrecorded.
"""

from __future__ import annotations

import json
import os
import weakref
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.checks import JsonDict, JsonValue
from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Handle, Plaintext
from cryptoffload.crypto.ckks.bootstrap.capable import Bootstraps
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.emulator import EmulatorBackend
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.params import DEFAULT_PARAMS, WORD_BYTES, CkksParams
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.io import atomic_write

#: how a record names a value: the id of the op that made it, or a program input's name
Ref = int | str

__all__ = ["TRACE_SCHEMA", "RecordingBackend"]

TRACE_SCHEMA = "cryptoffload-he-trace/1"


_R = TypeVar("_R")

class RecordingBackend(Bootstraps, CkksBackend):
    """Runs every op on ``inner`` and records it (see the module docstring).

    ``inner=None``: a shape-only emulator of ``params`` (parameters beyond the 128-bit bound
    are allowed: nothing is encrypted), whose ops take no measurable time (``wall_s`` null).
    ``trace_name`` names the trace; ``phase`` labels the ops until :meth:`set_phase` changes it.
    """

    def __init__(self, inner: CkksBackend | None = None, *, params: CkksParams | None = None,
                 phase: str | None = None, trace_name: str = "he-trace") -> None:
        if inner is None:
            inner = EmulatorBackend(params or DEFAULT_PARAMS, insecure_study=True, values=False)
            self.measured = False
        elif not isinstance(inner, CkksBackend):
            raise CkksError(f"the recording backend wraps a CkksBackend, got {type(inner).__name__}")
        elif params is not None and params != inner.params:
            raise CkksError("give params only without an inner backend (the inner backend has its own)")
        else:
            self.measured = True
        self.inner = inner
        self.trace_name = trace_name
        self._phase = phase
        self._ops: list[JsonDict] = []
        self._names: dict[int, Ref] = {}
        self._pinned: list[Ciphertext | Plaintext] = []  # objects that cannot be weak-referenced
        self._inputs: dict[str, int] = {}
        self._n_inputs = 0
        self._n_plain = 0
        #: interface calls as the program made them (a rotate_many of k steps is k rotations),
        #: beside :attr:`ops`, which are the ops as the library runs them (one per key switch)
        self.calls: dict[str, int] = {}

    def __getattr__(self, attr: str) -> Any:
        # what only the inner backend has (decode, fingerprint, add_rotation_keys, ...)
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    # -- what the inner backend says about itself ----------------------------------------------
    @property
    def name(self) -> str:  # type: ignore[override]
        return self.inner.name

    @property
    def params(self) -> CkksParams:  # type: ignore[override]
        return self.inner.params

    @property
    def hoists_rotations(self) -> bool:  # type: ignore[override]
        return self.inner.hoists_rotations

    @property
    def slot_generator(self) -> int:  # type: ignore[override]
        return self.inner.slot_generator

    @property
    def can_decrypt(self) -> bool:
        return self.inner.can_decrypt

    def rotation_plan(self, steps: int) -> list[str]:
        return self.inner.rotation_plan(steps)

    def synchronize(self) -> None:
        """Wait for the inner backend's device (the interface's default would wait for nothing)."""
        self.inner.synchronize()

    # -- phases and names ----------------------------------------------------------------------
    def set_phase(self, name: str | None) -> None:
        """Label the following ops (a layer name such as ``conv1``)."""
        self._phase = name

    @property
    def phase(self) -> str | None:
        return self._phase

    def _bind(self, obj: Ciphertext | Plaintext, name: Ref) -> None:
        key = id(obj)
        self._names[key] = name
        try:
            weakref.finalize(obj, self._names.pop, key, None)
        except TypeError:
            self._pinned.append(obj)

    def label(self, obj: Handle, name: str) -> Handle:
        """Name a value: the op that made it gets ``"name"`` in its record (a weight, the
        client's image); a ciphertext not made here becomes the program input ``name``."""
        if not isinstance(name, str) or not name or name.isdigit():
            raise CkksError(f"a label must be a non-numeric string, got {name!r}")
        ref = self._names.get(id(obj))
        if isinstance(ref, int):
            self._ops[ref]["name"] = name
        elif ref is None and isinstance(obj, Ciphertext):
            self._bind(obj, name)
            self._inputs[name] = self.inner.ciphertext_bytes(obj)
        elif ref is None:
            self._bind(obj, name)
        elif ref != name:
            raise CkksError(f"label: the value is already the program input {ref!r}")
        return obj

    def _ref(self, ct: Ciphertext) -> Ref:
        name = self._names.get(id(ct))
        if name is None:
            name = f"input:{self._n_inputs}"
            self._n_inputs += 1
            self.label(ct, name)
        return name

    def _pt_ref(self, pt: Plaintext) -> Ref:
        name = self._names.get(id(pt))
        if name is None:
            name = f"pt:{self._n_plain}"
            self._n_plain += 1
            self._bind(pt, name)
        return name

    # -- recording -----------------------------------------------------------------------------
    def _record(self, op: str, level: int, inputs: list[Ref], bytes_in: int, bytes_out: int, wall: float | None,
                keys: Sequence[str] = (), **extra: JsonValue) -> int:
        i = len(self._ops)
        rec: JsonDict = {"id": i, "op": op, "level": int(level), "inputs": inputs, "output": i,
                               "bytes_in": int(bytes_in), "bytes_out": int(bytes_out), "keys": list(keys)}
        rec.update(extra)
        rec["wall_s"] = wall
        rec["phase"] = self._phase or ""
        self._ops.append(rec)
        return i

    def _timed(self, call: str, fn: Callable[..., _R], *args: object, count: int = 1,
               **kw: object) -> tuple[_R, float | None]:
        """Run ``fn`` and its wall time on the inner backend's device (:func:`.timing.timed`:
        the earlier ops' device work is not counted, this op's is), None when simulated."""
        self.calls[call] = self.calls.get(call, 0) + count
        with timed(self.inner) as t:
            out = fn(*args, **kw)
        return out, (t.seconds if self.measured else None)

    @staticmethod
    def _share(wall: float | None, part: float) -> float | None:
        return None if wall is None else wall * part

    def _ctb(self, ct: Ciphertext) -> int:
        return self.inner.ciphertext_bytes(ct)

    def _unary(self, op: str, ct: Ciphertext, *args: object, keys: Sequence[str] = (),
               extra: Mapping[str, JsonValue] | None = None, **kw: float | None) -> Ciphertext:
        lv = self.inner.level(ct)
        ref = self._ref(ct)
        fn = getattr(self.inner, op)
        out, wall = self._timed(op, lambda: fn(ct, *args, **kw))
        self._bind(out, self._record(op, lv, [ref], self._ctb(ct), self._ctb(out), wall, keys, **(extra or {})))
        return out

    def _binary(self, op: str, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        lv = self.inner.level(a)
        refs = [self._ref(a), self._ref(b)]
        out, wall = self._timed(op, getattr(self.inner, op), a, b)
        self._bind(out, self._record(op, lv, refs, self._ctb(a) + self._ctb(b), self._ctb(out), wall))
        return out

    def _plain_op(self, op: str, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        lv = self.inner.level(ct)
        ref, pref = self._ref(ct), self._pt_ref(pt)
        out, wall = self._timed(op, getattr(self.inner, op), ct, pt)
        self._bind(out, self._record(op, lv, [ref], self._ctb(ct), self._ctb(out), wall, (), plaintext=pref,
                                     plaintext_bytes=self.inner.plaintext_bytes(pt)))
        return out

    def bootstrap_keygen(self, plan: BootstrapPlan) -> None:
        """The inner backend's bootstrap keys; ``bootstrap`` then runs the driver on this backend,
        so every op of the bootstrap is recorded (a shape-only emulator traces it without keys)."""
        keygen = getattr(self.inner, "bootstrap_keygen", None)
        if keygen is None:
            raise CkksError(f"bootstrap_setup: the {self.inner.name} backend cannot bootstrap (gpu, gpu-twin can; "
                            "a shape-only emulator traces one)")
        keygen(plan)

    # -- keys, encoding, encryption --------------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True, **kw: Any) -> None:
        """The inner backend's keygen (its own options, such as ``conjugation``, passed on)."""
        self.inner.keygen(rotations, relin, **kw)

    def encode(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        """Encode (recorded as a host-side ``encode`` op: the output is a stored weight)."""
        pt, wall = self._timed("encode", self.inner.encode, values, like=like, level=level, scale=scale)
        # bytes_in of a host-side encode/encrypt: the float64 slot vector it reads
        self._bind(pt, self._record("encode", self.inner.level(pt), [], self.slots * WORD_BYTES,
                                    self.inner.plaintext_bytes(pt), wall))
        return pt

    def encode_complex(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
                       scale: float | None = None) -> Plaintext:
        """A complex encoding: recorded as an ``encode`` op (its slots are twice a real vector's)."""
        pt, wall = self._timed("encode", self.inner.encode_complex, values, like=like, level=level, scale=scale)
        self._bind(pt, self._record("encode", self.inner.level(pt), [], 2 * self.slots * WORD_BYTES,
                                    self.inner.plaintext_bytes(pt), wall))
        return pt

    def encrypt_complex(self, values: ArrayLike, *, level: int | None = None,
                        scale: float | None = None) -> Ciphertext:
        ct, wall = self._timed("encrypt", self.inner.encrypt_complex, values, level=level, scale=scale)
        self._bind(ct, self._record("encrypt", self.inner.level(ct), [], 2 * self.slots * WORD_BYTES, self._ctb(ct),
                                    wall))
        return ct

    def decrypt_complex(self, ct: Ciphertext) -> np.ndarray:
        lv = self.inner.level(ct)
        ref = self._ref(ct)
        out, wall = self._timed("decrypt", self.inner.decrypt_complex, ct)
        self._record("decrypt", lv, [ref], self._ctb(ct), max(1, out.nbytes), wall)
        return out

    def encrypt(self, values: ArrayLike, **kw: Any) -> Ciphertext:
        """Encrypt (a host-side ``encrypt`` op, whose output is a program input in DRAM)."""
        ct, wall = self._timed("encrypt", self.inner.encrypt, values, **kw)
        self._bind(ct, self._record("encrypt", self.inner.level(ct), [], self.slots * WORD_BYTES, self._ctb(ct),
                                    wall))
        return ct

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        lv = self.inner.level(ct)
        ref = self._ref(ct)
        out, wall = self._timed("decrypt", self.inner.decrypt, ct)
        self._record("decrypt", lv, [ref], self._ctb(ct), max(1, out.nbytes), wall)
        return out

    # -- arithmetic ------------------------------------------------------------------------------
    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("add", a, b)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("sub", a, b)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("mul", a, b)

    def negate(self, a: Ciphertext) -> Ciphertext:
        return self._unary("negate", a)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("add_plain", ct, pt)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("sub_plain", ct, pt)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("mul_plain", ct, pt)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        return self._unary("relinearize", ct, keys=("relin",))

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        return self._unary("rescale", ct)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        be = self.inner
        cur = be.level(ct_or_pt)
        if isinstance(ct_or_pt, Plaintext):
            ref = self._pt_ref(ct_or_pt)
            out, wall = self._timed("mod_switch_to", be.mod_switch_to, ct_or_pt, level)
            # a plaintext at another level is another stored weight: a host-side encode
            source: dict[str, JsonValue] = {"from": ref}   # "from" is a keyword: passed as a dict
            if not isinstance(out, Plaintext):
                raise AssertionError(f"mod_switch_to of a plaintext gave a {type(out).__name__}")
            self._bind(out, self._record("encode", be.level(out), [], be.plaintext_bytes(ct_or_pt),
                                         be.plaintext_bytes(out), wall, (), **source))
            return out
        ref = self._ref(ct_or_pt)
        out, wall = self._timed("mod_switch_to", be.mod_switch_to, ct_or_pt, level)
        if level == cur:
            self._bind(out, ref)
            return out
        per_limb = self._ctb(ct_or_pt) // (cur + 1)  # sizes are linear in the limbs
        n = cur - int(level)
        for lv in range(cur, int(level), -1):
            ref = self._record("mod_switch", lv, [ref], per_limb * (lv + 1), per_limb * lv, self._share(wall, 1 / n))
        self._bind(out, ref)
        return out

    def mul_const(self, ct: Ciphertext, value: complex, *, scale: float | None = None) -> Ciphertext:
        """A ``mul_const`` op (no plaintext is read: the constant is a few words), with the scale
        the constant was encoded at (``constant_scale``)."""
        sc = self.params.scale if scale is None else scale
        return self._unary("mul_const", ct, value, scale=scale, extra={"constant_scale": float(sc)})

    def add_const(self, ct: Ciphertext, value: complex) -> Ciphertext:
        return self._unary("add_const", ct, value)

    def conjugate(self, ct: Ciphertext) -> Ciphertext:
        """A key switch with the conjugation key (``conj``)."""
        return self._unary("conjugate", ct, keys=("conj",))

    def mod_raise(self, ct: Ciphertext, level: int | None = None) -> Ciphertext:
        """A ``mod_raise`` op at level 0 (its output at the raised level), with the keys the inner
        backend's raise uses (the sparse-secret encapsulation's, where it has them)."""
        return self._unary("mod_raise", ct, level, keys=tuple(self.inner.mod_raise_keys()))

    def mod_raise_keys(self) -> list[str]:
        return self.inner.mod_raise_keys()

    def _rotation_records(self, ct: Ciphertext, steps: int, wall: float | None, ref: Ref,
                          **extra: JsonValue) -> Ref:
        plan = self.inner.rotation_plan(steps)
        lv = self.inner.level(ct)
        nb = self._ctb(ct)
        for key in plan:
            ref = self._record("rotate", lv, [ref], nb, nb, self._share(wall, 1 / len(plan)), (key,), step=int(steps),
                               **extra)
        return ref

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        ref = self._ref(ct)
        out, wall = self._timed("rotate", self.inner.rotate, ct, steps)
        self._bind(out, self._rotation_records(ct, steps, wall, ref))
        return out

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Recorded per step (wall time split evenly over the key switches); ``hoisted`` marks
        a backend that shares the decomposition across steps."""
        steps = list(steps)
        ref = self._ref(ct)
        outs, wall = self._timed("rotate", self.inner.rotate_many, ct, steps, count=len(steps))
        switches = sum(len(self.inner.rotation_plan(s)) for s in steps) or 1
        extra = {"hoisted": True} if self.inner.hoists_rotations else {}
        for s, out in zip(steps, outs):
            share = self._share(wall, len(self.inner.rotation_plan(s)) / switches)
            self._bind(out, self._rotation_records(ct, s, share, ref, **extra))
        return outs

    # -- not ops: passed through -----------------------------------------------------------------
    def level(self, ct: Ciphertext | Plaintext) -> int:
        return self.inner.level(ct)

    def scale(self, ct: Ciphertext | Plaintext) -> float:
        return self.inner.scale(ct)

    def size(self, ct: Ciphertext) -> int:
        return self.inner.size(ct)

    def ciphertext_bytes(self, ct: Ciphertext) -> int:
        return self.inner.ciphertext_bytes(ct)

    def plaintext_bytes(self, pt: Plaintext) -> int:
        return self.inner.plaintext_bytes(pt)

    def key_bytes(self) -> dict[str, int]:
        return self.inner.key_bytes()

    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        return self.inner.serialize_ciphertext(ct)

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        """Deserialise; the ciphertext is a program input (``input:<k>`` unless labelled)."""
        return self.inner.deserialize_ciphertext(data)

    def public_context(self) -> bytes:
        return self.inner.public_context()

    def secret_context(self) -> bytes:
        return self.inner.secret_context()

    @classmethod
    def from_public_context(cls, data: bytes, **kw: object) -> "RecordingBackend":
        """Recording a server-side backend rebuilt from a public context."""
        from cryptoffload.crypto.ckks.registry import backend_from_context  # noqa: PLC0415 -- the registry is above

        return cls(backend_from_context(data, **kw))

    @classmethod
    def from_secret_context(cls, data: bytes, **kw: object) -> "RecordingBackend":
        from cryptoffload.crypto.ckks.registry import backend_from_context  # noqa: PLC0415

        return cls(backend_from_context(data, **kw))

    # -- output ----------------------------------------------------------------------------
    @property
    def ops(self) -> list[JsonDict]:
        return self._ops

    def trace(self) -> JsonDict:
        """The JSON trace (schema ``cryptoffload-he-trace/1``)."""
        be = self.inner
        return {
            "schema": TRACE_SCHEMA,
            "name": self.trace_name,
            "backend": be.name,
            "params": be.params.to_dict(),
            "key_bytes": dict(be.key_bytes()),
            "input_bytes": dict(self._inputs),
            "ops": [dict(op) for op in self._ops],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        return atomic_write(path, json.dumps(self.trace()))  # compact: a trace has thousands of ops

    def summary(self) -> JsonDict:
        """Op counts and summed wall time per op (host-side ops included; no times when
        simulated), and the interface calls."""
        counts: dict[str, int] = {}
        walls: dict[str, float] = {}
        for op in self._ops:
            name, wall = str(op["op"]), op["wall_s"]
            counts[name] = counts.get(name, 0) + 1
            if isinstance(wall, (int, float)):
                walls[name] = walls.get(name, 0.0) + wall
        return {"ops": len(self._ops), "counts": counts, "wall_s": walls, "calls": dict(self.calls)}
