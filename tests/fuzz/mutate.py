"""Mutations of valid inputs: what a fuzzer does to a seed file.

Why structured and not only random bytes: random bytes are refused by the first magic-number
or JSON check, so the code behind it is never reached. A valid file with a few bytes flipped,
a range cut or repeated, a number replaced by an extreme one or a value two readers would parse
differently (``1_000``, Unicode digits, ``nan``, a 5,000-digit numeral) goes deeper: past the
checksum when the mutation is in the data, past the parser when it is in a number.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

#: numerals a reader might parse differently from what a writer meant, or that are extreme
NASTY_NUMBERS = [b"0", b"-0", b"-1", b"1e999", b"-1e999", b"nan", b"NaN", b"inf", b"-Infinity", b"1_000",
                 b"\xd9\xa1\xd9\xa2", b"\xef\xbc\x91", b"0x10", b"1e-400", b"9" * 5000, b"-" + b"9" * 400,
                 b"18446744073709551616", b"2147483648", b"4294967296", b"1.7976931348623157e309", b"",
                 b"true", b"null", b"[]", b"{}", b'"1"']
INTERESTING_BYTES = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x0D, 0x22, 0x2C, 0x5B, 0x7B, 0x5C]
_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _flip_bit(data: bytearray, draw: st.DrawFn) -> None:
    if data:
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= 1 << draw(st.integers(0, 7))


def _set_byte(data: bytearray, draw: st.DrawFn) -> None:
    if data:
        data[draw(st.integers(0, len(data) - 1))] = draw(st.sampled_from(INTERESTING_BYTES))


def _cut(data: bytearray, draw: st.DrawFn) -> None:
    if data:
        a = draw(st.integers(0, len(data) - 1))
        del data[a:a + draw(st.integers(1, max(1, len(data) - a)))]


def _repeat(data: bytearray, draw: st.DrawFn) -> None:
    if data:
        a = draw(st.integers(0, len(data) - 1))
        piece = data[a:a + draw(st.integers(1, 64))]
        data[a:a] = piece * draw(st.integers(1, 20))


def _insert(data: bytearray, draw: st.DrawFn) -> None:
    at = draw(st.integers(0, len(data)))
    data[at:at] = draw(st.binary(min_size=1, max_size=32))


def _truncate(data: bytearray, draw: st.DrawFn) -> None:
    del data[draw(st.integers(0, len(data))):]


def _number(data: bytearray, draw: st.DrawFn) -> None:
    spans = [m.span() for m in _NUMBER.finditer(bytes(data))][:4096]
    if spans:
        a, b = draw(st.sampled_from(spans))
        data[a:b] = draw(st.sampled_from(NASTY_NUMBERS))


MUTATIONS = [_flip_bit, _set_byte, _cut, _repeat, _insert, _truncate, _number, _number]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed with one to eight mutations, a splice of two seeds, or (one time in ten) random
    bytes."""
    kind = draw(st.integers(0, 9))
    if kind == 0 or not seeds:
        return draw(st.binary(max_size=2048))
    data = bytearray(draw(st.sampled_from(seeds)))
    if kind == 1 and len(seeds) > 1:
        other = draw(st.sampled_from(seeds))
        data = data[:draw(st.integers(0, len(data)))] + other[draw(st.integers(0, len(other))):]
    for _ in range(draw(st.integers(1, 8))):
        draw(st.sampled_from(MUTATIONS))(data, draw)
    return bytes(data)
