"""Packing several signed fixed-point values into one Paillier plaintext ("batching").

Why: a Paillier ciphertext costs the same whatever its plaintext, and a 1024-bit plaintext is
far wider than one fixed-point value. Seed paper 003 (Nikolaenko et al., privacy-preserving
ridge regression) packs a user's whole record into a few plaintexts, so each user encrypts
and the evaluator adds 17 ciphertexts instead of 420. Homomorphic addition of two packed
ciphertexts adds their plaintexts as integers, which adds slot by slot as long as no slot's
sum grows beyond its slot: each slot therefore carries guard bits sized for the number of
additions the caller declares in advance, and :class:`PackedAccumulator` refuses an addition
that would exceed them *before* doing it (an overflow inside a ciphertext is silent).

Layout math (:func:`slot_geometry`)
    ``w = value_bits + 1 + guard_bits`` with ``guard_bits = ceil(log2(max_additions * max_scalar))``
    ``slots = floor(usable_bits / w)``, ``usable_bits = key_bits - 2``.

Signed encoding: balanced (signed) digits with borrow, not a bias. A vector x_0..x_{s-1}
packs to the *signed* integer ``P = sum_j x_j * 2^(j*w)``, which is stored as ``P mod n``
(the ordinary signed encoding of :func:`~cryptoffload.crypto.paillier.encode_signed`).
Decoding peels slots from the bottom: the low w bits read as a two's-complement number in
[-2^(w-1), 2^(w-1)) give slot j, the borrow it implies is removed, and the rest shifts down.
That representation is unique, so it returns exactly the slot-wise sums as long as every slot
sum T_j satisfies |T_j| < 2^(w-1). Why not a bias (store x + 2^value_bits): a bias turns
negation and negative scalars into negative slot contents that the bias no longer covers,
and decoding needs the exact number of additions to subtract k * bias, so a miscount gives
wrong numbers silently. Signed digits support ``a - b`` and ``c * -3`` and need no count to
decode; the count (``additions``) is only used to check that the result is plausible.

Bounds. With |x| <= 2^value_bits - 1 and a weight W (the L1 norm of the integer coefficients
applied to fresh packed vectors: W additions of unscaled vectors, or a scalar multiple s
counting |s|), |T_j| <= W * (2^value_bits - 1) < 2^(value_bits + guard_bits) = 2^(w-1) for
W <= max_additions * max_scalar <= 2^guard_bits. Then |P| < 2^(slots*w - 1) (the geometric
tail of the lower slots is below half a top slot), and slots*w <= key_bits - 2 gives
|P| < 2^(key_bits-3) <= n//3, because a key_bits-bit n is >= 2^(key_bits-1). So the packed
integer never wraps modulo n *and* stays inside the signed range |m| <= n//3 that
:func:`decode_signed` and python-paillier use, for every modulus of that bit length: two
parties with different keys of the same size agree on the layout. The margin costs two bits
per plaintext, less than one slot.

Mask headroom (``mask_bits``, for unpacking without revealing the sums)
    A slot value cannot be extracted homomorphically (a carry from one slot reaches the
    next), so a party that must split a packed sum into separate ciphertexts has to decrypt
    it. To let a key holder (the CSP of the ridge protocol) do that without learning the sums,
    the evaluator first adds a packed *mask*: to slot j the bias ``B = 2^(w-1)`` (w the signed
    slot width above) and a uniform ``rho_j`` in ``[0, 2^(w + mask_bits))``. The biased sum
    ``U_j = T_j + B`` lies in ``[0, 2^w)``, so ``U_j + rho_j`` is non-negative and below
    ``2^(w + mask_bits + 1)``: the slot is widened to ``w + mask_bits + 1`` bits and nothing
    carries across slots. The decrypted slot is then independent of ``U_j`` up to statistical
    distance ``2^w / 2^(w + mask_bits) = 2^-mask_bits`` (the extra bit is what buys exactly
    ``2^-mask_bits``; with a ``w + mask_bits``-bit slot the mask range halves and so does the
    hiding). The whole masked plaintext is a plain non-negative number below
    ``2^(slots * slot_bits) <= 2^(key_bits - 2) < n``: no borrows, no wrap modulo n, and
    :meth:`PackingLayout.unpack_masked` splits it by bit fields. Whoever holds the masks
    subtracts ``B + rho_j`` again (in the ridge protocol homomorphically, under another key).
    ``mask_bits = 0`` (the default) is the layout without headroom, as before.

Check bits (``check_bits``, with mask headroom only)
    ``check_bits`` more bits on top of every masked slot, which an honest masked field never
    reaches (it is below ``2^(w + mask_bits + 1)``): they must decrypt to zero.
    :meth:`PackingLayout.unpack_masked` refuses a plaintext where they do not, naming
    neither the slot nor the value. A slot sum outside its signed range that pushes its masked
    field out of the field (above it, or below zero: a borrow sets them all) is caught unless
    it lands exactly a multiple of a whole field away, which is the same as a carry of that
    multiple into the next slot, i.e. a different value there.

Vectorised packing (:meth:`PackingLayout.pack_array`): a chunk of records as a numpy int64
array is turned into packed Python ints with one ``int.from_bytes`` per plaintext. Each value
is offset by ``2^k`` (k the bit length of the largest allowed |value|) to make it a
non-negative field narrower than the slot, the fields are OR-ed into a little-endian byte
buffer with numpy (disjoint bit ranges, so OR is addition), and the constant
``2^k * sum_j 2^(j w)`` is subtracted afterwards: the result equals :meth:`pack` exactly.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from cryptoffload.checks import check_int
from cryptoffload.crypto.paillier import (
    ENCRYPTION,
    Ciphertext,
    FixedPoint,
    KeyMismatchError,
    PaillierError,
    PrivateKey,
    PublicKey,
    decode_signed,
)

#: bits of the modulus that a packed plaintext may not use (see the module docstring)
KEY_MARGIN_BITS = 2


class PackingError(PaillierError):
    """A packing layout or packed vector cannot be used as asked."""


class PackingOverflowError(PackingError):
    """A value or a sum of packed vectors would not fit its slot."""


def slot_geometry(key_bits: int, value_bits: int, max_additions: int, max_scalar: int = 1,
                  mask_bits: int = 0, check_bits: int = 0) -> tuple[int, int, int]:
    """``(guard_bits, slot_bits, slots)`` for a key of ``key_bits`` bits.

    ``slot_bits = value_bits + 1 + guard_bits``, plus ``mask_bits + 1`` of mask headroom when
    ``mask_bits > 0`` (see the module docstring). Depends only on the key's bit length (not
    on n itself), so planning needs no key. ``check_bits`` (with mask headroom only) widens
    every slot by bits that must decrypt to zero (module docstring)."""
    key_bits = check_int("key bits", key_bits, error=PackingError)
    value_bits = check_int("value bits", value_bits, error=PackingError)
    capacity = (check_int("max_additions", max_additions, error=PackingError)
                * check_int("max_scalar", max_scalar, error=PackingError))
    mask_bits = check_int("mask bits", mask_bits, minimum=0, error=PackingError)
    guard_bits = (capacity - 1).bit_length()  # ceil(log2(capacity)), 0 for a capacity of 1
    check_bits = check_int("check bits", check_bits, minimum=0, error=PackingError)
    if check_bits and not mask_bits:
        raise PackingError("check bits need mask headroom (mask_bits > 0)")
    headroom = mask_bits + 1 + check_bits if mask_bits else 0
    slot_bits = value_bits + 1 + guard_bits + headroom
    usable = key_bits - KEY_MARGIN_BITS
    slots = max(usable, 0) // slot_bits
    if slots < 1:
        extra = f" + {headroom} mask headroom" if headroom else ""
        raise PackingError(
            f"a {slot_bits}-bit slot ({value_bits} value + 1 sign + {guard_bits} guard bits{extra}) does not fit "
            f"the {usable} usable bits of a {key_bits}-bit key")
    return guard_bits, slot_bits, slots


def value_bits_for(fixed_point: FixedPoint, max_abs: float) -> int:
    """Magnitude bits of ``max_abs`` encoded at ``fixed_point``'s scale: every |x| <= max_abs
    encodes to an integer of at most this many bits (at least 1)."""
    if not math.isfinite(max_abs) or max_abs <= 0:
        raise PackingError(f"max |x| must be a positive finite number, got {max_abs!r}")
    return max(1, abs(fixed_point.to_int(max_abs)).bit_length())


def regression_record_values(d: int) -> int:
    """Values per user record in the QAT Paillier paper's ridge regression (Zhou and Hua): A_i = x x^T (d*d) plus b_i = y x (d).

    (A is symmetric, so d*(d+1)/2 + d would suffice; the paper packs the full matrix.)"""
    d = check_int("dimension d", d, error=PackingError)
    return d * d + d


def plaintexts_for_record(value_count: int, key_bits: int, value_bits: int, max_additions: int,
                          max_scalar: int = 1, mask_bits: int = 0) -> int:
    """How many packed plaintexts a record of ``value_count`` values needs, without a key."""
    slots = slot_geometry(key_bits, value_bits, max_additions, max_scalar, mask_bits)[2]
    return -(-check_int("value count", value_count, error=PackingError) // slots)


@dataclass(frozen=True)
class PackingLayout:
    """Where the values of one vector go in a key's plaintexts; build with :meth:`for_key`
    or :meth:`for_fixed_point`. ``capacity`` (max_additions * max_scalar) is the largest
    weight a packed sum may reach."""

    public_key: PublicKey = field(repr=False)
    value_bits: int
    max_additions: int
    max_scalar: int
    guard_bits: int
    slot_bits: int
    slots: int
    fixed_point: FixedPoint | None = None
    mask_bits: int = 0
    check_bits: int = 0

    @classmethod
    def for_key(cls, public_key: PublicKey, value_bits: int, max_additions: int, max_scalar: int = 1,
                fixed_point: FixedPoint | None = None, mask_bits: int = 0, check_bits: int = 0) -> "PackingLayout":
        if not isinstance(public_key, PublicKey):
            raise PackingError(f"expected a PublicKey, got {type(public_key).__name__}")
        guard, width, slots = slot_geometry(public_key.bits, value_bits, max_additions, max_scalar, mask_bits,
                                            check_bits)
        return cls(public_key, value_bits, max_additions, max_scalar, guard, width, slots, fixed_point, mask_bits,
                   check_bits)

    @classmethod
    def for_fixed_point(cls, public_key: PublicKey, fixed_point: FixedPoint, max_abs: float, max_additions: int,
                        max_scalar: int = 1, mask_bits: int = 0) -> "PackingLayout":
        """A layout for floats |x| <= ``max_abs`` encoded with ``fixed_point``."""
        return cls.for_key(public_key, value_bits_for(fixed_point, max_abs), max_additions, max_scalar, fixed_point,
                           mask_bits)

    @property
    def capacity(self) -> int:
        return self.max_additions * self.max_scalar

    @property
    def max_value(self) -> int:
        """Largest |x| of one (scaled) value."""
        return (1 << self.value_bits) - 1

    def plaintexts_needed(self, value_count: int) -> int:
        return -(-check_int("value count", value_count, error=PackingError) // self.slots)

    # -- mask headroom ---------------------------------------------------------------------
    @property
    def signed_bits(self) -> int:
        """Width w of the signed slot without mask headroom: every admissible slot sum T has
        |T| < 2^(w-1)."""
        return self.value_bits + 1 + self.guard_bits

    @property
    def mask_bias(self) -> int:
        """B = 2^(w-1): added to every slot with the mask so that T + B is in [0, 2^w)."""
        return 1 << (self.signed_bits - 1)

    @property
    def mask_limit(self) -> int:
        """Masks are drawn uniformly from [0, mask_limit) = [0, 2^(w + mask_bits))."""
        return 1 << (self.signed_bits + self.mask_bits)

    def _require_headroom(self) -> None:
        if self.mask_bits < 1:
            raise PackingError("this layout has no mask headroom; build it with mask_bits > 0")

    def random_masks(self, count: int) -> list[int]:
        """``count`` fresh uniform masks from ``secrets`` (one per value, not per slot of padding)."""
        self._require_headroom()
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise PackingError(f"mask count must be a non-negative integer, got {count!r}")
        bits = self.signed_bits + self.mask_bits
        return [secrets.randbits(bits) for _ in range(count)]

    def pack_mask(self, masks: Sequence[int]) -> list[int]:
        """Plaintexts holding ``B + rho_j`` in slot j (padding slots get B alone).

        Added to packed sums of ``len(masks)`` values (a Paillier addition), it turns every slot
        into the non-negative ``T_j + B + rho_j`` that :meth:`unpack_masked` splits."""
        self._require_headroom()
        limit, bias = self.mask_limit, self.mask_bias
        for i, rho in enumerate(masks):
            if isinstance(rho, bool) or not isinstance(rho, int) or not 0 <= rho < limit:
                raise PackingError(f"mask {i} must be an int in [0, 2^{self.signed_bits + self.mask_bits})")
        w, s = self.slot_bits, self.slots
        out: list[int] = []
        for start in range(0, len(masks), s):
            p = 0
            for j in reversed(range(s)):
                rho = masks[start + j] if start + j < len(masks) else 0
                p = (p << w) + bias + rho
            out.append(p)
        return out

    def unpack_masked(self, plaintexts: Sequence[int], length: int | None = None) -> list[int]:
        """Slot fields ``T_j + B + rho_j`` of masked plaintexts (decrypted, in [0, n)), padding
        dropped when ``length`` is given. Plain bit fields: masking leaves no borrows. A value
        beyond the slots, or a field reaching its check bits, means the sum was not masked with
        this layout, or overflowed (the error names the plaintext, never a slot or a value)."""
        self._require_headroom()
        w, s = self.slot_bits, self.slots
        top, field_mask = 1 << (w * s), (1 << w) - 1
        honest = w - self.check_bits
        out: list[int] = []
        for index, p in enumerate(plaintexts):
            if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < top:
                raise PackingOverflowError(
                    f"masked plaintext {index} is not below 2^{w * s} (not masked with this layout, or overflowed)")
            for _ in range(s):
                value = p & field_mask
                if value >> honest:
                    raise PackingOverflowError(f"masked plaintext {index} has a slot beyond its range (overflowed)")
                out.append(value)
                p >>= w
        if length is not None:
            if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= len(out):
                raise PackingError(f"length must be 0..{len(out)} for {len(plaintexts)} plaintexts, got {length!r}")
            del out[length:]
        return out

    def unmask(self, fields: Sequence[int], masks: Sequence[int]) -> list[int]:
        """The slot sums T_j from masked fields and their masks (the in-the-clear inverse of
        :meth:`pack_mask`; the ridge protocol does this subtraction under encryption)."""
        if len(fields) != len(masks):
            raise PackingError(f"{len(fields)} masked fields but {len(masks)} masks")
        bias = self.mask_bias
        return [f - bias - rho for f, rho in zip(fields, masks)]

    # -- vectorised packing ----------------------------------------------------------------
    def pack_array(self, values: "np.ndarray", weight: int = 1) -> list[int]:
        """Packed plaintexts (in [0, n)) for each row of an integer array, row-major: row i's
        plaintexts are ``out[i*P:(i+1)*P]`` with ``P = plaintexts_needed(columns)``.

        Equals ``pack`` of every row; built with numpy and one ``int.from_bytes`` per
        plaintext (module docstring). ``weight`` allows rows that are already sums of up to
        ``weight`` vectors (|value| <= weight * max_value, weight <= capacity)."""
        arr = np.asarray(values)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.dtype.kind not in "iu":
            raise PackingError(f"pack_array needs a 2-D integer array, got {arr.ndim}-D {arr.dtype}")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise PackingError(f"weight must be a positive integer, got {weight!r}")
        if weight > self.capacity:
            raise PackingOverflowError(f"weight {weight} exceeds the layout's capacity of {self.capacity}")
        rows, count = arr.shape
        if rows == 0 or count == 0:
            return []
        limit = weight * self.max_value
        lo, hi = int(arr.min()), int(arr.max())
        if lo < -limit or hi > limit:
            bad = np.argwhere((arr < -limit) | (arr > limit))[0]
            raise PackingOverflowError(
                f"row {int(bad[0])} value {int(bad[1])} exceeds what {weight} additions of "
                f"{self.value_bits}-bit values can hold")
        w, s, n = self.slot_bits, self.slots, self.public_key.n
        planes = -(-count // s)
        off_bits = limit.bit_length()
        if off_bits + 1 + 7 > 64:  # a shifted field would not fit a 64-bit lane: plain Python
            out: list[int] = []
            for row in arr.tolist():
                out.extend(p % n for p in self._pack_unchecked(row))
            return out
        offset = 1 << off_bits
        shifted = (arr.astype(np.int64) + offset).astype(np.uint64)
        row_bytes = -(-(s * w) // 8) + 8
        buf = np.zeros((rows, planes, row_bytes), dtype=np.uint8)
        for idx in range(count):
            plane, j = divmod(idx, s)
            byte, shift = divmod(j * w, 8)
            field_bytes = (shifted[:, idx] << np.uint64(shift)).astype("<u8").view(np.uint8).reshape(rows, 8)
            buf[:, plane, byte:byte + 8] |= field_bytes
        consts = []
        for plane in range(planes):
            in_plane = min(s, count - plane * s)
            consts.append(offset * sum(1 << (j * w) for j in range(in_plane)))
        data = buf.tobytes()
        frm = int.from_bytes
        return [(frm(data[k * row_bytes:(k + 1) * row_bytes], "little") - consts[k % planes]) % n
                for k in range(rows * planes)]

    def _pack_unchecked(self, values: Sequence[int]) -> list[int]:
        w, s = self.slot_bits, self.slots
        out: list[int] = []
        for start in range(0, len(values), s):
            p = 0
            for x in reversed(values[start:start + s]):
                p = (p << w) + x
            out.append(p)
        return out

    # -- packing ---------------------------------------------------------------------------
    def pack_signed(self, values: Sequence[int]) -> list[int]:
        """The signed packed integers sum_j x_j 2^(j w), before reduction modulo n."""
        limit = self.max_value
        for i, x in enumerate(values):
            if isinstance(x, bool) or not isinstance(x, int):
                raise PackingError(f"value {i} is a {type(x).__name__}, not an int (use pack_fixed for floats)")
            if abs(x) > limit:
                raise PackingOverflowError(
                    f"value {i} ({x.bit_length()} bits) exceeds the layout's {self.value_bits} value bits")
        return self._pack_unchecked(values)

    def pack(self, values: Sequence[int]) -> list[int]:
        """Plaintexts in [0, n) holding ``values`` (ints, already scaled), ``slots`` per plaintext;
        the last one is zero-padded."""
        n = self.public_key.n
        return [p % n for p in self.pack_signed(values)]

    def pack_fixed(self, values: Sequence[float]) -> list[int]:
        """Plaintexts holding floats encoded with the layout's :class:`FixedPoint`."""
        fp = self._fixed_point()
        return self.pack([fp.to_int(float(x)) for x in values])

    def unpack_signed(self, packed: Sequence[int], additions: int | None = None,
                      length: int | None = None) -> list[int]:
        """Slot values of signed packed integers (see :meth:`unpack`)."""
        weight = self.capacity if additions is None else additions
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise PackingError(f"additions must be a non-negative integer, got {additions!r}")
        if weight > self.capacity:
            raise PackingOverflowError(
                f"{weight} additions exceed the layout's declared capacity of {self.capacity}")
        w, half, mask = self.slot_bits, 1 << (self.slot_bits - 1), (1 << self.slot_bits) - 1
        bound = weight * self.max_value
        out: list[int] = []
        for index, p in enumerate(packed):
            for j in range(self.slots):
                t = p & mask
                if t >= half:
                    t -= 1 << w
                if abs(t) > bound:
                    raise PackingOverflowError(
                        f"slot {index * self.slots + j} decodes to {t}, more than {weight} additions can produce "
                        "(more additions than declared, or a different layout)")
                out.append(t)
                p = (p - t) >> w
            if p != 0:
                raise PackingOverflowError(
                    f"plaintext {index} has bits beyond its {self.slots} slots (overflow or a different layout)")
        if length is not None:
            if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= len(out):
                raise PackingError(f"length must be 0..{len(out)} for {len(packed)} plaintexts, got {length!r}")
            if any(out[length:]):
                raise PackingOverflowError(f"padding slots beyond value {length} are not zero (a different length?)")
            del out[length:]
        return out

    def unpack(self, plaintexts: Sequence[int], additions: int | None = None, length: int | None = None) -> list[int]:
        """Slot-wise sums from decrypted plaintexts (ints in [0, n)).

        ``additions`` is the weight of the sum (how many packed vectors were added, a scalar
        multiple s counting |s|; default: the layout's capacity). Signed digits need no count to
        decode; it bounds each slot so that a sum with more additions than declared is refused
        rather than returned wrong, where detectable. ``length`` drops the zero padding."""
        pk = self.public_key
        return self.unpack_signed([decode_signed(pk, pk.check_plaintext(m)) for m in plaintexts], additions, length)

    def unpack_fixed(self, plaintexts: Sequence[int], additions: int | None = None,
                     length: int | None = None) -> list[float]:
        """:meth:`unpack` scaled back to floats with the layout's :class:`FixedPoint`."""
        scale = float(1 << self._fixed_point().frac_bits)
        return [v / scale for v in self.unpack(plaintexts, additions, length)]

    def _fixed_point(self) -> FixedPoint:
        if self.fixed_point is None:
            raise PackingError("this layout has no FixedPoint; build it with PackingLayout.for_fixed_point")
        return self.fixed_point


