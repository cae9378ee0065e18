"""The mathematics of the project (layer 2): encryption that really runs, no scheduling.

What flows in and out: integers, byte strings and numpy vectors in; ciphertexts, keys and
serialised frames out. The layers above call this package -- the engines (``engines/``) run its
Paillier arithmetic in batches, ``calibrate/`` times it, ``workloads/`` records CKKS programs
on its recording backend, the apps (``apps/ridge``, ``apps/he_cnn``) build protocols on it --
and it imports only ``profiles/`` and the base library.

Map (one concept per module):

* :mod:`.paillier` -- Paillier with DJN randomness: keys, fixed-base encryption, CRT
  decryption, ciphertext arithmetic and files. **Start here** (its ``__init__`` names each
  module); :mod:`.paillier.djn` is the formula itself, on bare integers.
* :mod:`.packing` -- several signed fixed-point values packed into one Paillier plaintext
  (the ridge protocol's records).
* :mod:`.paillier_gpu` -- the same Paillier integers computed by GPU kernels (CUDA, or their
  CPU twin), written against :mod:`._native.gpu_interface`.
* :mod:`._native` -- the C core (GMP, AVX512-IFMA through crypto_mb) and the CUDA kernels with
  their CPU twin, built by ``pip install`` through cffi; optional, with gmpy2 behind it.
  :mod:`.native` is what other packages and the tests may use of it (probes, GPU runtimes).
* :mod:`.ckks` -- CKKS behind one interface (SEAL, OpenFHE, a GPU, an exact emulator, a
  recording backend) and the BSGS kernel written once against it; its ``__init__`` has the map.
* :mod:`.ciphers` -- the ten block ciphers of the FPGA-reconfiguration paper, really run
  (OpenSSL through ``cryptography``, libgcrypt through :mod:`._gcrypt`), for calibration.
* :mod:`.baselines` -- other Paillier implementations (python-paillier, IPCL-style) run
  in-process, for ratios; :mod:`.phe_interop` -- keys and ciphertexts to and from
  python-paillier.
"""
