"""Paillier encryption (g = n + 1) with DJN randomness, CRT decryption and safe serialisation.

One module per concept: :mod:`.keys` (key pairs, encryption and decryption entry points),
:mod:`.validation` (what makes key material acceptable), :mod:`.keyfile` (key files),
:mod:`.ciphertext` (homomorphic arithmetic), :mod:`.framing` (ciphertexts as bytes, with a
checksum), :mod:`.encoding` (signed and fixed-point plaintexts), :mod:`.encryptor` (fixed-base
DJN encryption and the backend choice), :mod:`.pool` (offline randomness). Everything public
is re-exported here, so callers write ``from cryptoffload.crypto import paillier as pl``.

Key sizes: 2048-bit n by default (112-bit security); smaller keys are refused unless the caller
asks for a study size explicitly (``insecure_study_size=True``), e.g. the paper's 1024 bits.
See docs/crypto/paillier.md for measured costs and the file formats.
"""

from cryptoffload.crypto.paillier.ciphertext import Ciphertext, ciphertexts_from_bytes, ciphertexts_to_bytes
from cryptoffload.crypto.paillier.encoding import FixedPoint, decode_signed, encode_signed
from cryptoffload.crypto.paillier.encryptor import (BACKENDS, DEFAULT_MAX_TABLE_BYTES, DEFAULT_WINDOWS_BY_BITS,
                                                    Encryptor, default_window, resolve_backend,
                                                    table_bytes_estimate)
from cryptoffload.crypto.paillier.errors import (CiphertextFormatError, InvalidKeyError, KeyMismatchError,
                                                 PaillierError, PlaintextRangeError)
from cryptoffload.crypto.paillier.framing import CIPHERTEXT_MAGIC, CIPHERTEXT_VERSION
from cryptoffload.crypto.paillier.keyfile import (check_new_key_paths, key_from_dict, key_from_json, load_key,
                                                  save_key, save_keypair)
from cryptoffload.crypto.paillier.keys import (DEFAULT_KEY_BITS, FORMAT, FORMAT_VERSION, PrivateKey, PublicKey,
                                               field_checksum, generate_keypair, key_fingerprint)
from cryptoffload.crypto.paillier.pool import RandomnessPool
from cryptoffload.crypto.paillier.validation import (MAX_KEY_BITS, MIN_SECURE_KEY_BITS, MIN_STUDY_KEY_BITS,
                                                     check_key_bits)

__all__ = [
    "BACKENDS", "CIPHERTEXT_MAGIC", "CIPHERTEXT_VERSION", "DEFAULT_KEY_BITS", "DEFAULT_MAX_TABLE_BYTES",
    "DEFAULT_WINDOWS_BY_BITS", "FORMAT", "FORMAT_VERSION", "MAX_KEY_BITS", "MIN_SECURE_KEY_BITS",
    "MIN_STUDY_KEY_BITS", "Ciphertext", "CiphertextFormatError", "Encryptor", "FixedPoint", "InvalidKeyError",
    "KeyMismatchError", "PaillierError", "PlaintextRangeError", "PrivateKey", "PublicKey", "RandomnessPool",
    "check_key_bits", "check_new_key_paths", "ciphertexts_from_bytes", "ciphertexts_to_bytes", "decode_signed",
    "default_window", "encode_signed", "field_checksum", "generate_keypair", "key_fingerprint", "key_from_dict", "key_from_json",
    "load_key", "resolve_backend", "save_key", "save_keypair", "table_bytes_estimate",
]
