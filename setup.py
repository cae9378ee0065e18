"""Only here to hand the cffi extension to setuptools; everything else is in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["src/cryptoffload/crypto/_native/build_paillier.py:ffibuilder"])
