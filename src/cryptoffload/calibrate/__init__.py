"""Calibration: run the real engines and crypto on this machine and write *measured* profiles.

Why a layer of its own: calibration drives engines (CPU processes, Dask workers, a GPU) and
writes what the simulator reads, so it sits above both ``engines/`` and ``sim/`` and below the
studies that use it.

What flows in and out: in, the machine itself (crypto from ``crypto/``, engines from
``engines/``) and a few options (repeats, parameters); out, a profile TOML (written atomically
by ``profiles.loader.write_profile``) whose every value carries how and where it was measured,
read back by ``sim/`` and the studies. ``ciphers``, ``ckks`` and ``gpu`` are the
``cryptoffload calibrate`` commands of the same names.

Modules:
  * ``ciphers`` -- software block-cipher throughput, for the fpga-reconfig study's host CPU
    (``calibrate_ciphers``; profile read by ``sim.reconfig.platform``).
  * ``ckks`` -- CKKS op costs, serialisation and Dask transfer costs, for the multi-device BSGS
    model (``calibrate_ckks``; profile read by ``sim.op_dag.DagCosts``).
  * ``gpu`` -- Paillier GPU kernels and host<->device copies (``calibrate_gpu``; profile read
    by ``sim.gpu``).
  * ``paillier_cores`` -- Paillier encryption on every core at once (a rate, no profile), for
    the paillier-offload study and the GPU benchmark.

Where to start reading: ``ciphers`` is the smallest complete example (measure, build values
with their sources, write); ``ckks`` follows the same steps with a Dask runner.
"""
