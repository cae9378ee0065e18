"""Constant-time CRT decryption for one Paillier private key on one device.

The kernel (``crt_decrypt`` in ``paillier_gpu.cu``) runs the exponentiations, the exact
divisions and the recombination as fixed sequences of Montgomery products with masked
corrections; the private key's words (layout ``DecLayout``) live on the device while a
:class:`GpuDecryptor` is open and are overwritten with zeros when it closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from cryptoffload.crypto._native.gpu_runtime import DeviceWords, Runtime, Stream, width_for_bits
from cryptoffload.crypto.paillier_gpu.limbs import check_range, context_words, from_limbs, number_words, to_limbs
from cryptoffload.crypto.paillier_gpu.modulus import stream_or_new
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PrivateKey


def _l_inverse(x: int, g: int) -> int:
    """hx = L_x(g^(x-1) mod x^2)^-1 mod x (x = p or q, g = n + 1)."""
    x2 = x * x
    return pow((pow(g, x - 1, x2) - 1) // x, -1, x)


def private_key_blob(p: int, q: int) -> tuple[np.ndarray, int]:
    """The words ``crt_decrypt`` reads for factors p < q (layout: DecLayout in
    ``paillier_gpu.cu``) and the kernel width NP (limbs of p^2 and q^2)."""
    if not 2 < p < q:
        raise ConfigError("the GPU decryptor needs the factors with p < q")
    np_ = width_for_bits(q.bit_length() * 2)
    h = np_ // 2
    g = p * q + 1
    rn, rh = 1 << (32 * np_), 1 << (32 * h)
    parts: list[np.ndarray] = []
    for x in (p, q):
        x2 = x * x
        parts += [context_words(x2, np_), number_words(pow(rn, 3, x2), np_), number_words(x - 1, h),
                  context_words(x, h), number_words(pow(x, -1, rh), h),
                  number_words(_l_inverse(x, g) * rh % x, h)]
    parts.append(number_words(pow(p, -1, q) * rh % q, h))
    parts.append(np.array([max(p.bit_length(), q.bit_length())], dtype=np.uint32))
    return np.concatenate(parts), np_


class GpuDecryptor:
    """CRT decryption with one private key resident on the device (never logged; the repr
    shows only the key size) until :meth:`close` (also a context manager, and run when the
    object is collected), which overwrites the device copy with zeros before its memory goes
    back to the device's pool. The host-side words are zeroed as soon as they are uploaded."""

    def __init__(self, private_key: PrivateKey, runtime: Runtime) -> None:
        self.runtime = runtime
        self.public_key = private_key.public_key
        blob, self.width = private_key_blob(private_key.p, private_key.q)
        s = runtime.stream()
        try:
            self._key: DeviceWords | None = runtime.upload_secret(blob, s)
        finally:
            blob.fill(0)

    def __repr__(self) -> str:
        return f"GpuDecryptor(bits={self.public_key.bits}, device={self.runtime.device})"

    def close(self) -> None:
        """Zero the private key on the device and drop it; decryption is refused afterwards."""
        key, self._key = getattr(self, "_key", None), None
        if key is not None:
            self.runtime.wipe(key, self.runtime.stream())

    def __enter__(self) -> "GpuDecryptor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the device may be gone already
            pass

    def decrypt_device(self, cts: DeviceWords, count: int, stream: Stream) -> DeviceWords:
        """Plaintexts (width limbs each) of ``count`` ciphertexts on the device (2 width limbs
        each, every one < n^2)."""
        if self._key is None:
            raise ConfigError("this GpuDecryptor is closed (its private key was wiped)")
        out = self.runtime.empty((self.width, count), stream)
        self.runtime.launch("crt_decrypt", self.width, count, (count, cts, self._key, out), stream)
        return out

    def decrypt(self, cts: Sequence[int], stream: Stream | None = None) -> list[int]:
        values = check_range(cts, self.public_key.nsquare, "ciphertexts")
        if not values:
            return []
        rt, s = self.runtime, stream_or_new(self.runtime, stream)
        out = self.decrypt_device(rt.upload(to_limbs(values, 2 * self.width), s), len(values), s)
        return from_limbs(rt.download(out, s))
