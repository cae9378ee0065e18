"""Calibration: run the real engines and crypto on this machine and write *measured* profiles.

Why a layer of its own: calibration drives engines (CPU processes, Dask workers, a GPU) and
writes what the simulator reads, so it sits above both ``engines/`` and ``sim/`` and below the
studies that use it. ``ciphers`` times the block ciphers of the FPGA-reconfiguration study,
``ckks`` the CKKS ops, serialisation and transfers of the BSGS study, ``gpu`` the Paillier
kernels on a GPU.
"""
