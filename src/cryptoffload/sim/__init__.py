"""The simulator: models of devices and links that answer "what if" for hardware we do not
have (FPGAs, CSDs, QAT cards, SmartNICs, several CKKS devices), driven by profiles.

What flows in and out: a model takes a *workload* (a request ``Trace`` or an HE program or BSGS
``OpDag`` from ``workloads/``), a *platform* or cost table built from a profile
(``profiles/*.toml``: cited, fitted, or measured by ``calibrate/``), and for the request
models a *policy* (``policies/``); it returns plain result dataclasses (latencies, busy times,
makespans) that a study in ``studies/`` turns into tables. Nothing here imports ``engines/``
(its peer) or anything above.

Where to start reading
----------------------
1. :mod:`.core` -- the ``Simulation`` (SimPy environment, seeded generator, ``Metrics``) and the
   ``Accounted`` protocol every resource reports through.
2. :mod:`.devices` and :mod:`.links` -- the two resources everything is built from: a FIFO
   server (``FifoDevice``, and ``ReconfigurableDevice`` with slots) and a fairly shared link
   (``SharedLink``, exact processor sharing).
3. :mod:`.protocols` -- the vocabulary's ``Device`` and ``Link`` as typing protocols, and the
   ``DeviceAccount`` a model that is not SimPy gives of its devices.
4. Then the model of the study you care about (below); each module's docstring says why it is
   shaped as it is.

What is where, by study
-----------------------
Building blocks (any study):
  * ``core`` -- simulation, metrics, latency statistics.
  * ``devices`` -- FIFO and reconfigurable devices. ``links`` -- shared links.
  * ``protocols`` -- Device / Link protocols, ``DeviceAccount``.
  * ``device_dram`` -- a device's DRAM: capacity, reservations that wait for room, occupancy.
  * ``storage`` -- NAND flash, SSDs, PCIe lanes (links).

fpga-reconfig (web server encrypting on a reconfigurable FPGA; Niwa et al.):
  * ``reconfig_platform`` -- host CPU + FPGA costs from the cited and measured cipher profiles.
  * ``reconfig_server`` -- the readable SimPy reference model (``simulate_simpy``); in: a trace's
    arrays, ``ServerCosts``, a policy from ``policies/reconfig``; out: ``KernelResult``.
  * ``reconfig_fast`` -- the same semantics as a numba loop (``run_kernel``), what the study
    runs; tests hold the two to identical latencies.

bsgs-multidevice (a BSGS product split over devices):
  * ``op_dag`` -- ``DagCosts`` from a profile and ``schedule``: list scheduling of a
    ``workloads.bsgs.OpDag`` on devices joined by full-duplex ports; out: ``Schedule``
    (start/end per op, makespan, busy per device, bytes moved). Checked against real Dask runs
    (``engines/bsgs_run``).

isc-he-cnn (in-storage computing for an HE CNN; Suzuki and Yamana):
  * ``fpga_cost`` -- seconds per CKKS op per level on the FPGA (HEAX figures).
  * ``program_steps`` -- an ``HEProgram`` compiled into steps (compute, bytes fetched, DRAM
    allocated/freed) and the prefetch gates.
  * ``isc_platform`` -- the FPGA-only / FPGA&SSD / CSD platform presets.
  * ``isc_simulation`` -- ``simulate``: the compiled program on ``k`` boards of a platform;
    out: ``IscRun`` (latency per inference, makespan, DRAM peak and occupancy).

paillier-offload (Paillier on a QAT card; Zhou and Hua, QHCS):
  * ``qat_params`` -- the model's inputs, each derived from a cited or measured source.
  * ``qat_card`` -- the card: engines behind a bounded request/response ring pair.
  * ``qat`` -- the client modes driving the card (``simulate_mode``, ``simulate_all``).
  * ``qat_fit`` -- the three values no source gives, each fitted to one figure.

tls-offload (TLS offload to a SmartNIC; Miyakawa et al.):
  * ``smartnic`` -- ``TlsCostModel``: CPU seconds, delay and wire bytes per request per mode.
  * ``tls_node`` -- a management node (cores + the NIC's link) serving a Poisson stream, and
    the clients-per-core planner.

gpu (Paillier batches on a GPU, from a measured profile):
  * ``gpu`` -- ``GpuDevice`` (copy in, kernel, copy out) and ``simulate_batches``.
"""
