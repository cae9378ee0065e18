"""Model family: a web server encrypting on a reconfigurable FPGA (the fpga-reconfig study; Niwa
et al.).

* :mod:`.platform` -- host CPU + FPGA costs from the cited and measured cipher profiles.
* :mod:`.server` -- the readable SimPy reference model (``simulate_simpy``); in: a trace's
  arrays, ``ServerCosts``, a policy from ``policies/reconfig.py``; out: ``KernelResult``.
* :mod:`.fast` -- the same semantics as a numba loop (``run_kernel``), what the study runs; tests
  hold the two to identical latencies.
"""
