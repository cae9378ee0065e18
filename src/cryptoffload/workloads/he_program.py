"""HE programs: an encrypted inference as a list of CKKS ops with the bytes each one touches.

Why a program and not just totals: Suzuki and Yamana (in-storage computing for HE) ask where an
FPGA should get its data from when weights and keys do not fit in its DRAM, and the answer
depends on *when* each byte is needed relative to the computation (HE is data-oblivious, so the
order of every read is known before the run and transfers can be prefetched). So a program is
the op sequence, in program order, with for every op its level, the ciphertexts it reads and
writes, the stored plaintext (a weight) and the evaluation keys it needs, and their sizes.

Sizes follow the RNS representation (SEAL/EVA, CKKS): at level ``l`` a value has ``l + 1``
RNS limbs, each limb is ``N`` coefficient words of 8 bytes, so a ciphertext of ``p``
polynomials (2, or 3 after a ciphertext-ciphertext multiply) is ``p * N * (l + 1) * 8``
bytes and a plaintext ``N * (l + 1) * 8``. A key-switching key (relinearisation or one
Galois key per rotation step) is, as in SEAL, one RLWE pair over all primes (data and special)
per data prime: ``L * 2 * (L + 1) * N * 8`` bytes for ``L`` data primes.

Three sources:

(a) :func:`load_trace` -- a JSON trace recorded from a real encrypted inference (schema
    ``cryptoffload-he-trace/1``, documented in ``docs/studies/isc-he-cnn.md``);
(b) :func:`generate_cnn` -- the paper's CNN shape (MNIST, conv + square + FC + square + FC)
    with per-channel packing, sizes computed from the ring parameters;
(c) ``he_cnn_fitted.paper_calibrated_program`` -- a program built from ``profiles/he_cnn_paper.toml``
    that reproduces the paper's inputs (weights 3.3 GB, keys 0.5 GB, about 17 GB touched,
    1.05 s of FPGA compute) when the real trace differs from the paper's EVA program.

Placement conventions (the paper's): a program input (the client's encrypted image) is in
device DRAM when the run starts; weights (plaintexts) and keys start in storage (NAND, SSD or
host memory) and are fetched; intermediate ciphertexts are produced in device DRAM; an item
is *dead* after its last reader and may be evicted. ``encode``/``encrypt``/``decrypt`` are
host-side (weight encoding is pre-computable, the client encrypts and decrypts): they are
accepted in a trace but not executed on the device; an ``encode`` output is a stored weight.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.crypto.ckks.trace import TRACE_SCHEMA
from cryptoffload.errors import ConfigError
from cryptoffload.io import atomic_write
from cryptoffload.papers import PAPERS

SCHEMA = TRACE_SCHEMA

DEVICE_OPS = ("add", "sub", "negate", "add_plain", "sub_plain", "mul", "mul_plain", "rescale",
              "mod_switch", "relinearize", "rotate")
HOST_OPS = ("encode", "encrypt", "decrypt")
OPS = DEVICE_OPS + HOST_OPS
PLAIN_OPS = ("add_plain", "sub_plain", "mul_plain")
KEYED_OPS = ("relinearize", "rotate")

# Item kinds: where a byte lives when the run starts.
INPUT, PLAINTEXT, KEY, CIPHERTEXT = "input", "plaintext", "key", "ciphertext"
FETCHED_KINDS = (PLAINTEXT, KEY)

OpTime = Callable[["HEOp", CkksParams], float]


# --------------------------------------------------------------------------------------------
# ops, items, programs


@dataclass(frozen=True, slots=True)
class HEOp:
    """One op. ``level`` is the level of the op's ciphertext input(s) (limbs = level + 1)."""

    index: int
    id: str
    op: str
    level: int
    inputs: tuple[str, ...]
    output: str
    bytes_in: int
    bytes_out: int
    keys: tuple[str, ...] = ()
    plaintext: str | None = None
    plaintext_bytes: int = 0
    wall_s: float | None = None
    phase: str = ""

    @property
    def on_device(self) -> bool:
        return self.op in DEVICE_OPS


@dataclass(slots=True)
class DataItem:
    """A ciphertext, plaintext or key: its size, where it starts, and its first and last reader
    (indices into the program's ops; a program output has ``last_use = None``: never evicted)."""

    name: str
    nbytes: int
    kind: str
    producer: int | None = None
    first_use: int | None = None
    last_use: int | None = None
    output: bool = False

    @property
    def fetched(self) -> bool:
        return self.kind in FETCHED_KINDS


