"""Builds the C++ kernels (flambeau_cpu._C).

Portable by default (any x86-64 CPU); FLAMBEAU_NATIVE_ARCH=1 tunes for this CPU. Release builds strip
the symbol table at link time (a third of the extension's size); FLAMBEAU_DEBUG_BUILD=1 keeps the
symbols and adds debug information, for gdb and perf.
"""
import os
import sys
from glob import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

# Compile the csrc/*.cpp files in parallel, one job per CPU (FLAMBEAU_BUILD_JOBS=N overrides).
ParallelCompile("FLAMBEAU_BUILD_JOBS", default=0).install()

# -fno-trapping-math lets the compiler turn NaN-aware selects into vector blends (no FP traps are used).
compile_args = ["-O3", "-fopenmp", "-fno-math-errno", "-fno-trapping-math"]
if os.environ.get("FLAMBEAU_NATIVE_ARCH") == "1":
    compile_args.append("-march=native")
link_args = ["-fopenmp"]
if sys.platform == "darwin":  # Apple clang has no -fopenmp without libomp
    compile_args.remove("-fopenmp")
    link_args = []
if os.environ.get("FLAMBEAU_DEBUG_BUILD") == "1":
    compile_args.append("-g")
elif sys.platform.startswith("linux"):
    link_args.append("-s")  # GNU ld and lld: drop .symtab; the exported .dynsym (PyInit__C) stays

ext = Pybind11Extension(
    "flambeau_cpu._C",
    sorted(os.path.join("csrc", f) for f in os.listdir("csrc") if f.endswith(".cpp")),
    include_dirs=["csrc"],
    # setuptools rebuilds only what changed: listing the headers makes a header edit rebuild the sources.
    depends=sorted(glob("csrc/*.h")),
    cxx_std=17,
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)

setup(ext_modules=[ext], cmdclass={"build_ext": build_ext})
