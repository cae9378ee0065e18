"""Every file of ``src/`` that is not a Python module (CUDA and C sources, profiles, weights)
reaches a wheel and a source distribution.

Why a test: the package reads these files at run time (NVRTC compiles ``paillier_gpu.cu`` and
``kernels.cu`` on first use, the studies load profiles) or compiles them at install
(``paillier_core.c``, ``paillier_gpu.cu`` through cffi). A file missing from ``package-data`` or
``MANIFEST.in`` works in a source checkout and fails only once installed -- on a GPU machine,
say. The check runs setuptools' own ``build_py`` (what a wheel holds besides the compiled
extensions) and ``sdist`` on a copy of the tree, with the package data read from
``pyproject.toml``; nothing is compiled, so it takes about a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# setuptools runs in a child process: it changes the working directory and prints freely
_BUILD = r"""
import os, sys, tomllib
from pathlib import Path
from setuptools import Distribution, find_packages

root, out = Path(sys.argv[1]), Path(sys.argv[2])
os.chdir(root)
cfg = tomllib.loads((root / "pyproject.toml").read_text())
where = cfg["tool"]["setuptools"]["packages"]["find"]["where"][0]
dist = Distribution({"name": cfg["project"]["name"], "version": cfg["project"]["version"],
                     "package_dir": {"": where}, "packages": find_packages(where),
                     "package_data": cfg["tool"]["setuptools"]["package-data"], "script_name": "setup.py"})
dist.get_command_obj("build_py").build_lib = str(out / "wheel")
dist.run_command("build_py")
dist.get_command_obj("egg_info").egg_base = str(out)
sdist = dist.get_command_obj("sdist")
sdist.dist_dir, sdist.formats = str(out / "sdist"), ["tar"]
dist.run_command("sdist")
"""


def _data_files() -> list[str]:
    """Tracked files under src/cryptoffload that are not Python modules (package-relative)."""
    listed = subprocess.run(["git", "ls-files", "src/cryptoffload"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return sorted(str(Path(p).relative_to("src")) for p in listed if not p.endswith(".py"))


def test_kernel_sources_and_data_reach_the_wheel_and_the_sdist(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "MANIFEST.in"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.egg-info"))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-c", _BUILD, str(tree), str(out)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    wheel = {str(p.relative_to(out / "wheel")) for p in (out / "wheel").rglob("*") if p.is_file()}
    (archive,) = (out / "sdist").iterdir()
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        sdist = {n.removeprefix(f"{top}/") for n in tar.getnames()}
    wanted = _data_files()
    assert "cryptoffload/crypto/_native/paillier_gpu.cu" in wanted   # the list is what it should be
    assert not [f for f in wanted if f not in wheel], "add these to pyproject.toml [tool.setuptools.package-data]"
    assert not [f for f in wanted if f"src/{f}" not in sdist], "add these to MANIFEST.in"
    # the sdist also carries what setup.py's cffi builds run
    assert {"setup.py", "pyproject.toml", "src/cryptoffload/crypto/_native/build_paillier_gpu.py"} <= sdist

