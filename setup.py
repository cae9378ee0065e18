"""Only here to hand the cffi extensions to setuptools; everything else is in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=[
    "src/cryptoffload/crypto/_native/build_paillier.py:ffibuilder",
    # the GPU kernels' CPU twin (paillier_gpu.cu compiled by g++; needs no GPU and no CUDA)
    "src/cryptoffload/crypto/_native/build_paillier_gpu.py:ffibuilder",
])
