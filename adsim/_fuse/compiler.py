"""Compile generated C into a shared library, cached by its text.

The system's C compiler (``$CC``, else ``cc``) builds each source for this
processor (``-march=native``, so the element loops use its widest vectors)
without contracting ``a * b + c`` into fused multiply-adds, which would round
differently from the interpreter (flags below; the options are GCC's and
Clang's). Libraries are kept in a cache directory
(``$ADSIM_KERNEL_CACHE``, else ``~/.cache/adsim/kernels``), named by a hash
of the source, of the header it includes (the rules of _elementwise.h), the
compiler's command and version and the processor's features: a cache
shared by different machines never hands one a library built for another,
nor a new adsim a library built with older rules. A library is written
under a temporary name and renamed, so concurrent processes never load a
half-written file.
"""
import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from ..errors import NoCompiler

# -fno-trapping-math lets the element loops compute both sides of chain()'s
# select (floating-point exception flags are not read); -fno-tree-pre keeps
# x[j + 1] of one slice and x[j] of another from becoming a value carried
# from one element to the next, which stops the loops from vectorising
# (-fno-tree-dominator-opts: the same, in the larger loops of second-order sweeps).
FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
         "-fno-tree-pre", "-fno-tree-dominator-opts", "-fPIC", "-shared")
# glibc's vector math functions (see codegen.VECTOR_MATH), tried first where
# they may exist; a compiler or glibc without them builds without
VECTOR_MATH = ("-DADSIM_VECTOR_MATH", "-lmvec")
_HEADERS = Path(__file__).resolve().parent.parent      # adsim/, where _elementwise.h is


def compiler_command():
    return os.environ.get("CC") or "cc"


@lru_cache(maxsize=None)
def _identity(command):
    """What the cache key needs to know about the compiler and processor."""
    path = shutil.which(command.split()[0])
    if path is None:
        raise NoCompiler(f"no C compiler found ({command!r}; set CC to choose one)")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise NoCompiler(f"the C compiler {command!r} does not run: {exc}") from None
    features = platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            features += next((line for line in info if line.startswith(("flags", "Features"))), "")
    except OSError:
        features += platform.processor()
    return version + features


@lru_cache(maxsize=None)
def _header_text():
    """The rules the generated source includes (_elementwise.h): part of the
    key, so that a changed rule never loads a library built with the old one."""
    return (_HEADERS / "_elementwise.h").read_text()


def cache_dir():
    path = os.environ.get("ADSIM_KERNEL_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "adsim", "kernels")
    return Path(path)


def _writable_cache():
    path = cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="adsim-kernels-"))


def library_name(source, command):
    """The cached library's file name: a hash of everything it is built from."""
    key = hashlib.sha256("\0".join([source, _header_text(), command, " ".join(FLAGS),
                                    _identity(command)]).encode()).hexdigest()[:32]
    return f"run_{key}.so"


def build(source):
    """A loaded library of ``source`` (ctypes.CDLL), compiled on first use."""
    command = compiler_command()
    directory = _writable_cache()
    library = directory / library_name(source, command)
    if not library.exists():
        extras = [VECTOR_MATH, ()] if _may_have_vector_math() else [()]
        for i, extra in enumerate(extras):
            try:
                _compile(command, source, directory, library, extra)
                break
            except NoCompiler:
                if i == len(extras) - 1:
                    raise
    return ctypes.CDLL(str(library))


def _may_have_vector_math():
    libc, version = platform.libc_ver()
    return platform.system() == "Linux" and platform.machine() == "x86_64" and libc == "glibc" \
        and tuple(int(p) for p in version.split(".")[:2]) >= (2, 35)


def _compile(command, source, directory, library, extra=()):
    fd, c_path = tempfile.mkstemp(suffix=".c", dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write(source)
    partial = c_path[:-2] + ".so.part"
    try:
        done = subprocess.run(command.split() + list(FLAGS) + [f"-I{_HEADERS}", "-o", partial,
                                                                c_path, *extra, "-lm"],
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise NoCompiler(f"the C compiler {command!r} failed on a fused run:\n"
                             f"{done.stderr[-2000:]}")
        os.replace(partial, library)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NoCompiler(f"the C compiler {command!r} did not run: {exc}") from None
    finally:
        for path in (c_path, partial):
            try:
                os.unlink(path)
            except OSError:
                pass


def address(library, name):
    """The address of function ``name`` in ``library``."""
    return ctypes.cast(getattr(library, name), ctypes.c_void_p).value
