"""The public Python API: a small facade over the layers, for people who ``import`` rather than
type commands.

    from cryptoffload import paillier, ckks, he_cnn, study, plan

* :mod:`.paillier` -- keys, encryption of integers, floats (fixed point) and NumPy arrays,
  addition, sums, products by integers, decryption, ciphertext files that carry their bound;
* :mod:`.ckks` -- a CKKS backend by name, encrypted vectors with ``+``, ``-``, ``*`` and
  rotations, decryption;
* :mod:`.he_cnn` -- encrypted MNIST inference, with keys kept in a key folder between calls;
* :mod:`.study` -- running a study and reading its result;
* :mod:`.plan` -- the planners (BSGS on N devices, computational storage for N clients).

Why a facade of its own (``api/``, rank 8.5: above ``studies``, below ``cli``): the names a user
imports must stay put while the layers below are reorganised, and a facade over crypto, apps,
studies and policies can only live above all of them. The package root
(``cryptoffload/__init__.py``, rank 0) names these modules lazily (PEP 562): ``import
cryptoffload`` stays cheap and loads none of them until one is used.

Stability: the names in each module's ``__all__`` are the API; anything else (and every module
below ``api``) may change. Every function is typed (the package ships ``py.typed``), refuses bad
input with a :class:`~cryptoffload.errors.CryptoffloadError` naming the argument and the fix,
and follows the command line's rules: keys from the OS's randomness, at least 2048-bit Paillier
and 128-bit CKKS unless a study flag says otherwise, secrets in files only the user can read.
"""

from __future__ import annotations

__all__ = ["ckks", "he_cnn", "paillier", "plan", "study"]
