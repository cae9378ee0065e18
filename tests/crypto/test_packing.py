"""Packing signed values into Paillier plaintexts: exact slot-wise sums, refusals, layout math.

The encrypted property tests are few examples (each encrypts and adds real 1024-bit
ciphertexts); the pure-integer ones reproduce the same arithmetic modulo n without
encryption (Paillier addition is plaintext addition mod n) and run many more.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.packing import (
    PackedAccumulator,
    PackingError,
    PackingLayout,
    PackingOverflowError,
    plaintexts_for_record,
    regression_record_values,
    slot_geometry,
    value_bits_for,
)
from cryptoffload.crypto.paillier import (
    ENCRYPTION,
    FixedPoint,
    KeyMismatchError,
    PaillierError,
    generate_keypair,
)
from cryptoffload.errors import CryptoffloadError

SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MEDIUM = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def keys():
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def other_keys():
    return generate_keypair(1024, insecure_study_size=True)


# --------------------------------------------------------------------------------------------
# layout math


def test_slot_geometry_formula():
    # 17 value bits + 1 sign bit + ceil(log2(1e6)) = 20 guard bits
    assert slot_geometry(1024, 17, 1_000_000) == (20, 38, 1022 // 38)
    assert slot_geometry(1024, 17, 1 << 20) == (20, 38, 26)
    assert slot_geometry(1024, 17, (1 << 20) + 1)[0] == 21
    assert slot_geometry(1024, 10, 1) == (0, 11, 1022 // 11)
    # a scalar bound adds its bits to the guard: capacity = max_additions * max_scalar
    assert slot_geometry(1024, 10, 4, max_scalar=8) == (5, 16, 63)


def test_seed_003_record_fits_17_plaintexts_of_1024_bits():
    # d = 20: A = x x^T (400) + b (20) = 420 values; 16 fractional bits, |x| <= 1, 1e6 users
    assert regression_record_values(20) == 420
    vb = value_bits_for(FixedPoint(16), 1.0)
    assert vb == 17
    assert plaintexts_for_record(420, 1024, vb, 1_000_000) == 17
    assert plaintexts_for_record(420, 2048, vb, 1_000_000) == 8


def test_layout_that_cannot_hold_one_slot_is_refused(keys):
    pk, _ = keys
    with pytest.raises(PackingError, match="does not fit"):
        PackingLayout.for_key(pk, 1000, 1 << 30)
    with pytest.raises(PackingError):
        slot_geometry(1024, 1022, 1)  # 1023-bit slot > 1022 usable bits
    assert slot_geometry(1024, 1021, 1)[2] == 1


@pytest.mark.parametrize("args", [(0, 1), (17, 0), (17, -3), (17, 2.0), (True, 1)])
def test_layout_parameters_checked(keys, args):
    pk, _ = keys
    with pytest.raises(PackingError):
        PackingLayout.for_key(pk, *args)


def test_layout_refuses_non_key():
    with pytest.raises(PackingError):
        PackingLayout.for_key(12345, 17, 10)  # type: ignore[arg-type]


def test_layout_depends_only_on_key_size(keys, other_keys):
    a = PackingLayout.for_key(keys[0], 17, 1000)
    b = PackingLayout.for_key(other_keys[0], 17, 1000)
    assert (a.slot_bits, a.slots) == (b.slot_bits, b.slots)
    assert a != b  # but it is bound to its key


def test_errors_are_paillier_and_user_errors():
    assert issubclass(PackingOverflowError, PaillierError)
    assert issubclass(PackingError, CryptoffloadError)


# --------------------------------------------------------------------------------------------
# pure integer packing (no encryption)


@st.composite
def packing_case(draw, max_vb: int = 40):
    vb = draw(st.integers(1, max_vb))
    max_add = draw(st.integers(1, 1 << 24))
    max_scalar = draw(st.sampled_from([1, 1, 2, 7, 1000]))
    length = draw(st.integers(0, 120))
    k = draw(st.integers(1, 12))
    lim = (1 << vb) - 1
    vectors = draw(st.lists(st.lists(st.integers(-lim, lim), min_size=length, max_size=length),
                            min_size=k, max_size=k))
    return vb, max_add, max_scalar, length, vectors


@FAST
@given(case=packing_case(), data=st.data())
def test_integer_round_trip_of_sums_mod_n(keys, case, data):
    pk, _ = keys
    vb, max_add, max_scalar, length, vectors = case
    layout = PackingLayout.for_key(pk, vb, max_add, max_scalar)
    cap = layout.capacity
    # coefficients whose L1 norm stays within the capacity (negative ones are subtractions)
    coeffs = []
    budget = cap
    for _ in vectors:
        c = data.draw(st.integers(-min(budget, max_scalar), min(budget, max_scalar)))
        coeffs.append(c)
        budget -= abs(c)
    weight = sum(abs(c) for c in coeffs)
    n = pk.n
    total = [0] * len(layout.pack(vectors[0]))
    for c, vec in zip(coeffs, vectors):
        total = [(t + c * p) % n for t, p in zip(total, layout.pack(vec))]
    expected = [sum(c * v[i] for c, v in zip(coeffs, vectors)) for i in range(length)]
    assert layout.unpack(total, additions=weight, length=length) == expected
    assert layout.unpack(total, length=length) == expected  # default bound: the capacity
    assert all(0 <= m < n for m in total)
    assert len(total) == (layout.plaintexts_needed(length) if length else 0)


@FAST
@given(vb=st.integers(1, 60), data=st.data())
def test_extreme_values_at_full_capacity(keys, vb, data):
    """Every slot at +-max_value, summed capacity times: the worst case the guard bits allow."""
    pk, _ = keys
    max_add = data.draw(st.integers(1, 5000))
    layout = PackingLayout.for_key(pk, vb, max_add)
    m = layout.max_value
    signs = data.draw(st.lists(st.sampled_from([-1, 1]), min_size=layout.slots * 2, max_size=layout.slots * 2))
    vec = [s * m for s in signs]
    summed = [p * max_add % pk.n for p in layout.pack(vec)]
    assert layout.unpack(summed, additions=max_add) == [s * m * max_add for s in signs]


def test_packed_integer_stays_in_signed_range(keys):
    pk, _ = keys
    layout = PackingLayout.for_key(pk, 30, 1000)
    m = layout.max_value * layout.capacity
    for sign in (1, -1):
        p = layout.pack_signed([sign * layout.max_value] * layout.slots)[0] * layout.capacity
        assert abs(p) <= pk.max_int
        assert layout.unpack_signed([p]) == [sign * m] * layout.slots


def test_pack_refuses_too_large_value_naming_index(keys):
    pk, _ = keys
    layout = PackingLayout.for_key(pk, 8, 10)
    layout.pack([255, -255])
    with pytest.raises(PackingOverflowError, match="value 2 "):
        layout.pack([1, -2, 256, 3])
    with pytest.raises(PackingOverflowError, match="value 0 "):
        layout.pack([-256])


@pytest.mark.parametrize("bad", [1.5, True, "3", None])
def test_pack_refuses_non_ints(keys, bad):
    layout = PackingLayout.for_key(keys[0], 8, 10)
    with pytest.raises(PackingError, match="value 1 "):
        layout.pack([1, bad])  # type: ignore[list-item]


def test_unpack_detects_more_additions_than_declared(keys):
    """A sum with more weight than the count given to unpack is refused where a slot shows it
    (beyond the guard bits an overflow can alias to a valid slot: the accumulator prevents that)."""
    pk, _ = keys
    layout = PackingLayout.for_key(pk, 8, 4)
    packed = layout.pack([255] * 3)
    three = [p * 3 % pk.n for p in packed]
    assert layout.unpack(three, additions=3, length=3) == [765] * 3
    with pytest.raises(PackingOverflowError, match="more than 2 additions"):
        layout.unpack(three, additions=2)
    with pytest.raises(PackingOverflowError, match="capacity"):
        layout.unpack(three, additions=5)
    # a plaintext with bits above the last slot
    with pytest.raises(PackingOverflowError, match="beyond its"):
        layout.unpack([1 << (layout.slots * layout.slot_bits + 1)])


def test_unpack_length_checks_padding(keys):
    pk, _ = keys
    layout = PackingLayout.for_key(pk, 8, 4)
    packed = layout.pack([1, 2, 3])
    assert layout.unpack(packed, length=3) == [1, 2, 3]
    with pytest.raises(PackingOverflowError, match="padding"):
        layout.unpack(packed, length=2)
    with pytest.raises(PackingError):
        layout.unpack(packed, length=layout.slots + 1)


def test_fixed_point_round_trip_without_encryption(keys):
    pk, _ = keys
    fp = FixedPoint(16)
    layout = PackingLayout.for_fixed_point(pk, fp, 1.0, 100)
    xs = [0.5, -1.0, 1.0, -0.25, 0.0, 1 / 3]
    packed = layout.pack_fixed(xs)
    got = layout.unpack_fixed([p * 3 % pk.n for p in packed], additions=3, length=len(xs))
    assert got == pytest.approx([3 * x for x in xs], abs=3 * 2 ** -17)
    # the bound is on bits: 17 value bits hold |x| < 2.0 at 16 fractional bits
    layout.pack_fixed([1.99])
    with pytest.raises(PackingOverflowError, match="value 1 "):
        layout.pack_fixed([0.0, 2.0])
    with pytest.raises(PackingError, match="FixedPoint"):
        PackingLayout.for_key(pk, 17, 100).pack_fixed([0.5])


# --------------------------------------------------------------------------------------------
# encrypted


@st.composite
def encrypted_case(draw):
    vb = draw(st.sampled_from([1, 8, 17, 32, 64]))
    max_add = draw(st.integers(1, 1 << 20))
    length = draw(st.integers(1, 60))
    k = draw(st.integers(1, min(max_add, 6)))
    lim = (1 << vb) - 1
    vectors = draw(st.lists(st.lists(st.integers(-lim, lim), min_size=length, max_size=length),
                            min_size=k, max_size=k))
    return vb, max_add, vectors


@SLOW
@given(case=encrypted_case())
def test_encrypted_packed_sums_are_exact(keys, case):
    pk, sk = keys
    vb, max_add, vectors = case
    layout = PackingLayout.for_key(pk, vb, max_add)
    acc = PackedAccumulator.encrypt(layout, vectors[0])
    for vec in vectors[1:]:
        acc = acc + PackedAccumulator.encrypt(layout, vec)
    assert acc.weight == len(vectors)
    expected = [sum(col) for col in zip(*vectors)]
    assert acc.decrypt(sk) == expected
    # the same by hand: decrypt the raw ciphertexts and unpack with the count
    assert layout.unpack(sk.decrypt_many(acc.ciphertexts), additions=len(vectors), length=len(expected)) == expected


def test_encrypted_scalars_and_subtraction(keys):
    pk, sk = keys
    layout = PackingLayout.for_key(pk, 17, 10, max_scalar=4)
    a = PackedAccumulator.encrypt(layout, [100, -7, 0, 65535])
    b = PackedAccumulator.encrypt(layout, [-1, 2, -3, -65535])
    r = a * 3 - b + (-a) * -4
    assert r.weight == 3 + 1 + 4
    assert r.decrypt(sk) == [7 * 100 + 1, 7 * -7 - 2, 3, 7 * 65535 + 65535]
    assert (a * 0).decrypt(sk) == [0, 0, 0, 0]


def test_encrypted_fixed_point(keys):
    pk, sk = keys
    layout = PackingLayout.for_fixed_point(pk, FixedPoint(16), 1.0, 1_000_000)
    rows = [[0.5, -0.75, 1.0], [-1.0, 0.125, 0.25], [0.25, 0.25, -1.0]]
    acc = PackedAccumulator.encrypt_fixed(layout, rows[0])
    for r in rows[1:]:
        acc += PackedAccumulator.encrypt_fixed(layout, r)
    assert acc.decrypt_fixed(sk) == [-0.25, -0.375, 0.25]


def test_accumulator_refuses_addition_beyond_capacity_before_doing_it(keys, monkeypatch):
    pk, sk = keys
    layout = PackingLayout.for_key(pk, 8, 3)
    one = PackedAccumulator.encrypt(layout, [255, -255])
    acc = one + one + one
    assert acc.weight == 3 and acc.remaining() == 0
    assert acc.decrypt(sk) == [765, -765]

    from cryptoffload.crypto import paillier

    def boom(*args, **kwargs):
        raise AssertionError("a ciphertext was combined despite the refusal")

    monkeypatch.setattr(paillier.Ciphertext, "__add__", boom)
    monkeypatch.setattr(paillier.Ciphertext, "__mul__", boom)
    with pytest.raises(PackingOverflowError, match="weight 4, beyond the declared capacity 3"):
        acc + one
    with pytest.raises(PackingOverflowError):
        acc - one
    with pytest.raises(PackingOverflowError):
        one * 4
    with pytest.raises(PackingOverflowError):
        one * -4
    monkeypatch.undo()
    assert acc.weight == 3  # unchanged by the refusals
    assert (one * -3).decrypt(sk) == [-765, 765]


def test_accumulator_refuses_mismatches(keys, other_keys):
    pk, sk = keys
    layout = PackingLayout.for_key(pk, 8, 10)
    a = PackedAccumulator.encrypt(layout, [1, 2, 3])
    with pytest.raises(PackingError, match="2 values to one of 3"):
        a + PackedAccumulator.encrypt(layout, [1, 2])
    with pytest.raises(PackingError, match="different layouts"):
        a + PackedAccumulator.encrypt(PackingLayout.for_key(pk, 9, 10), [1, 2, 3])
    other = PackingLayout.for_key(other_keys[0], 8, 10)
    with pytest.raises(KeyMismatchError):
        a + PackedAccumulator.encrypt(other, [1, 2, 3])
    with pytest.raises(KeyMismatchError):
        a.decrypt(other_keys[1])
    with pytest.raises(KeyMismatchError):
        PackedAccumulator(other, a.ciphertexts, 3)
    with pytest.raises(PackingError, match="need 1 packed"):
        PackedAccumulator(layout, a.ciphertexts * 2, 3)
    with pytest.raises(PackingOverflowError):
        PackedAccumulator(layout, a.ciphertexts, 3, weight=11)


# --------------------------------------------------------------------------------------------
# mask headroom (unpacking without revealing the sums) and vectorised packing


def test_mask_headroom_geometry():
    # 17 value + 1 sign + 20 guard = 38-bit signed slot, + 40 mask bits + 1 carry bit = 79
    assert slot_geometry(1024, 17, 1_000_000, mask_bits=40) == (20, 79, 12)
    assert slot_geometry(1024, 17, 1_000_000, mask_bits=80) == (20, 119, 8)
    assert slot_geometry(1024, 17, 1_000_000, mask_bits=0) == slot_geometry(1024, 17, 1_000_000)
    # Zhou and Hua's records, masks: d = 20, symmetric (230 values) or full (420), |y| <= 26 -> 21 bits
    assert plaintexts_for_record(230, 1024, 21, 1_000_000, mask_bits=40) == 20
    assert plaintexts_for_record(420, 1024, 21, 1_000_000, mask_bits=40) == 35
    assert plaintexts_for_record(230, 1024, 21, 1_000_000, mask_bits=80) == 29
    assert plaintexts_for_record(420, 1024, 21, 1_000_000, mask_bits=80) == 53
    with pytest.raises(PackingError, match="mask headroom"):
        slot_geometry(120, 17, 1_000_000, mask_bits=80)
    with pytest.raises(PackingError, match="mask bits"):
        slot_geometry(1024, 17, 10, mask_bits=-1)


def test_mask_constants(keys):
    layout = PackingLayout.for_key(keys[0], 17, 1000, mask_bits=40)
    assert layout.signed_bits == 17 + 1 + 10
    assert layout.slot_bits == layout.signed_bits + 41
    assert layout.mask_bias == 1 << 27
    assert layout.mask_limit == 1 << 68
    # the worst slot: bias + largest sum + largest mask still fits the slot
    assert layout.mask_bias + layout.capacity * layout.max_value + layout.mask_limit - 1 < 1 << layout.slot_bits
    assert layout.mask_bias - layout.capacity * layout.max_value >= 0
    assert all(0 <= m < layout.mask_limit for m in layout.random_masks(50))
    assert len(set(layout.random_masks(50))) == 50


@MEDIUM
@given(case=packing_case(max_vb=30), stat=st.sampled_from([1, 40, 80]), extreme=st.booleans(), data=st.data())
def test_masked_sums_split_without_borrows(keys, case, stat, extreme, data):
    pk, _ = keys
    vb, max_add, max_scalar, length, vectors = case
    if length == 0:
        return
    layout = PackingLayout.for_key(pk, vb, max_add, max_scalar, mask_bits=stat)
    weight = min(len(vectors), layout.capacity)
    vectors = vectors[:weight]
    n = pk.n
    total = [0] * layout.plaintexts_needed(length)
    for vec in vectors:
        total = [(t + p) % n for t, p in zip(total, layout.pack(vec))]
    sums = [sum(v[i] for v in vectors) for i in range(length)]
    if extreme:  # the largest masks allowed
        masks = [layout.mask_limit - 1] * length
    else:
        masks = [data.draw(st.integers(0, layout.mask_limit - 1)) for _ in range(length)]
    masked = [(t + m) % n for t, m in zip(total, layout.pack_mask(masks))]
    fields = layout.unpack_masked(masked, length)
    assert all(0 <= f < 1 << layout.slot_bits for f in fields)
    assert layout.unmask(fields, masks) == sums
    assert fields == [s + layout.mask_bias + m for s, m in zip(sums, masks)]


def test_mask_helpers_refuse_misuse(keys):
    pk, _ = keys
    plain = PackingLayout.for_key(pk, 17, 100)
    for call in (lambda: plain.pack_mask([1]), lambda: plain.unpack_masked([1]), lambda: plain.random_masks(2)):
        with pytest.raises(PackingError, match="no mask headroom"):
            call()
    layout = PackingLayout.for_key(pk, 17, 100, mask_bits=40)
    with pytest.raises(PackingError, match="mask 1 "):
        layout.pack_mask([0, layout.mask_limit])
    with pytest.raises(PackingError, match="mask 0 "):
        layout.pack_mask([-1])
    with pytest.raises(PackingOverflowError, match="not below"):
        layout.unpack_masked([1 << (layout.slots * layout.slot_bits)])
    with pytest.raises(PackingError, match="masks"):
        layout.unmask([1, 2], [1])
    with pytest.raises(PackingError, match="length"):
        layout.unpack_masked([0], layout.slots + 1)


def test_check_bits_catch_a_slot_that_leaves_its_masked_range(keys):
    """Issue 22: a sum beyond its slot carried silently into the next. With check bits above
    every masked field, a field above its range, or below zero (a borrow), is refused, and
    the error names neither the slot nor a value; an honest extreme sum still splits."""
    pk, _ = keys
    assert slot_geometry(1024, 17, 1_000_000, mask_bits=40, check_bits=1) == (20, 80, 12)
    with pytest.raises(PackingError, match="mask headroom"):
        slot_geometry(1024, 17, 10, check_bits=1)
    layout = PackingLayout.for_key(pk, 17, 4, mask_bits=40, check_bits=1)
    n, length = pk.n, 2 * layout.slots
    assert layout.slot_bits == layout.signed_bits + 41 + 1
    limit = layout.capacity * layout.max_value
    masks = [layout.mask_limit - 1] * length
    honest = [limit, -limit] * layout.slots
    fields = layout.unpack_masked([(t + m) % n for t, m in zip(layout._pack_unchecked(honest), layout.pack_mask(masks))],
                                  length)
    assert layout.unmask(fields, masks) == honest
    masks = [0] * length
    for slot, value in ((3, 1 << (layout.slot_bits - 1)), (3, -(layout.mask_bias + 1)), (0, (1 << 70) + (1 << (layout.slot_bits - 1)))):
        values = [0] * length
        values[slot] = value
        packed = layout._pack_unchecked(values)  # what a malicious provider can encrypt
        masked = [(t + m) % n for t, m in zip(packed, layout.pack_mask(masks))]
        with pytest.raises(PackingOverflowError, match="beyond its range") as info:
            layout.unpack_masked(masked, length)
        assert str(value) not in str(info.value) and "slot 3" not in str(info.value)
    # a whole field's multiple is a carry: the same as a different value in the next slot
    values = [0] * length
    values[0] = 1 << layout.slot_bits
    carried = layout.unpack_masked([(t + m) % n for t, m in zip(layout._pack_unchecked(values),
                                                                 layout.pack_mask(masks))], length)
    assert layout.unmask(carried, masks)[:2] == [0, 1]


def test_masked_layout_still_unpacks_signed_sums(keys):
    """Headroom only widens the slot: the signed-digit API works unchanged on it."""
    pk, sk = keys
    layout = PackingLayout.for_fixed_point(pk, FixedPoint(16), 1.0, 1000, mask_bits=40)
    acc = PackedAccumulator.encrypt_fixed(layout, [0.5, -1.0, 0.25])
    acc += PackedAccumulator.encrypt_fixed(layout, [-0.75, -1.0, 1.0])
    assert acc.decrypt_fixed(sk) == [-0.25, -2.0, 1.25]


def test_encrypted_mask_round_trip(keys):
    pk, sk = keys
    layout = PackingLayout.for_key(pk, 17, 1000, mask_bits=40)
    vals = [65536, -65536, 3, -1, 0] * 5
    acc = PackedAccumulator.encrypt(layout, vals) + PackedAccumulator.encrypt(layout, vals)
    masks = layout.random_masks(len(vals))
    masked = [c + ENCRYPTION.encrypt(pk, m) for c, m in zip(acc.ciphertexts, layout.pack_mask(masks))]
    fields = layout.unpack_masked(sk.decrypt_many(masked), len(vals))
    assert fields != [2 * v for v in vals]
    assert layout.unmask(fields, masks) == [2 * v for v in vals]


@FAST
@given(vb=st.integers(1, 62), max_add=st.integers(1, 1 << 30), stat=st.sampled_from([0, 40]),
       rows=st.integers(1, 4), cols=st.integers(1, 60), data=st.data())
def test_pack_array_equals_pack(keys, vb, max_add, stat, rows, cols, data):
    pk, _ = keys
    try:
        layout = PackingLayout.for_key(pk, vb, max_add, mask_bits=stat)
    except PackingError:
        return
    weight = data.draw(st.integers(1, min(layout.capacity, 1 << 20)))
    lim = min(weight * layout.max_value, (1 << 62))
    values = data.draw(st.lists(st.lists(st.integers(-lim, lim), min_size=cols, max_size=cols),
                                min_size=rows, max_size=rows))
    got = layout.pack_array(np.array(values, dtype=np.int64), weight)
    expected = [p % pk.n for row in values for p in layout._pack_unchecked(row)]
    assert got == expected
    if weight == 1:
        assert got == [p for row in values for p in layout.pack(row)]


def test_pack_array_refuses_bad_input(keys):
    pk, _ = keys
    layout = PackingLayout.for_key(pk, 8, 10)
    assert layout.pack_array(np.zeros((0, 3), dtype=np.int64)) == []
    assert layout.pack_array(np.array([1, -2, 3])) == layout.pack([1, -2, 3])
    with pytest.raises(PackingOverflowError, match="row 1 value 2 "):
        layout.pack_array(np.array([[1, 2, 3], [1, 2, 256]]))
    assert layout.pack_array(np.array([[2550]]), weight=10) == layout.pack_array(np.array([[2550]]), weight=10)
    with pytest.raises(PackingOverflowError):
        layout.pack_array(np.array([[2551]]), weight=10)
    with pytest.raises(PackingOverflowError, match="capacity"):
        layout.pack_array(np.array([[1]]), weight=11)
    with pytest.raises(PackingError, match="integer array"):
        layout.pack_array(np.array([[0.5]]))
    with pytest.raises(PackingError, match="weight"):
        layout.pack_array(np.array([[1]]), weight=0)
