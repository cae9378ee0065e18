"""1. Paillier: keys, integers, floats (fixed point), NumPy arrays, sums, ciphertext files.

Run from the repository root: ``.venv/bin/python docs/examples/1_paillier.py``. Every ``print``
is followed by what it prints (``tests/docs/test_examples.py`` checks it).
"""

import numpy as np

from cryptoffload import paillier

keys = paillier.keygen()                                     # 2048 bits, primes from the OS's randomness
a = paillier.encrypt(keys.public, [5, -17, 100])
b = paillier.encrypt(keys.public, [1, 2, 3])
print(paillier.decrypt(keys.private, a + b))                 # [6, -15, 103]
print(paillier.decrypt(keys.private, paillier.sum(a)))       # [88]
prices = paillier.encrypt(keys.public, np.array([1.25, -0.5]))   # floats: fixed point, 2^-32
print(paillier.decrypt_array(keys.private, prices * 4))      # [ 5. -2.]

# Every Encrypted carries the bound of its plaintexts (2^64 unless told), and arithmetic that
# could pass the key's limit n/3 is refused before it runs -- never a wrapped, wrong number.
small = paillier.encrypt(keys.public, [7, 8], bound=10)
print(small.bound, (small + small).bound)                    # 10 20
try:
    small * 2**2045                                          # the result could reach 10 x 2^2045 > n/3
except paillier.PlaintextRangeError:
    print("refused")                                         # refused

# A 2-D array keeps its shape; decimals in fixed point with the bits you choose.
grid = paillier.encrypt(keys.public, np.array([[0.5, 1.0], [1.5, 2.0]]), fixed_point=16)
print(paillier.decrypt_array(keys.private, grid + grid).tolist())  # [[1.0, 2.0], [3.0, 4.0]]

# Ciphertext files: the command line's format (key fingerprint, bound, checksum), so
# `cryptoffload paillier add/sum/mul/decrypt` read them -- and the other way round.
paillier.save_keys(keys, "example.key")                      # example.key (0600) and example.key.pub
paillier.save(a, "a.bin")
print(paillier.decrypt(keys.private, paillier.load(paillier.load_key("example.key.pub"), "a.bin")))  # [5, -17, 100]
