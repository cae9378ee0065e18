"""Baselines the Paillier benchmark runs beside ours, in the same process and on the same core.

* a plain gmpy2 fixed-base comb: h_s^a from a table of h_s^(d 2^(w i)) with gmpy2 products,
  variable time (the table lookup follows the exponent) -- what a short script gets;
* OpenSSL's constant-time exponentiation ``BN_mod_exp_mont_consttime`` through ctypes on the
  libcrypto that ``cryptography`` and the system use (no table: one exponentiation each);
* a gmpy2 CRT decryption (``powmod``, variable time), beside phe's.

Why here and not in the package: these exist only to be measured against.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Sequence

import gmpy2


class GmpyComb:
    """h^a mod m for a-bit exponents from k = ceil(bits / w) windows of 2^w gmpy2 values."""

    def __init__(self, h: int, m: int, exp_bits: int, w: int = 8) -> None:
        self.m, self.w = gmpy2.mpz(m), w
        self.k = -(-exp_bits // w)
        base = gmpy2.mpz(h)
        self.table = []
        for _ in range(self.k):
            row = [gmpy2.mpz(1)]
            for _ in range((1 << w) - 1):
                row.append(row[-1] * base % self.m)
            self.table.append(row)
            base = gmpy2.powmod(base, 1 << w, self.m)

    def pow(self, a: int) -> int:
        mask, acc, m = (1 << self.w) - 1, gmpy2.mpz(1), self.m
        for i, row in enumerate(self.table):
            acc = acc * row[(a >> (i * self.w)) & mask] % m
        return int(acc)


class OpensslConstTime:
    """``BN_mod_exp_mont_consttime(base, e, m)`` with a Montgomery context kept per modulus."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("crypto")
        if name is None:
            raise OSError("libcrypto not found")
        lib = ctypes.CDLL(name)
        vp = ctypes.c_void_p
        for fn, res, args in (("BN_new", vp, []), ("BN_CTX_new", vp, []), ("BN_MONT_CTX_new", vp, []),
                              ("BN_bin2bn", vp, [ctypes.c_char_p, ctypes.c_int, vp]),
                              ("BN_bn2binpad", ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_int]),
                              ("BN_MONT_CTX_set", ctypes.c_int, [vp, vp, vp]),
                              ("BN_set_flags", None, [vp, ctypes.c_int]),
                              ("BN_mod_exp_mont_consttime", ctypes.c_int, [vp] * 6),
                              ("OpenSSL_version", ctypes.c_char_p, [ctypes.c_int])):
            getattr(lib, fn).restype = res
            getattr(lib, fn).argtypes = args
        self.lib = lib
        self.ctx = lib.BN_CTX_new()
        self.version = lib.OpenSSL_version(0).decode()
        self._mods: dict[int, tuple[int, int, int]] = {}
        self._r = lib.BN_new()

    def _bn(self, x: int, bn: int | None = None) -> int:
        data = x.to_bytes(max(1, (x.bit_length() + 7) // 8), "big")
        return self.lib.BN_bin2bn(data, len(data), bn)

    def powm(self, base: int, e: int, m: int) -> int:
        if m not in self._mods:
            mod, mont = self._bn(m), self.lib.BN_MONT_CTX_new()
            self.lib.BN_MONT_CTX_set(mont, mod, self.ctx)
            self._mods[m] = (mod, mont, self.lib.BN_new())
        mod, mont, ebn = self._mods[m]
        self._bn(e, ebn)
        self.lib.BN_set_flags(ebn, 4)   # BN_FLG_CONSTTIME
        b = self._bn(base % m)
        if not self.lib.BN_mod_exp_mont_consttime(self._r, b, ebn, mod, self.ctx, mont):
            raise RuntimeError("BN_mod_exp_mont_consttime failed")
        size = (m.bit_length() + 7) // 8
        buf = ctypes.create_string_buffer(size)
        self.lib.BN_bn2binpad(self._r, buf, size)
        return int.from_bytes(buf.raw, "big")


def crt_decrypt(values: Sequence[int], p: int, q: int, powm) -> list[int]:
    """Paillier CRT decryption (g = n + 1) with ``powm(base, e, m)`` for the two halves."""
    p2, q2, n = p * p, q * q, p * q
    hp = pow((powm(n + 1, p - 1, p2) - 1) // p, -1, p)
    hq = pow((powm(n + 1, q - 1, q2) - 1) // q, -1, q)
    pinv = pow(p, -1, q)
    out = []
    for c in values:
        mp = (powm(c % p2, p - 1, p2) - 1) // p * hp % p
        mq = (powm(c % q2, q - 1, q2) - 1) // q * hq % q
        out.append(mp + p * ((mq - mp) * pinv % q))
    return out


class EarlierCore:
    """An earlier build of the native core (``_paillier.*.so``), loaded beside the current
    one, so a change to the core is measured before/after in the same run. Uses only entry
    points whose signatures did not change (fixed-base tables, CRT decryption)."""

    def __init__(self, path: str) -> None:
        import importlib.machinery
        import importlib.util

        loader = importlib.machinery.ExtensionFileLoader("_paillier", path)
        spec = importlib.util.spec_from_file_location("_paillier", path, loader=loader)
        if spec is None:
            raise OSError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        self.ffi, self.lib = module.ffi, module.lib

    def _words(self, values: Sequence[int], words: int):
        return self.ffi.from_buffer("uint64_t[]", b"".join(v.to_bytes(8 * words, "little") for v in values))

    def table(self, base: int, m: int, n: int, exp_bits: int, w: int, ct: bool, backend: int):
        N, nn, ew = -(-m.bit_length() // 64), -(-n.bit_length() // 64), -(-exp_bits // 64)
        ptr = self.lib.copl_fb_new(self._words([base], N), self._words([m], N), N, self._words([n], nn), nn,
                                   exp_bits, w, int(ct), backend)
        if ptr == self.ffi.NULL:
            raise RuntimeError("the earlier core refused the table")
        ptr = self.ffi.gc(ptr, self.lib.copl_fb_free)

        def encrypt(msgs: Sequence[int], exps: Sequence[int]) -> bytes:
            out = self.ffi.new("uint64_t[]", len(msgs) * N)
            self.lib.copl_fb_encrypt(ptr, len(msgs), self._words(msgs, nn), self._words(exps, ew), ew, out)
            return bytes(self.ffi.buffer(out))
        return encrypt

    def decryptor(self, p: int, q: int, backend: int):
        pw = -(-p.bit_length() // 64)
        ptr = self.ffi.gc(self.lib.copl_dec_new(self._words([p], pw), self._words([q], pw), pw), self.lib.copl_dec_free)
        N = 4 * pw

        def decrypt(values: Sequence[int]) -> bytes:
            out = self.ffi.new("uint64_t[]", len(values) * 2 * pw)
            if self.lib.copl_dec_batch(ptr, len(values), self._words(values, N), out, backend) != 0:
                raise RuntimeError(f"the earlier core refused decryption backend {backend}")
            return bytes(self.ffi.buffer(out))
        return decrypt
