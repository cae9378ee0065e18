"""2. CKKS: a backend by name, encrypted vectors, products, rotations, sums, decryption.

Run from the repository root: ``.venv/bin/python docs/examples/2_ckks.py``. CKKS is
approximate: results are rounded before printing.
"""

from cryptoffload import ckks

ctx = ckks.context("seal")                                   # Microsoft SEAL, N = 8192, two levels
x = ctx.encrypt([1.0, 2.0, 3.0])
y = ctx.encrypt([0.5, 0.25, 2.0])
print((x * y).decrypt().round(3).tolist())                   # [0.5, 0.5, 6.0]
print((x + y).rotate(1).decrypt()[:2].round(3).tolist())     # [2.25, 5.0]
print((x * [2.0, 2.0, 2.0]).sum().decrypt().round(3).tolist())   # [12.0]

# A product uses one level; a fresh vector added to it is encrypted at its level and scale.
p = x * y
print(p.level, x.level)                                      # 1 2
q = p + ctx.encrypt([1.0, 1.0, 1.0], like=p)
print(q.decrypt().round(3).tolist())                         # [1.5, 1.5, 7.0]

# The same program on another backend: "emulator" is exact arithmetic, NOT encryption (tests).
emu = ckks.context("emulator")
print((emu.encrypt([1.0, 2.0]) * emu.encrypt([3.0, 4.0])).decrypt().round(6).tolist())   # [3.0, 8.0]
print(ckks.backends()[:2])                                   # ['seal', 'emulator']
