"""The keys in the RNS backends' public and secret contexts: which section holds which key, and
every key checked when read back (lengths, residues below their primes, steps in range).

Sections: ``public`` (the public key), ``relin``, ``galois`` (one key per step, the steps in the
header), ``conj``, the sparse-secret encapsulation's ``to_sparse`` (compact: over level 0's
primes and part of ``P``, :mod:`.sparse`) and ``sparse_to_dense`` (the header's
``ephemeral_weight`` says they are there), and in a secret context ``secret``. Evaluation keys
are public material: a server that bootstraps needs the encapsulation keys as it needs the
rotation keys; the ephemeral secret itself is never kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks.framing import KIND_SECRET, galois_steps
from cryptoffload.crypto.ckks.gpu import serial
from cryptoffload.crypto.ckks.gpu.kernelset import Array
from cryptoffload.crypto.ckks.gpu.keystore import KEY_DTYPE
from cryptoffload.crypto.ckks.gpu.scheme import SecretKey
from cryptoffload.crypto.ckks.gpu.sparse import SPARSE_TO_DENSE, Encapsulation, encapsulation_basis

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.backend import RnsCkksBackend


def sections(be: RnsCkksBackend, kind: int) -> tuple[JsonDict, list[tuple[str, bytes]]]:
    """The header and the sections of ``be``'s context of ``kind`` (public: no secret key)."""
    host, keys = be.scheme.ar.to_host, be._keys
    steps = sorted(be._galois.items())
    out = [("public", serial.residues_to_bytes(host(be._public_key())))]
    if "relin" in keys:
        out.append(("relin", serial.residues_to_bytes(host(keys.get("relin")))))
    if steps:
        out.append(("galois", b"".join(serial.residues_to_bytes(host(keys.get(("galois", k)))) for k, _ in steps)))
    if "conj" in keys:
        out.append(("conj", serial.residues_to_bytes(host(keys.get("conj")))))
    header: JsonDict = {"params": be.params.to_dict(), "galois": steps, "insecure_study": be.insecure_study}
    enc = be._encapsulation
    if enc is not None:
        header["ephemeral_weight"] = enc.weight
        out.append(("to_sparse", serial.residues_to_bytes(host(enc.to_sparse))))
        out.append((SPARSE_TO_DENSE, serial.residues_to_bytes(host(keys.get(SPARSE_TO_DENSE)))))
    if kind == KIND_SECRET:
        be._need_secret("secret_context")
        assert be._sk is not None
        out.append(("secret", serial.secret_to_bytes(be._sk.small)))
    return header, out


def load_keys(be: RnsCkksBackend, header: JsonDict, sec: dict[str, bytes], what: str) -> None:
    """Put the public and evaluation keys of a context into ``be`` (a fresh backend)."""
    ring = be.scheme.ring
    n, k, g = ring.n, ring.rows, len(ring.digits)

    def load(blob: bytes, shape: tuple[int, ...], name: str, q: np.ndarray = ring.q) -> Array:
        return be.xp.asarray(serial.residues_from_bytes(blob, shape, q, f"{what} ({name} key)"))

    be._pk = load(sec["public"], (2, k, n), "public")
    if "relin" in sec:
        be._keys.put("relin", load(sec["relin"], (g, 2, k, n), "relinearisation"))
    steps = galois_steps(header, what)
    if any(not 0 < st < be.slots for st, _ in steps):
        raise CkksError(f"malformed {what}: a Galois step is out of range")
    blob = sec.get("galois", b"")
    one = 4 * g * 2 * k * n
    if len(blob) != one * len(steps):
        raise CkksError(f"malformed {what}: {len(blob)} bytes of Galois keys for {len(steps)} steps")
    for i, (st, nm) in enumerate(steps):
        be._keys.put(("galois", st), load(blob[i * one: (i + 1) * one], (g, 2, k, n), nm), be.scheme.galois_elt(st))
        be._galois[st] = nm
    if "conj" in sec:
        be._keys.put("conj", load(sec["conj"], (g, 2, k, n), "conjugation"), be.scheme.conj_elt)
    weight = header.get("ephemeral_weight")
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 < weight <= n \
                or "to_sparse" not in sec or SPARSE_TO_DENSE not in sec:
            raise CkksError(f"malformed {what}: the sparse-secret encapsulation keys")
        basis = encapsulation_basis(ring)
        rows = np.concatenate([ring.data_rows(0), np.asarray(basis.special, dtype=np.int64)])
        compact = load(sec["to_sparse"], (len(basis.digits), 2, len(rows), n), "to_sparse",
                       ring.q[rows]).astype(KEY_DTYPE)
        be._encapsulation = Encapsulation(weight, basis, compact)
        be._keys.put(SPARSE_TO_DENSE, load(sec[SPARSE_TO_DENSE], (g, 2, k, n), "sparse_to_dense"))
    be._has_relin = "relin" in be._keys


def load_secret(be: RnsCkksBackend, blob: bytes, what: str) -> None:
    """The secret key of a secret context, checked against the public key already loaded."""
    ring = be.scheme.ring
    small = serial.secret_from_bytes(blob, ring.n)
    be._sk = SecretKey(small, be.scheme.small_to_ntt(small, np.arange(ring.rows)))
    if not be.scheme.is_key_pair(be._sk, be._public_key()):
        raise CkksError(f"serialised {what}: the secret key does not belong to the public key")
    be._has_secret = True