@dataclass
class HEProgram:
    """Ops in program order plus the data items they touch (built by :meth:`analyse`)."""

    name: str
    source: str  # "trace", "generated" or "paper-calibrated"
    params: CkksParams
    ops: list[HEOp]
    key_bytes: dict[str, int] = field(default_factory=dict)
    input_bytes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    items: dict[str, DataItem] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.ops:
            raise ConfigError(f"program {self.name!r} has no ops")
        self.analyse()

    # -- analysis ------------------------------------------------------------------------------
    def analyse(self) -> None:
        """Resolve every operand to an item and record first and last device readers."""
        items: dict[str, DataItem] = {}

        def use(name: str, i: int) -> None:
            it = items[name]
            if it.first_use is None:
                it.first_use = i
            it.last_use = i

        for op in self.ops:
            i = op.index
            if op.op == "encode":
                items[op.output] = DataItem(op.output, op.bytes_out, PLAINTEXT)
                continue
            if op.op == "encrypt":
                items[op.output] = DataItem(op.output, op.bytes_out, INPUT)
                continue
            if op.op == "decrypt":
                for name in op.inputs:
                    if name in items:
                        items[name].output = True
                continue
            unknown = [n for n in op.inputs if n not in items]
            known = sum(items[n].nbytes for n in op.inputs if n in items)
            for n in unknown:  # a program input: in device DRAM at the start
                size = self.input_bytes.get(n)
                if size is None:
                    size = max(1, (op.bytes_in - known) // len(unknown))
                items[n] = DataItem(n, int(size), INPUT)
            for n in op.inputs:
                use(n, i)
            if op.plaintext is not None:
                if op.plaintext not in items:
                    items[op.plaintext] = DataItem(op.plaintext, op.plaintext_bytes, PLAINTEXT)
                elif items[op.plaintext].kind not in (PLAINTEXT, INPUT, CIPHERTEXT):
                    raise ConfigError(f"op #{i} ({op.op}): plaintext {op.plaintext!r} names a key")
                use(op.plaintext, i)
            for k in op.keys:
                if k not in items:
                    items[k] = DataItem(k, int(self.key_bytes.get(k, self.params.ksk_bytes)), KEY)
                elif items[k].kind != KEY:
                    raise ConfigError(f"op #{i} ({op.op}): key {k!r} is also the name of a ciphertext or plaintext")
                use(k, i)
            if op.output in items:
                raise ConfigError(f"op #{i} ({op.op}): output {op.output!r} is written twice; "
                                  "a trace must be in SSA form (one writer per value)")
            items[op.output] = DataItem(op.output, op.bytes_out, CIPHERTEXT, producer=i)
        for it in items.values():
            if it.kind == CIPHERTEXT and it.last_use is None:
                it.output = True  # never read on the device: the result, kept in DRAM
            if it.output:
                it.last_use = None
        self.items = items

    @property
    def device_ops(self) -> list[HEOp]:
        return [op for op in self.ops if op.on_device]

    def op_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for op in self.ops:
            out[op.op] = out.get(op.op, 0) + 1
        return out

    def bytes_of(self, kind: str, used_only: bool = True) -> int:
        return sum(it.nbytes for it in self.items.values()
                   if it.kind == kind and (not used_only or it.first_use is not None or kind == CIPHERTEXT))

    @property
    def weight_bytes(self) -> int:
        return self.bytes_of(PLAINTEXT)

    @property
    def key_total_bytes(self) -> int:
        return self.bytes_of(KEY)

    @property
    def fetched_bytes(self) -> int:
        return self.weight_bytes + self.key_total_bytes

    @property
    def touched_bytes(self) -> int:
        """Every byte the run holds at some time: inputs, weights, keys and every produced value."""
        return sum(it.nbytes for it in self.items.values()
                   if it.kind == CIPHERTEXT or it.first_use is not None)

    def compute_s(self, op_time: OpTime) -> float:
        return math.fsum(op_time(op, self.params) for op in self.ops if op.on_device)

    def measured_wall_s(self) -> float | None:
        """Sum of the recorded wall times when every device op has one (a measured CPU run)."""
        walls = [op.wall_s for op in self.ops if op.on_device]
        if not walls or any(w is None for w in walls):
            return None
        return math.fsum(walls)  # type: ignore[arg-type]

    def working_set(self, op: HEOp) -> int:
        """Bytes one op needs in DRAM at once: its operands, plaintext, keys and output."""
        names = set(op.inputs) | set(op.keys) | ({op.plaintext} if op.plaintext else set())
        return sum(self.items[n].nbytes for n in names) + op.bytes_out

    def largest_working_set(self) -> tuple[HEOp, int]:
        return max(((op, self.working_set(op)) for op in self.device_ops), key=lambda t: t[1])

    def live_profile(self) -> list[int]:
        """DRAM bytes live during each device op when nothing is prefetched early: the least
        DRAM that can run the program without spilling (evicting dead data at once)."""
        initial = sum(it.nbytes for it in self.items.values() if it.kind == INPUT and it.first_use is not None)
        frees: dict[int, int] = {}
        for it in self.items.values():
            if it.last_use is not None and (it.first_use is not None or it.producer is not None):
                frees[it.last_use] = frees.get(it.last_use, 0) + it.nbytes
        live = initial
        out = []
        for op in self.device_ops:
            i = op.index
            alloc = sum(self.items[n].nbytes for n in _fetched_first(self, op)) + op.bytes_out
            live += alloc
            out.append(live)
            live -= frees.get(i, 0)
        return out

    def summary(self, op_time: OpTime | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "source": self.source, "params": self.params.to_dict(),
            "ops": len(self.ops), "device_ops": len(self.device_ops), "op_counts": self.op_counts(),
            "weight_bytes": self.weight_bytes, "key_bytes": self.key_total_bytes,
            "keys": sum(1 for it in self.items.values() if it.kind == KEY and it.first_use is not None),
            "input_bytes": self.bytes_of(INPUT), "touched_bytes": self.touched_bytes,
            "min_dram_bytes": max(self.live_profile()),
        }
        if op_time is not None:
            out["compute_s"] = self.compute_s(op_time)
        wall = self.measured_wall_s()
        if wall is not None:
            out["measured_wall_s"] = wall
        return out

    # -- export ---------------------------------------------------------------------------------
    def to_trace(self) -> dict[str, Any]:
        ops = []
        for op in self.ops:
            d: dict[str, Any] = {"id": op.id, "op": op.op, "level": op.level, "inputs": list(op.inputs),
                                 "output": op.output, "bytes_in": op.bytes_in, "bytes_out": op.bytes_out}
            if op.keys:
                d["keys"] = list(op.keys)
            if op.plaintext is not None:
                d["plaintext"] = op.plaintext
                d["plaintext_bytes"] = op.plaintext_bytes
            if op.wall_s is not None:
                d["wall_s"] = op.wall_s
            if op.phase:
                d["phase"] = op.phase
            ops.append(d)
        out: dict[str, Any] = {"schema": SCHEMA, "name": self.name, "params": self.params.to_dict(), "ops": ops}
        if self.key_bytes:
            out["key_bytes"] = dict(self.key_bytes)
        if self.input_bytes:
            out["input_bytes"] = dict(self.input_bytes)
        return out

    def save_trace(self, path: str | os.PathLike[str]) -> Path:
        return atomic_write(path, json.dumps(self.to_trace()))


def _fetched_first(program: HEProgram, op: HEOp) -> list[str]:
    """Names of the stored items (weights, keys) whose first reader is ``op``."""
    names = list(op.keys) + ([op.plaintext] if op.plaintext else [])
    return [n for n in names if program.items[n].fetched and program.items[n].first_use == op.index]


def fetched_first(program: HEProgram, op: HEOp) -> list[str]:
    return _fetched_first(program, op)


# --------------------------------------------------------------------------------------------
# (a) traces


def _where(src: str, i: int, raw: dict[str, Any]) -> str:
    ident = raw.get("id") if isinstance(raw, dict) else None
    return f"{src}: op #{i}" + (f" (id {ident!r})" if ident is not None else "")


def _int_field(src: str, i: int, raw: dict[str, Any], key: str, *, required: bool, minimum: int = 0) -> int | None:
    if key not in raw or raw[key] is None:
        if required:
            op = raw.get("op", "?")
            raise ConfigError(f"{_where(src, i, raw)}: {op} is missing its size field '{key}'")
        return None
    v = raw[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v) or v < minimum:
        raise ConfigError(f"{_where(src, i, raw)}: field '{key}' must be an integer >= {minimum}, got {v!r}")
    return int(v)


def params_from_dict(raw: Any, src: str) -> CkksParams:
    """The trace's ``params`` (``scale_bits`` defaults to 30, EVA's, when a trace omits it)."""
    try:
        return CkksParams.from_dict({"scale_bits": 30, **raw} if isinstance(raw, dict) else raw)
    except (CkksError, ConfigError) as exc:
        raise ConfigError(f"{src}: {exc}") from None


def program_from_trace(data: Any, src: str = "trace") -> HEProgram:
    """Validate a decoded trace and build its program. Every refusal names the op index."""
    if not isinstance(data, dict):
        raise ConfigError(f"{src}: a trace is a JSON object with 'schema', 'params' and 'ops'")
    if data.get("schema") != SCHEMA:
        raise ConfigError(f"{src}: schema must be {SCHEMA!r}, got {data.get('schema')!r}")
    params = params_from_dict(data.get("params"), src)
    raw_ops = data.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise ConfigError(f"{src}: 'ops' must be a non-empty list")
    key_bytes = _size_map(data.get("key_bytes"), src, "key_bytes")
    input_bytes = _size_map(data.get("input_bytes"), src, "input_bytes")
    ops: list[HEOp] = []
    ids: set[str] = set()
    later_outputs = {str(r.get("output", r.get("id"))) for r in raw_ops if isinstance(r, dict)}
    produced: set[str] = set()
    encoded: dict[str, int] = {}
    for i, raw in enumerate(raw_ops):
        if not isinstance(raw, dict):
            raise ConfigError(f"{src}: op #{i} must be an object, got {type(raw).__name__}")
        name = raw.get("op")
        if name not in OPS:
            raise ConfigError(f"{_where(src, i, raw)}: unknown op {name!r} (known: {', '.join(OPS)})")
        ident = str(raw.get("id", i))
        if ident in ids:
            raise ConfigError(f"{_where(src, i, raw)}: id {ident!r} is used twice")
        ids.add(ident)
        output = str(raw.get("output", ident))
        level = _int_field(src, i, raw, "level", required=name in DEVICE_OPS or name == "encrypt")
        level = params.levels if level is None else level
        if not 0 <= level <= params.levels:
            raise ConfigError(f"{_where(src, i, raw)}: level {level} is outside 0..{params.levels} "
                              f"(the trace's params have {params.data_primes} data primes)")
        inputs_raw = raw.get("inputs", [])
        if not isinstance(inputs_raw, list):
            raise ConfigError(f"{_where(src, i, raw)}: 'inputs' must be a list of ids or names")
        inputs = tuple(str(x) for x in inputs_raw)
        for x in inputs:
            if x not in produced and x in later_outputs and x not in encoded:
                raise ConfigError(f"{_where(src, i, raw)}: input {x!r} is produced by a later op "
                                  "(ops must be listed in program order)")
        bytes_out = _int_field(src, i, raw, "bytes_out", required=name != "decrypt", minimum=1) or 0
        bytes_in = _int_field(src, i, raw, "bytes_in", required=name in DEVICE_OPS and bool(inputs), minimum=1) or 0
        plaintext = raw.get("plaintext")
        pt_bytes = _int_field(src, i, raw, "plaintext_bytes", required=False, minimum=1) or 0
        if name in PLAIN_OPS:
            ct_inputs = [x for x in inputs if x not in encoded]
            pt_inputs = [x for x in inputs if x in encoded]
            if plaintext is None and pt_inputs:
                plaintext = pt_inputs[0]
            inputs = tuple(ct_inputs)
            if plaintext is None:
                plaintext = f"pt:{ident}"
            plaintext = str(plaintext)
            if plaintext in encoded:
                pt_bytes = pt_bytes or encoded[plaintext]
            elif not pt_bytes:
                raise ConfigError(f"{_where(src, i, raw)}: {name} is missing its size field 'plaintext_bytes' "
                                  "(and its plaintext is not the output of an encode op)")
        elif plaintext is not None:
            raise ConfigError(f"{_where(src, i, raw)}: only {', '.join(PLAIN_OPS)} read a plaintext")
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
            keys = (f"galois:{int(step)}",)
        for k in keys:
            if k != "relin" and not k.startswith("galois:"):
                raise ConfigError(f"{_where(src, i, raw)}: key {k!r} must be 'relin' or 'galois:<step>'")
        if name not in KEYED_OPS and keys:
            raise ConfigError(f"{_where(src, i, raw)}: {name} uses no evaluation key")
        wall = raw.get("wall_s")
        if wall is not None and (isinstance(wall, bool) or not isinstance(wall, (int, float))
                                 or not math.isfinite(wall) or wall < 0):
            raise ConfigError(f"{_where(src, i, raw)}: wall_s must be a non-negative number of seconds")
        if name == "encode":
            encoded[output] = bytes_out
        ops.append(HEOp(i, ident, name, level, inputs, output, bytes_in, bytes_out, keys, plaintext, pt_bytes,
                        None if wall is None else float(wall), str(raw.get("phase", ""))))
        produced.add(output)
    if not any(op.on_device for op in ops):
        raise ConfigError(f"{src}: the trace has no op that runs on the device")
    return HEProgram(str(data.get("name", Path(src).stem)), "trace", params, ops, key_bytes, input_bytes)


def _size_map(raw: Any, src: str, what: str) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{src}: '{what}' must map names to sizes in bytes")
    out = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 1:
            raise ConfigError(f"{src}: {what}[{k!r}] must be a positive size in bytes, got {v!r}")
        out[str(k)] = int(v)
    return out


def load_trace(path: str | os.PathLike[str]) -> HEProgram:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: trace file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the trace ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{p}: JSON nested too deeply to be a trace") from None
    return program_from_trace(data, str(p))


# --------------------------------------------------------------------------------------------
# a small builder shared by (b) and (c)


class ProgramBuilder:
    """Appends ops with sizes computed from the parameters, tracking each value's level."""

    def __init__(self, params: CkksParams) -> None:
        self.p = params
        self.ops: list[HEOp] = []
        self.level: dict[str, int] = {}
        self.polys: dict[str, int] = {}
        self.phase = ""
        self._n = 0

    def input(self, name: str, level: int | None = None) -> str:
        self.level[name] = self.p.levels if level is None else level
        self.polys[name] = 2
        return name

    def _emit(self, op: str, inputs: Iterable[str], *, level: int, out_level: int, out_polys: int = 2,
              keys: tuple[str, ...] = (), plaintext: str | None = None, pt_bytes: int = 0) -> str:
        inputs = tuple(inputs)
        out = f"v{self._n}"
        bytes_in = sum(self.p.ciphertext_bytes(self.level[x], self.polys[x]) for x in inputs)
        self.ops.append(HEOp(len(self.ops), str(self._n), op, level, inputs, out, bytes_in,
                             self.p.ciphertext_bytes(out_level, out_polys), keys, plaintext, pt_bytes, None, self.phase))
        self._n += 1
        self.level[out] = out_level
        self.polys[out] = out_polys
        return out

    def add(self, a: str, b: str) -> str:
        lv = self.level[a]
        if self.level[b] != lv:
            b = self.mod_switch_to(b, lv)
        return self._emit("add", (a, b), level=lv, out_level=lv, out_polys=max(self.polys[a], self.polys[b]))

    def add_plain(self, a: str, pt: str) -> str:
        lv = self.level[a]
        return self._emit("add_plain", (a,), level=lv, out_level=lv, out_polys=self.polys[a],
                          plaintext=pt, pt_bytes=self.p.plaintext_bytes(lv))

    def mul_plain(self, a: str, pt: str) -> str:
        lv = self.level[a]
        return self._emit("mul_plain", (a,), level=lv, out_level=lv, out_polys=self.polys[a],
                          plaintext=pt, pt_bytes=self.p.plaintext_bytes(lv))

    def mul(self, a: str, b: str) -> str:
        lv = self.level[a]
        return self._emit("mul", (a, b), level=lv, out_level=lv, out_polys=3)

    def relinearize(self, a: str) -> str:
        lv = self.level[a]
        return self._emit("relinearize", (a,), level=lv, out_level=lv, keys=("relin",))

    def rotate(self, a: str, step: int) -> str:
        lv = self.level[a]
        return self._emit("rotate", (a,), level=lv, out_level=lv, keys=(f"galois:{step}",))

    def rescale(self, a: str) -> str:
        lv = self.level[a]
        if lv == 0:
            raise ConfigError("the program needs more levels than the parameters provide")
        return self._emit("rescale", (a,), level=lv, out_level=lv - 1, out_polys=self.polys[a])

    def mod_switch_to(self, a: str, level: int) -> str:
        while self.level[a] > level:
            lv = self.level[a]
            a = self._emit("mod_switch", (a,), level=lv, out_level=lv - 1, out_polys=self.polys[a])
        return a


# --------------------------------------------------------------------------------------------
# (b) the paper's CNN shape, per-channel packing

DEFAULT_CNN_PARAMS = CkksParams(16384, (50, 48, 48, 48, 48, 48, 48, 48, 52), 30)


def generate_cnn(params: CkksParams | None = None, *, channels: int = 5, kernel: int = 5, stride: int = 2,
                 image: int = 28, hidden: int = 100, classes: int = 10) -> HEProgram:
    """MNIST CNN as Suzuki and Yamana's (conv -> x^2 -> FC -> x^2 -> FC), one ciphertext per channel.

    Per-channel packing (Suzuki and Yamana, section 4.2): the image is one ciphertext; the conv layer
    rotates it once per kernel offset (shared by all channels) and, per output channel, sums
    the rotated copies times a weight plaintext (the weight broadcast over the strided output
    positions) -- so each channel lives in its own ciphertext. FC1 multiplies every channel by
    a weight plaintext per hidden neuron, sums over channels, then over slots with
    ``ceil(log2(image**2))`` power-of-two rotations, and packs the neuron into slot ``j`` with a
    one-hot mask; FC2 does the same over the packed hidden vector. The seed does not give the
    layer sizes; the defaults are the CryptoNets/Ishiyama-style MNIST net (5 channels of 5x5,
    stride 2, 100 hidden, 10 classes). Seven levels are used, one per multiplicative step.
    """
    p = params or DEFAULT_CNN_PARAMS
    for what, v in (("channels", channels), ("kernel", kernel), ("stride", stride), ("image", image),
                    ("hidden", hidden), ("classes", classes)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{what} must be a positive integer, got {v!r}")
    if image * image > p.slots or hidden > p.slots:
        raise ConfigError(f"a {image}x{image} image or {hidden} neurons do not fit in {p.slots} slots")
    if p.levels < 7:
        raise ConfigError(f"the CNN needs 7 levels; the parameters give {p.levels}")
    b = ProgramBuilder(p)
    x = b.input("image")
    # conv: rotations of the input shared by all channels
    b.phase = "conv1"
    offsets = [dy * image + dx for dy in range(kernel) for dx in range(kernel)]
    shifted = {0: x}
    for o in offsets[1:]:
        shifted[o] = b.rotate(x, o)
    conv = []
    for c in range(channels):
        acc = None
        for k, o in enumerate(offsets):
            t = b.mul_plain(shifted[o], f"w_conv[{c},{k}]")
            acc = t if acc is None else b.add(acc, t)
        acc = b.rescale(acc)
        acc = b.add_plain(acc, f"b_conv[{c}]")
        conv.append(acc)
    b.phase = "act1"
    act = [b.rescale(b.relinearize(b.mul(a, a))) for a in conv]
    # FC1: per neuron, sum over channels then over slots; pack neuron j into slot j
    b.phase = "fc1"
    span = image * image
    steps = [1 << s for s in range(max(1, math.ceil(math.log2(span))))]
    packed = None
    for j in range(hidden):
        acc = None
        for c in range(channels):
            t = b.mul_plain(act[c], f"w_fc1[{j},{c}]")
            acc = t if acc is None else b.add(acc, t)
        acc = b.rescale(acc)
        for s in steps:
            acc = b.add(acc, b.rotate(acc, s))
        one = b.rescale(b.mul_plain(acc, f"mask_fc1[{j}]"))
        packed = one if packed is None else b.add(packed, one)
    packed = b.add_plain(packed, "b_fc1")
    b.phase = "act2"
    h = b.rescale(b.relinearize(b.mul(packed, packed)))
    b.phase = "fc2"
    steps2 = [1 << s for s in range(max(1, math.ceil(math.log2(hidden))))]
    out = None
    for k in range(classes):
        acc = b.rescale(b.mul_plain(h, f"w_fc2[{k}]"))
        for s in steps2:
            acc = b.add(acc, b.rotate(acc, s))
        one = b.rescale(b.mul_plain(acc, f"mask_fc2[{k}]"))
        out = one if out is None else b.add(out, one)
    b.add_plain(out, "b_fc2")
    name = f"cnn-c{channels}-k{kernel}-h{hidden}"
    return HEProgram(name, "generated", p, b.ops, input_bytes={"image": p.ciphertext_bytes(p.levels)},
                     notes=["generated: layer sizes are the CryptoNets/Ishiyama-style MNIST net, not the exact EVA "
                            f"program of {PAPERS['in-storage-he'].cite()} (which the paper does not list)"])


__all__ = [
    "DEVICE_OPS", "HOST_OPS", "OPS", "SCHEMA", "DataItem", "HEOp", "HEProgram",
    "DEFAULT_CNN_PARAMS", "ProgramBuilder", "fetched_first", "generate_cnn", "load_trace",
    "program_from_trace", "params_from_dict",
]
