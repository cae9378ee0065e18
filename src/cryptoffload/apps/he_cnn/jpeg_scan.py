"""The entropy-coded data of a sequential (baseline) JPEG scan, walked code by code without
decoding pixels: it must code exactly the blocks its frame header declares.

Why: libjpeg, under Pillow, decodes whatever it is given. A scan that runs out of data early (a
header that declares more rows than the file holds), a Huffman code no table defines, or bytes
left over after the last block are only warnings to it, and the picture comes back -- padded
with grey, or garbled -- as if it were whole. Walking the Huffman codes is how a reader can
tell (JPEG has no checksum); it costs one pass over the compressed bytes, compiled by numba.

What it cannot see: a flipped bit that turns one valid code into another of the same length,
or changes a coefficient's magnitude bits, decodes to a slightly different picture, and no
reader of JPEG can tell it from the original.

Tables come from :func:`huffman_table` (the canonical codes of a ``DHT`` table, refused when
its counts are not a prefix code); :func:`check_interval` walks one restart interval.
"""

from __future__ import annotations

import numba
import numpy as np

#: the result of :func:`check_interval` when a code is in no table, or a block has more than 64
#: coefficients
BAD_CODE = -1
#: the result when the data ends before the last block
SHORT = -2


def huffman_table(counts: bytes, values: bytes) -> np.ndarray:
    """A ``DHT`` table as an array for :func:`check_interval`: row 0 the largest code of each
    length (``-1`` none), row 1 the index of its first value, row 2 its smallest code, row 3
    the values. Raises ``ValueError`` when the counts overflow a code length (not a prefix code)."""
    table = np.full((4, 256), -1, dtype=np.int64)
    table[3, :len(values)] = np.frombuffer(values, dtype=np.uint8)
    code, index = 0, 0
    for length in range(1, 17):
        n = counts[length - 1]
        if n:
            table[1, length] = index
            table[2, length] = code
            code += n
            index += n
            table[0, length] = code - 1
            if code >= 1 << length:  # libjpeg's rule: the codes fit, and none is all ones
                raise ValueError(f"its Huffman table has more codes of {length} bits than fit")
        code <<= 1
    return table


@numba.njit(cache=True)
def _decode(data: np.ndarray, nbits: int, pos: int, table: np.ndarray) -> tuple[int, int]:
    """One Huffman code at bit ``pos``: (its value, the bit after it), or (BAD_CODE/SHORT, pos)."""
    code = 0
    for length in range(1, 17):
        if pos >= nbits:
            return SHORT, pos
        code = (code << 1) | ((data[pos >> 3] >> (7 - (pos & 7))) & 1)
        pos += 1
        if table[0, length] >= 0 and code <= table[0, length]:
            return table[3, table[1, length] + code - table[2, length]], pos
    return BAD_CODE, pos


@numba.njit(cache=True)
def _block(data: np.ndarray, nbits: int, pos: int, dc: np.ndarray, ac: np.ndarray) -> int:
    """The bit after one 8 x 8 block's codes, or BAD_CODE/SHORT."""
    size, pos = _decode(data, nbits, pos, dc)
    if size < 0:
        return size
    if size > 11:
        return BAD_CODE
    pos += size
    k = 1
    while k < 64:
        rs, pos = _decode(data, nbits, pos, ac)
        if rs < 0:
            return rs
        run, size = rs >> 4, rs & 15
        if size == 0:
            if run != 15:
                break  # end of block
            k += 16
            continue
        if size > 10:
            return BAD_CODE
        k += run + 1
        pos += size
    if k > 64:
        return BAD_CODE
    return pos if pos <= nbits else SHORT


@numba.njit(cache=True)
def check_interval(data: np.ndarray, mcus: int, dc_of_block: np.ndarray, ac_of_block: np.ndarray,
                   dc_tables: np.ndarray, ac_tables: np.ndarray) -> int:
    """Walk ``mcus`` MCUs of one restart interval (``data``: its bytes with the stuffed zero
    after each 0xFF removed). Block ``b`` of an MCU uses DC table ``dc_of_block[b]`` and AC table
    ``ac_of_block[b]``. Returns the number of bits the codes use, or BAD_CODE or SHORT."""
    nbits = data.size * 8
    pos = 0
    for _ in range(mcus):
        for b in range(dc_of_block.size):
            pos = _block(data, nbits, pos, dc_tables[dc_of_block[b]], ac_tables[ac_of_block[b]])
            if pos < 0:
                return pos
    return pos
