"""Native (C) arithmetic for Paillier, built by ``pip install`` through cffi.

The extension ``_paillier`` is optional at import time: when it is missing (a source checkout
that was never installed), :mod:`cryptoffload.crypto.paillier` falls back to gmpy2.
"""
