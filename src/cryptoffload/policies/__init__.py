"""Decisions (layer 6): one interface each for the simulator and the real runtime.

What flows in and out: request traces and op-DAG shapes (``workloads/``), cost profiles
(``profiles/``) and the simulators' or the engines' state in; a decision out -- which cipher
circuit to load next, which BSGS split and baby-step size, how many devices -- used by the
simulators (``sim/``) and by the studies that compare the paper's policy with ours.

Modules:

* FPGA reconfiguration (Niwa, Maeda and Yamaguchi): :mod:`.reconfig` -- the policies
  (software or FPGA, when to reconfigure); **start here**; :mod:`.ngram` -- the request
  prediction they use; :mod:`.interval_tuner` -- the prediction interval chosen on history.
* Multi-device BSGS: :mod:`.bsgs_tuner` -- the split and baby-step size for N devices, searched
  on the op-DAG cost model; :mod:`.bsgs_plan` -- the capacity plan built on it.
* CKKS bootstrap plans: :mod:`.bootstrap_plan` -- the level budget and baby steps (OpenFHE's
  ``EvalBootstrapSetup`` knobs, a :class:`~cryptoffload.crypto.ckks.bootstrap.BootstrapPlan`)
  for a ring, a modulus and N devices; **start here**; :mod:`.bootstrap_model` -- a plan priced
  (stages on the op DAG, EvalMod); :mod:`.bootstrap_costs` -- the per-level op costs it reads;
  :mod:`.bootstrap_plan_report` -- its tables and JSON.
* In-storage HE-CNN: :mod:`.isc_plan` -- how many computational-storage devices, and how much
  NAND, for M clients.
"""
