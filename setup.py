"""Extension list for the compiled core; metadata lives in pyproject.toml."""
import os
import subprocess
from glob import glob

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

TRACE = os.environ.get("ADSIM_TRACE") == "1"   # debug build: bounds checks and line tracing

directives = {
    "language_level": 3,
    "boundscheck": TRACE,
    "wraparound": TRACE,
    "cdivision": True,
    "initializedcheck": TRACE,
    "linetrace": TRACE,
}
macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
if TRACE:
    macros.append(("CYTHON_TRACE_NOGIL", "1"))

extensions = [
    Extension(
        path[:-4].replace(os.sep, "."),
        [path],
        include_dirs=[np.get_include()],
        define_macros=macros,
        extra_compile_args=["-O3"] if os.name != "nt" else [],
    )
    for path in sorted(glob(os.path.join("adsim", "**", "*.pyx"), recursive=True))
]

# GCC stops inlining in a unit once inlining has grown it by 40% (--param
# inline-unit-growth). adsim/_sweeps.pyx is a small unit of hot loops over
# the inline accessors of _opcodes.pxd (vptr, aptr, chain, ...): it reaches
# the cap and the accessors become calls in the per-op paths of scalar code.
# A higher cap keeps them inline, as they were when the sweeps shared one
# large unit with the rest of the core. (Clang has no such cap.)
GCC_ARGS = {"adsim._sweeps": ["--param=inline-unit-growth=100"]}


def is_gcc(command):
    try:
        out = subprocess.run([command, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "Free Software Foundation" in out and "clang" not in out


class BuildExt(build_ext):
    def build_extension(self, ext):
        if ext.name in GCC_ARGS and self.compiler.compiler_type == "unix" and \
                is_gcc(self.compiler.compiler_so[0]):
            ext.extra_compile_args = list(ext.extra_compile_args) + GCC_ARGS[ext.name]
        super().build_extension(ext)


setup(ext_modules=cythonize(extensions, compiler_directives=directives),
      cmdclass={"build_ext": BuildExt})
