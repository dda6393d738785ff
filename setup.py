"""Extension list for the compiled core; metadata lives in pyproject.toml."""
import os
from glob import glob

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

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

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
