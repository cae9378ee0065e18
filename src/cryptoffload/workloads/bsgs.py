"""Baby-step giant-step (BSGS) homomorphic matrix-vector products as op DAGs, split over devices.

Why a DAG and not a formula: Ha, Jung and Paek ("Multi-device bootstrapping optimization for
cloud computing") model one device's BSGS work as ``bs + C/(N bs)`` and add
``log2(N)`` communication rounds, but its printed form is garbled and, fitted to its own
Table 1, misses by ~40 %. What really happens is a graph -- baby-step rotations feed plaintext
products, which feed per-giant-step sums, giant rotations, partial sums and a reduction tree --
and its cost depends on which device does which node and which ciphertext crosses which link.
So this module builds that graph explicitly; :mod:`cryptoffload.sim.op_dag` prices it on
devices and links, :mod:`cryptoffload.policies.bsgs_tuner` searches it, and
:mod:`cryptoffload.engines.bsgs_run` executes the *same* split with real CKKS ciphertexts.

The product is :mod:`cryptoffload.crypto.ckks.bsgs`'s (the one BSGS kernel, which the HE-CNN
layers and the Dask runs execute)::

    y = sum_{j < gs} rot( sum_{i < bs} rot(d_{j bs + i}, -s_j) * rot(x, r_i), s_j )

with diagonal ``t`` (``0 <= t < C``) at rotation offset ``offset + t * stride``; baby step ``i``
rotates the input by ``r_i = i * stride``; giant step ``j`` rotates its inner sum by
``s_j = offset + j * bs * stride`` (no rotation when that is 0 mod slots). A dense matrix is
``offset = 0, stride = 1, C = slots``; a CoeffToSlot/SlotToCoeff stage of radix ``2^k`` is a
sparse matrix with ``2^(k+1) - 1`` diagonals at a power-of-two stride (:func:`bootstrap_stages`).

Each giant step's inner sum is rescaled before its giant rotation (rotating at the lower level
is cheaper), as the kernel does, so giant rotations, the accumulation and the reduction run one
level below the input. The giant-step part of the DAG is made by running the kernel's
:func:`~cryptoffload.crypto.ckks.bsgs.giant_sums` on an evaluator that adds a node per op, and
:func:`bsgs_plain` runs the same function on plain numpy vectors.

Splits over ``N`` devices (:data:`STRATEGIES`):

* ``replicate`` (the paper's): every device computes every baby step it needs itself, takes a
  contiguous block of giant steps, and the partial sums are added in a binary tree of
  ``ceil(log2 N)`` rounds (in round ``r`` device ``d`` with ``d mod 2^(r+1) == 2^r`` sends its
  partial sum to ``d - 2^r``).
* ``broadcast``: the baby steps are computed once, split round-robin over the devices, and
  all-gathered (each device sends each of its rotated ciphertexts to every other device); giant
  steps and reduction as above.
* ``split-giant``: only the giant steps are split; device 0 computes all baby steps and sends
  them down a binomial tree (round ``r``: devices ``< 2^r`` forward to ``d + 2^r``); giant
  steps and reduction as above.

The input ciphertext is resident on every device when the product starts and the result is on
device 0 when it ends (the paper's accounting; fetching and scattering are not part of Table 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from cryptoffload.crypto.ckks.batched import BatchedOps
from cryptoffload.crypto.ckks.bootstrap import dft
from cryptoffload.crypto.ckks.bsgs import giant_sums, prerotate, rotate_slots
from cryptoffload.errors import ConfigError

STRATEGIES = ("replicate", "broadcast", "split-giant")

# Op kinds of the DAG. ``send`` moves one ciphertext from ``device`` to ``dst``.
ROTATE, HOISTED_ROTATE, PMUL, ADD, RESCALE, SEND = (
    "rotate", "hoisted_rotate", "pmul", "add", "rescale", "send")
OP_KINDS = (ROTATE, HOISTED_ROTATE, PMUL, ADD, RESCALE, SEND)


def check_positive_int(name: str, value: object) -> int:
    """``value`` as an int >= 1, or a one-line :class:`ConfigError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return value


@dataclass(frozen=True)
class BsgsShape:
    """One BSGS matrix-vector product: ``diagonals`` (C) at ``offset + t * stride``, baby-step
    size ``baby`` (bs), over a vector of ``slots``. ``level`` is the number of RNS limbs the
    input has *above* the last one (as elsewhere in the package: level 0 = one limb)."""

    diagonals: int
    baby: int
    slots: int | None = None
    stride: int = 1
    offset: int = 0
    level: int = 1
    rescale_each_giant: bool = True    # False: one rescale of the whole sum (OpenFHE's stages)
    horner: bool = False               # giant rotations Horner-style by one step (OpenFHE's stages)

    def __post_init__(self) -> None:
        check_positive_int("the number of diagonals C", self.diagonals)
        check_positive_int("the baby-step size bs", self.baby)
        if self.baby > self.diagonals:
            raise ConfigError(f"the baby-step size bs must be between 1 and C = {self.diagonals}, "
                              f"got {self.baby}")
        check_positive_int("the diagonal stride", self.stride)
        if self.slots is not None:
            check_positive_int("slots", self.slots)
        if isinstance(self.level, bool) or not isinstance(self.level, int) or self.level < 1:
            raise ConfigError(f"the input level must be >= 1 (one level is used by the rescale), "
                              f"got {self.level!r}")

    @property
    def giant(self) -> int:
        """gs = ceil(C / bs)."""
        return -(-self.diagonals // self.baby)

    def diagonal_offset(self, t: int) -> int:
        return self.offset + t * self.stride

    def baby_rotation(self, i: int) -> int:
        return i * self.stride

    def giant_rotation(self, j: int) -> int:
        """Rotation of giant step ``j``'s inner sum (0 = none)."""
        r = self.offset + j * self.baby * self.stride
        return r % self.slots if self.slots else r

    def rotates_giant(self, j: int) -> bool:
        """Whether giant step ``j`` costs a rotation: its own step is not 0 mod slots, or, Horner,
        every step after the first when ``bs * stride`` is not (one rotation of the running sum
        per step, even where ``j * bs * stride`` wraps to 0)."""
        if self.horner:
            g = self.baby * self.stride
            return j >= 1 and bool(g % self.slots if self.slots else g)
        return bool(self.giant_rotation(j))

    def giant_steps(self) -> list[int]:
        """The rotation of every giant step's inner sum (0: none), as the kernel takes them."""
        return [self.giant_rotation(j) for j in range(self.giant)]

    def babies_of(self, j: int) -> range:
        """Baby indices giant step ``j`` uses (the last giant step may be partial)."""
        return range(0, min(self.baby, self.diagonals - j * self.baby))

    def rotation_steps(self) -> list[int]:
        """Every distinct non-zero rotation step the product uses on one device (the Galois keys
        it needs). A Horner evaluation rotates the running sum ``gs - 1`` times by the one step
        ``bs * stride`` instead of giant step ``j`` by ``j * bs * stride``: same count, one key."""
        steps = {self.baby_rotation(i) for i in range(1, self.baby)}
        if self.horner:
            step = (self.baby * self.stride) % self.slots if self.slots else self.baby * self.stride
            steps |= {step} if self.giant > 1 else set()
        else:
            steps |= {self.giant_rotation(j) for j in range(self.giant)}
        if self.slots:
            steps = {s % self.slots for s in steps}
        return sorted(s for s in steps if s)

    def op_counts(self) -> dict[str, int]:
        """Ops of the product on one device (what ``bs + C/bs`` counts, and the rest)."""
        giants = sum(1 for j in range(self.giant) if self.rotates_giant(j))
        babies = sum(1 for i in range(1, self.baby) if self.baby_rotation(i) % (self.slots or 1 << 62))
        return {"baby_rotations": babies, "giant_rotations": giants, "pmul": self.diagonals,
                "add": self.diagonals - 1, "rescale": self.giant if self.rescale_each_giant else 1}


@dataclass(frozen=True)
class DeviceShare:
    """What one device computes: the baby steps it rotates itself and its giant steps."""

    device: int
    baby: tuple[int, ...]     # baby indices i >= 1 this device rotates
    giant: tuple[int, ...]    # giant indices j this device evaluates


@dataclass(frozen=True)
class Split:
    """A BSGS product split over ``devices`` devices with ``strategy``.

    ``baby_sends`` lists ``(src, dst, i)``: device ``src`` sends rotated baby step ``i`` to
    ``dst`` (empty for ``replicate``), in the order they are issued; ``reduction`` lists the
    rounds of the tree, each a tuple of ``(src, dst)`` partial-sum transfers."""

    shape: BsgsShape
    devices: int
    strategy: str
    shares: tuple[DeviceShare, ...]
    baby_sends: tuple[tuple[int, int, int], ...]
    reduction: tuple[tuple[tuple[int, int], ...], ...]

    def active_devices(self) -> list[int]:
        """Devices that hold giant steps (with few giant steps some devices stay idle)."""
        return [s.device for s in self.shares if s.giant]


def giant_blocks(giant: int, devices: int) -> list[tuple[int, ...]]:
    """Contiguous, balanced blocks of giant indices, larger blocks first."""
    base, extra = divmod(giant, devices)
    out, j = [], 0
    for d in range(devices):
        n = base + (1 if d < extra else 0)
        out.append(tuple(range(j, j + n)))
        j += n
    return out


def reduction_tree(holders: Sequence[int]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Binary-tree rounds that sum one value per device in ``holders`` onto ``holders[0]``."""
    rounds = []
    k = 1
    n = len(holders)
    while k < n:
        rounds.append(tuple((holders[p], holders[p - k]) for p in range(k, n, 2 * k)))
        k *= 2
    return tuple(rounds)


def needed_babies(shape: BsgsShape, giants: Sequence[int]) -> range:
    """Baby indices ``i >= 1`` a block of giant steps uses: every giant step but the last is
    full, so it is the first one's set."""
    if not giants:
        return range(0)
    return range(1, len(shape.babies_of(min(giants))))


def split(shape: BsgsShape, devices: int, strategy: str = "replicate") -> Split:
    """Assign the product's work to ``devices`` devices (see the module docstring)."""
    check_positive_int("the number of devices N", devices)
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown BSGS strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    blocks = giant_blocks(shape.giant, devices)
    needed = [needed_babies(shape, blk) for blk in blocks]
    sends: list[tuple[int, int, int]] = []
    if strategy == "replicate" or devices == 1:
        babies = [tuple(n) for n in needed]
    elif strategy == "broadcast":
        babies = [tuple(i for i in range(1, shape.baby) if (i - 1) % devices == d) for d in range(devices)]
        for i in range(1, shape.baby):          # issue order: as soon as each is rotated
            src = (i - 1) % devices
            sends.extend((src, dst, i) for dst in range(devices) if dst != src and i in needed[dst])
    else:  # split-giant: device 0 rotates, a binomial tree forwards
        babies = [tuple(range(1, shape.baby))] + [()] * (devices - 1)
        k = 1
        while k < devices:
            for src in range(min(k, devices - k)):
                dst = src + k
                if any(needed[d] for d in range(dst, devices)):
                    sends.extend((src, dst, i) for i in range(1, shape.baby))
            k *= 2
    shares = tuple(DeviceShare(d, babies[d], blocks[d]) for d in range(devices))
    holders = [d for d in range(devices) if blocks[d]]
    return Split(shape, devices, strategy, shares, tuple(sends), reduction_tree(holders))


def sent_batches(sp: Split, device: int, batched: bool = True) -> list[tuple[int, ...]]:
    """The baby steps ``device`` rotates itself and sends, in the groups they leave in (issue
    order). ``batched``: one group per set of destinations -- rotated and serialised in one
    task, sent in one message to each destination when the group is done (what the Dask
    execution does: every task and every message costs the scheduler and the workers CPU
    time, which on a machine whose cores the workers share is taken from the compute). Else
    one group per baby step, each leaving as soon as it is rotated (a DMA engine's way)."""
    own = sp.shares[device].baby
    dests: dict[int, set[int]] = {}
    for src, dst, i in sp.baby_sends:
        if src == device and i in own:
            dests.setdefault(i, set()).add(dst)
    sent = [i for i in own if i in dests]
    if not batched:
        return [(i,) for i in sent]
    groups: dict[frozenset[int], list[int]] = {}
    for i in sent:
        groups.setdefault(frozenset(dests[i]), []).append(i)
    return [tuple(g) for g in groups.values()]


# ---- plaintext reference and the giant-step plaintexts ------------------------------------------
class _PlainSlots(BatchedOps[np.ndarray, np.ndarray]):
    """The kernel's ops on plain slot vectors (no rescale: nothing is scaled)."""

    @staticmethod
    def mul_plain(v: np.ndarray, pt: np.ndarray) -> np.ndarray:
        return np.multiply(v, pt)

    @staticmethod
    def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.add(a, b)

    @staticmethod
    def rotate(v: np.ndarray, steps: int) -> np.ndarray:
        return rotate_slots(v, steps)

    @staticmethod
    def rescale(v: np.ndarray) -> np.ndarray:
        return v


def diagonals_of(matrix: np.ndarray, shape: BsgsShape) -> np.ndarray:
    """The ``C`` generalised diagonals of a square ``matrix`` that ``shape`` addresses:
    ``d_t[k] = M[k, (k + offset_t) mod n]`` (rows ``C x n``)."""
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ConfigError(f"the matrix must be square, got shape {m.shape}")
    n = m.shape[0]
    k = np.arange(n)
    return np.stack([m[k, (k + shape.diagonal_offset(t)) % n] for t in range(shape.diagonals)])


def matrix_of(diagonals: np.ndarray, shape: BsgsShape) -> np.ndarray:
    """The matrix whose :func:`diagonals_of` are ``diagonals`` (zero elsewhere)."""
    d = np.asarray(diagonals)
    n = d.shape[1]
    m = np.zeros((n, n), dtype=d.dtype)
    k = np.arange(n)
    for t in range(shape.diagonals):
        m[k, (k + shape.diagonal_offset(t)) % n] += d[t]
    return m


def giant_plaintext(diagonals: np.ndarray | Mapping[int, np.ndarray], shape: BsgsShape, j: int, i: int) -> np.ndarray:
    """The vector giant step ``j`` multiplies baby step ``i`` by: ``rot(d_{j bs + i}, -s_j)``.
    ``diagonals``: all of them, or (on a Dask worker) only the rows that worker was sent."""
    return prerotate(diagonals[j * shape.baby + i], shape.offset + j * shape.baby * shape.stride)


def bsgs_plain(diagonals: np.ndarray, shape: BsgsShape, x: np.ndarray) -> np.ndarray:
    """The kernel run on plain numpy vectors: the encrypted run's evaluation order, op for op,
    without encryption (a Horner shape is evaluated as the sum it equals)."""
    x = np.asarray(x, dtype=float)
    babies = [rotate_slots(x, shape.baby_rotation(i)) for i in range(shape.baby)]
    rows = [[giant_plaintext(diagonals, shape, j, i) for i in shape.babies_of(j)] for j in range(shape.giant)]
    giant = [shape.offset + j * shape.baby * shape.stride for j in range(shape.giant)]
    out = giant_sums(_PlainSlots(), babies, rows, giant, rescale=False)
    assert out is not None, "a shape has C >= 1 diagonals, so giant step 0 has a plaintext"
    return out


# ---- the op DAG -------------------------------------------------------------------------------
Work = tuple[tuple[str, int, int], ...]     # (kind, level, count) of the ops a node stands for


@dataclass(frozen=True)
class Op:
    """One node: ``kind`` on ``device`` (for ``send``: from ``device`` to ``dst``) at ``level``,
    after the ops in ``deps``. ``work`` is what it costs: one op of ``kind``, or, for a merged
    chain (``kind == "chain"``), the ops it stands for. ``label`` says what it is."""

    id: int
    kind: str
    device: int
    level: int
    deps: tuple[int, ...] = ()
    dst: int | None = None
    label: str = ""
    work: Work = ()
    new_task: bool = False     # starts a task of the execution (a scheduler round trip before it)
    batch: int | None = None   # sends of one batch leave together, in one message (None: alone)


@dataclass
class OpDag:
    """Ops in issue order (a topological order; each device runs its ops in this order)."""

    split: Split
    ops: list[Op] = field(default_factory=list)
    result: int = -1          # op whose output is the product (on device 0)

    def add(self, kind: str, device: int, level: int, deps: Iterable[int] = (), *,
            dst: int | None = None, label: str = "", work: Work | None = None, new_task: bool = False,
            batch: int | None = None) -> int:
        if work is None:
            work = () if kind == SEND else ((kind, level, 1),)
        op = Op(len(self.ops), kind, device, level, tuple(deps), dst, label, work, new_task, batch)
        self.ops.append(op)
        return op.id

    def counts(self, device: int | None = None) -> dict[str, int]:
        """Elementary ops (chains expanded) per kind, on one device or all."""
        out = {k: 0 for k in OP_KINDS}
        for op in self.ops:
            if device is not None and op.device != device:
                continue
            if op.kind == SEND:
                out[SEND] += 1
            for kind, _, count in op.work:
                out[kind] += count
        return out


class _DagEvaluator(BatchedOps[int | None, tuple[int, int]]):
    """The kernel's ops as nodes of ``dag`` on ``device``: running
    :func:`~cryptoffload.crypto.ckks.bsgs.giant_sums` here adds the device's giant steps. A
    plaintext is its ``(giant, baby)`` index; a baby is the node that made it on the device
    (``None``: the input, resident from the start). Every product waits for ``barrier`` (the
    baby steps the device's giant steps use, as its Dask task does), and the first starts a new
    task. Labels say what a node belongs to: ``diag t``, ``giant j``, or ``partial`` (the sum
    over giant steps)."""

    def __init__(self, dag: OpDag, device: int, shape: BsgsShape, barrier: tuple[int, ...]) -> None:
        self.dag, self.device, self.shape, self.barrier = dag, device, shape, barrier
        self.level: dict[int, int] = {}     # node -> level of its output
        self.group: dict[int, str] = {}    # node -> what it belongs to: giant j, or partial
        self.first = True

    def _node(self, kind: str, level: int, deps: tuple[int, ...], label: str, out_level: int,
              new_task: bool = False) -> int:
        node = self.dag.add(kind, self.device, level, deps, label=label, new_task=new_task)
        self.level[node], self.group[node] = out_level, label
        return node

    def mul_plain(self, ct: int | None, pt: tuple[int, int]) -> int:
        j, i = pt
        deps = ((ct,) if ct is not None else ()) + self.barrier
        top = self.shape.level
        node = self._node(PMUL, top, deps, f"diag {j * self.shape.baby + i}", top, self.first)
        self.group[node] = f"giant {j}"
        self.first = False
        return node

    @staticmethod
    def _made(a: int | None) -> int:
        """A node this evaluator made (only products read the input, ``None``)."""
        if a is None:
            raise AssertionError("the DAG evaluator's input reached an op other than mul_plain")
        return a

    def add(self, a: int | None, b: int | None) -> int:
        a, b = self._made(a), self._made(b)
        label = self.group[a] if self.group[a] == self.group[b] else "partial"
        return self._node(ADD, self.level[a], (a, b), label, self.level[a])

    def rescale(self, a: int | None) -> int:
        a = self._made(a)
        return self._node(RESCALE, self.level[a], (a,), self.group[a], self.level[a] - 1)

    def rotate(self, a: int | None, step: int) -> int:
        a = self._made(a)
        return self._node(ROTATE, self.level[a], (a,), self.group[a], self.level[a])


def _charged_giant_rotations(shape: BsgsShape) -> list[int]:
    """The giant steps' rotations the model charges: the product's own, or, for a Horner shape,
    one rotation of the running sum by ``bs * stride`` per giant step after the first."""
    return [(shape.giant_rotation(j) or shape.baby * shape.stride) if shape.rotates_giant(j) else 0
            for j in range(shape.giant)]


def _giant_work(shape: BsgsShape, giants: Sequence[int]) -> Work:
    top = shape.level
    low = top - 1 if shape.rescale_each_giant else top
    # len(shape.babies_of(j)), without making the range: the tuner prices ~10^7 giant steps
    terms = sum(max(0, min(shape.baby, shape.diagonals - j * shape.baby)) for j in giants)
    rotations = sum(1 for j in giants if shape.rotates_giant(j))
    rescales = len(giants) if shape.rescale_each_giant else 0
    work = [(PMUL, top, terms), (ADD, top, terms - len(giants)), (RESCALE, top, rescales),
            (ROTATE, low, rotations), (ADD, low, max(0, len(giants) - 1))]
    return tuple(w for w in work if w[2])


def build_dag(sp: Split, *, hoisted_babies: bool = False, granularity: str = "op",
              batched_sends: bool = False) -> OpDag:
    """The op DAG of ``sp``.

    A device starts its giant steps once every baby step they use is on it (a barrier, as the
    Dask execution has: its giant-step task depends on all baby-step results). With
    ``hoisted_babies`` a device's baby rotations after its first are ``hoisted_rotate`` (one
    shared decomposition, as OpenFHE's fast rotations). ``granularity="chain"`` merges each run
    of ops without an outside dependency into one node (same schedule, far fewer nodes).

    Task boundaries are marked (``Op.new_task``) as the Dask execution cuts its tasks: a task
    per group of :func:`sent_batches`, one for the baby steps that stay, one for the giant
    steps. ``batched_sends`` groups the baby steps a device sends as that execution does (one
    task, one message per destination; ``Op.batch``); without it each baby step leaves alone as
    soon as it is rotated (a DMA engine; the U280 model)."""
    if granularity not in ("op", "chain"):
        raise ConfigError(f"granularity must be 'op' or 'chain', got {granularity!r}")
    shape = sp.shape
    dag = OpDag(sp)
    top = shape.level
    low = top - 1 if shape.rescale_each_giant else top     # where giant rotations and sums run
    chain = granularity == "chain"
    rotated: list[dict[int, int]] = [dict() for _ in range(sp.devices)]
    group_of: dict[tuple[int, int], int] = {}     # (device, baby) -> the op that starts its group
    for share in sp.shares:
        d = share.device
        if chain and not sp.baby_sends and share.baby:
            n = len(share.baby)
            work = (((ROTATE, top, 1), (HOISTED_ROTATE, top, n - 1)) if hoisted_babies
                    else ((ROTATE, top, n),))
            node = dag.add("chain", d, top, label="babies", work=tuple(w for w in work if w[2]),
                           new_task=True)
            rotated[d].update({i: node for i in share.baby})
            continue
        groups = sent_batches(sp, d, batched_sends)
        sent = {i for g in groups for i in g}
        groups.append(tuple(i for i in share.baby if i not in sent))
        first = {g[0] for g in groups if g}
        for n, i in enumerate(share.baby):
            kind = HOISTED_ROTATE if hoisted_babies and n else ROTATE
            rotated[d][i] = dag.add(kind, d, top, label=f"baby {i}", new_task=i in first)
        for g in groups:
            for i in g:
                group_of[(d, i)] = rotated[d][g[0]]
    # a batch: the sends from one device to another of values made by one task
    batches: dict[tuple[int, int, int], int] = {}
    for src, dst, i in sp.baby_sends:
        made = group_of[(src, i)]
        batch = batches.setdefault((src, dst, made), len(batches)) if batched_sends else None
        rotated[dst][i] = dag.add(SEND, src, top, (rotated[src][i],), dst=dst, label=f"baby {i}", batch=batch)
        group_of[(dst, i)] = rotated[dst][i] if not batched_sends else -1 - batches[(src, dst, made)]
    partial: dict[int, int] = {}
    for share in sp.shares:
        d = share.device
        if not share.giant:
            continue
        barrier = tuple(sorted({rotated[d][i] for i in needed_babies(shape, share.giant)}))
        if chain:
            partial[d] = dag.add("chain", d, low, barrier, label="giant steps",
                                 work=_giant_work(shape, share.giant), new_task=True)
            continue
        ev = _DagEvaluator(dag, d, shape, barrier)
        babies = {0: None, **{i: rotated[d][i] for i in needed_babies(shape, share.giant)}}
        rows = {j: [(j, i) for i in shape.babies_of(j)] for j in share.giant}
        acc = giant_sums(ev, babies, rows, _charged_giant_rotations(shape), share.giant,
                         rescale=shape.rescale_each_giant)
        assert acc is not None
        partial[d] = acc
    for r, rnd in enumerate(sp.reduction):
        for src, dst in rnd:
            moved = dag.add(SEND, src, low, (partial[src],), dst=dst, label=f"reduce {r}")
            partial[dst] = dag.add(ADD, dst, low, (partial[dst], moved), label=f"reduce {r}")
    holder = sp.reduction[-1][0][1] if sp.reduction else next(iter(partial))
    dag.result = partial[holder]
    if not shape.rescale_each_giant:       # one rescale of the finished sum
        dag.result = dag.add(RESCALE, holder, top, (dag.result,), label="result")
    return dag


# ---- bootstrapping's linear transforms -----------------------------------------------------------
@dataclass(frozen=True)
class Stage:
    """One CoeffToSlot/SlotToCoeff stage: ``layers`` radix-2 FFT layers collapsed into one
    level, evaluated as a sparse BSGS product."""

    transform: str     # "CoeffToSlot" or "SlotToCoeff"
    index: int
    layers: int
    shape: BsgsShape


def select_layers(log_slots: int, budget: int) -> tuple[int, int, int]:
    """How ``log_slots`` FFT layers are grouped so the transform uses exactly ``budget`` levels:
    ``(layers per stage, full stages, layers of a last partial stage)``, OpenFHE's rule
    (``SelectLayers`` in ``ckksrns-utils.cpp``) as the executed bootstrap applies it
    (:func:`~cryptoffload.crypto.ckks.bootstrap.dft.select_layers`: one rule for the model and
    the run), with a budget or a slot count from outside checked first."""
    check_positive_int("the level budget", budget)
    if log_slots < 1:
        raise ConfigError(f"log2(slots) must be >= 1, got {log_slots}")
    return dft.select_layers(log_slots, budget)


def default_stage_baby(layers: int) -> int:
    """OpenFHE's default baby-step count for a stage of ``layers`` collapsed layers (``dim1 = 0``),
    the executed bootstrap's (:func:`~cryptoffload.crypto.ckks.bootstrap.dft.default_baby`)."""
    return dft.default_baby(layers)


def _stage_baby(d1: int, diagonals: int, default: int, what: str) -> int:
    if isinstance(d1, bool) or not isinstance(d1, int) or d1 < 0:
        raise ConfigError(f"dim1 for {what} must be a non-negative integer, got {d1!r}")
    if 0 < d1 <= diagonals:
        if d1 & (d1 - 1):
            raise ConfigError(f"dim1 for {what} must be a power of two (OpenFHE evaluates (D + 1) // dim1 "
                              f"giant steps, so {d1} would leave diagonals out)")
        return d1
    return min(default, diagonals)


def bootstrap_stages(slots: int, level_budget: tuple[int, int] = (3, 3),
                     dim1: tuple[int, int] = (0, 0), *, top_level: int = 30,
                     levels_after: int = 1) -> list[Stage]:
    """The sparse BSGS stages of CoeffToSlot then SlotToCoeff for ``slots`` slots, as OpenFHE
    1.6.1 runs them (checked against its rotation key sets and call stacks by
    ``benchmarks/bench_bootstrap_openfhe.py``).

    ``log2(slots)`` FFT layers are grouped by :func:`select_layers`; a stage collapsing ``k``
    layers is a product with ``2^(k+1) - 1`` diagonals at the stride of its lowest layer,
    evaluated with ``g`` hoisted baby rotations ``j * stride`` and Horner giant steps by
    ``g * stride``, and rescaled once. ``g`` is ``dim1`` (a power of two) for the full stages and
    OpenFHE's default for a remainder stage. CoeffToSlot runs the full stages from the largest
    stride down and the remainder last at stride 1, starting at ``top_level`` (one level per
    stage); SlotToCoeff runs strides 1, 2^k, ... and the remainder last, ending ``levels_after``
    levels above the bottom. A budget of (1, 1) is one dense product (``C = slots``) each way."""
    check_positive_int("slots", slots)
    if slots & (slots - 1):
        raise ConfigError(f"slots must be a power of two, got {slots}")
    if len(level_budget) != 2 or len(dim1) != 2:
        raise ConfigError("the level budget and dim1 are pairs (CoeffToSlot, SlotToCoeff)")
    log_slots = max(1, slots.bit_length() - 1)
    out: list[Stage] = []
    for t, (name, budget, d1) in enumerate((("CoeffToSlot", level_budget[0], dim1[0]),
                                            ("SlotToCoeff", level_budget[1], dim1[1]))):
        layers, rows, rem = select_layers(log_slots, budget)
        if rows == 1 and rem == 0 and layers == log_slots:          # one dense transform
            plan = [(log_slots, 1, slots, _stage_baby(d1, slots, default_stage_baby(log_slots), name))]
        else:
            d_full = (1 << (layers + 1)) - 1
            g_full = _stage_baby(d1, d_full, default_stage_baby(layers), name)
            if name == "CoeffToSlot":
                plan = [(layers, 1 << (s * layers + rem), d_full, g_full) for s in range(rows - 1, -1, -1)]
                if rem:
                    plan.append((rem, 1, (1 << (rem + 1)) - 1, default_stage_baby(rem)))
            else:
                plan = [(layers, 1 << (s * layers), d_full, g_full) for s in range(rows)]
                if rem:
                    plan.append((rem, 1 << (rows * layers), (1 << (rem + 1)) - 1, default_stage_baby(rem)))
        for idx, (w, stride, diagonals, g) in enumerate(plan):
            level = top_level - idx if t == 0 else levels_after + len(plan) - idx
            shape = BsgsShape(diagonals, min(g, diagonals), slots=slots, stride=stride, offset=0,
                              level=max(1, level), rescale_each_giant=False, horner=True)
            out.append(Stage(name, idx, w, shape))
    return out