class PackedAccumulator:
    """Packed ciphertexts of one vector plus the weight of the sum they hold.

    A fresh encryption has weight 1; ``a + b`` has weight W_a + W_b, ``a * s`` weight |s| W_a,
    ``a - b`` and ``-a`` likewise. Every operation checks the resulting weight against the
    layout's capacity (max_additions * max_scalar) *before* touching a ciphertext and raises
    :class:`PackingOverflowError` if it would exceed it, because a slot that overflows inside a
    ciphertext corrupts its neighbour without any sign. Weight rather than separate counts of
    additions and scalars is what bounds a slot, so e.g. ``a * 3`` spends three additions.
    Operations return new accumulators; ``+=`` rebinds.
    """

    __slots__ = ("layout", "ciphertexts", "length", "weight")

    def __init__(self, layout: PackingLayout, ciphertexts: Sequence[Ciphertext], length: int, weight: int = 1) -> None:
        if not isinstance(layout, PackingLayout):
            raise PackingError(f"expected a PackingLayout, got {type(layout).__name__}")
        cts = list(ciphertexts)
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise PackingError(f"length must be a non-negative integer, got {length!r}")
        if len(cts) != -(-length // layout.slots):
            raise PackingError(f"{length} values need {-(-length // layout.slots)} packed ciphertexts, got {len(cts)}")
        for c in cts:
            if not isinstance(c, Ciphertext):
                raise PackingError(f"expected Ciphertexts, got {type(c).__name__}")
            if c.public_key != layout.public_key:
                raise KeyMismatchError("packed ciphertext was encrypted under another key than the layout's")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise PackingError(f"weight must be a non-negative integer, got {weight!r}")
        if weight > layout.capacity:
            raise PackingOverflowError(f"weight {weight} exceeds the layout's capacity of {layout.capacity}")
        self.layout = layout
        self.ciphertexts = cts
        self.length = length
        self.weight = weight

    @classmethod
    def encrypt(cls, layout: PackingLayout, values: Sequence[int], *, backend: str = "auto",
                constant_time: bool = True) -> "PackedAccumulator":
        """Pack and encrypt ints (already scaled) through the encryption service."""
        cts = ENCRYPTION.encrypt_many(layout.public_key, layout.pack(values), backend=backend,
                                      constant_time=constant_time)
        return cls(layout, cts, len(values))

    @classmethod
    def encrypt_fixed(cls, layout: PackingLayout, values: Sequence[float], *, backend: str = "auto",
                      constant_time: bool = True) -> "PackedAccumulator":
        cts = ENCRYPTION.encrypt_many(layout.public_key, layout.pack_fixed(values), backend=backend,
                                      constant_time=constant_time)
        return cls(layout, cts, len(values))

    def __repr__(self) -> str:
        return (f"PackedAccumulator(values={self.length}, ciphertexts={len(self.ciphertexts)}, "
                f"weight={self.weight}/{self.layout.capacity})")

    def remaining(self) -> int:
        """Weight that can still be added (e.g. how many more fresh vectors)."""
        return self.layout.capacity - self.weight

    def _check_weight(self, weight: int, what: str) -> None:
        if weight > self.layout.capacity:
            raise PackingOverflowError(
                f"{what} would bring the packed sum to weight {weight}, beyond the declared capacity "
                f"{self.layout.capacity} (max_additions {self.layout.max_additions} x max_scalar "
                f"{self.layout.max_scalar}); refused before computing it")

    def _check_other(self, other: "PackedAccumulator") -> None:
        if other.layout != self.layout:
            if other.layout.public_key != self.layout.public_key:
                raise KeyMismatchError("cannot add packed vectors under different keys")
            raise PackingError("cannot add packed vectors with different layouts")
        if other.length != self.length:
            raise PackingError(f"cannot add a packed vector of {other.length} values to one of {self.length}")

    def __add__(self, other: "PackedAccumulator") -> "PackedAccumulator":
        if not isinstance(other, PackedAccumulator):
            return NotImplemented
        self._check_other(other)
        weight = self.weight + other.weight
        self._check_weight(weight, "this addition")
        cts = [a + b for a, b in zip(self.ciphertexts, other.ciphertexts)]
        return PackedAccumulator(self.layout, cts, self.length, weight)

    def __mul__(self, scalar: int) -> "PackedAccumulator":
        if isinstance(scalar, bool) or not isinstance(scalar, int):
            return NotImplemented
        weight = abs(scalar) * self.weight
        self._check_weight(weight, f"multiplying by {scalar}")
        return PackedAccumulator(self.layout, [c * scalar for c in self.ciphertexts], self.length, weight)

    __rmul__ = __mul__

    def __neg__(self) -> "PackedAccumulator":
        return PackedAccumulator(self.layout, [-c for c in self.ciphertexts], self.length, self.weight)

    def __sub__(self, other: "PackedAccumulator") -> "PackedAccumulator":
        if not isinstance(other, PackedAccumulator):
            return NotImplemented
        self._check_other(other)
        self._check_weight(self.weight + other.weight, "this subtraction")
        return self + (-other)

    def decrypt(self, private_key: PrivateKey) -> list[int]:
        """The slot-wise sums as ints (still scaled)."""
        if private_key.public_key != self.layout.public_key:
            raise KeyMismatchError("private key does not belong to the packed vector's key")
        return self.layout.unpack(private_key.decrypt_many(self.ciphertexts), self.weight, self.length)

    def decrypt_fixed(self, private_key: PrivateKey) -> list[float]:
        scale = float(1 << self.layout._fixed_point().frac_bits)
        return [v / scale for v in self.decrypt(private_key)]
