"""Model family: in-storage computing for an HE CNN (the isc-he-cnn study; Suzuki and Yamana).

* :mod:`.fpga_cost` -- seconds per CKKS op per level on the FPGA (HEAX figures).
* :mod:`.program_steps` -- an ``HEProgram`` compiled into steps (compute, bytes fetched, DRAM
  allocated/freed) and the prefetch gates.
* :mod:`.platform` -- the FPGA-only / FPGA&SSD / CSD platform presets.
* :mod:`.simulation` -- ``simulate``: the compiled program on ``k`` boards of a platform; out:
  ``IscRun`` (latency per inference, makespan, DRAM peak and occupancy).
* :mod:`.world` -- the program, costs and platforms loaded once: what the study and the capacity
  planner (``policies/isc_plan.py``) both start from.

Built on the shared core: ``devices``, ``links``, ``device_dram`` and ``storage``.
"""
