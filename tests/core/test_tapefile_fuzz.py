"""Randomly damaged and altered tape files, in a child process (a crash of the
interpreter fails the test instead of ending the session; its address
space is capped, so that a file claiming a huge program meets MemoryError).

* Damaged files (bit flips, truncations, junk appended, random bytes, bogus
  length fields): every one is refused with TapeFileError.
* Altered payloads with a recomputed digest (what a hostile writer can
  make: bit flips, truncations, bogus counts, random bytes, altered
  constants and branch outcomes): loading raises TapeFileError or gives a
  tape, and every replay of such a tape returns or raises a Python
  exception; none crashes.
"""
import subprocess
import sys
import textwrap

import pytest
from paths import TESTS


FUZZ = textwrap.dedent(r"""
    import resource, struct, sys
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    import numpy as np
    import adsim as ad
    from adsim import tapefile
    from adsim.errors import TapeFileError
    from tapefile_bytes import layout, resign, sections

    cube = ad.primitive(lambda x: x ** 3, jvp=lambda a, o, t: 3 * a[0] ** 2 * t[0],
                        vjp=lambda a, o, w: (3 * a[0] ** 2 * w,), name="fuzz.cube")

    def plain(x):
        y = np.sin(x) * x[::-1]
        y[1:3] = x[:2] ** 2
        return np.sum(np.where(x > 0.5, y, 2.0 * y)) + np.max(x) + x @ x + np.sum(cube(x))

    def step(z, p):
        return z + 0.1 * np.sin(p * z) * np.maximum(z, 0.0)

    def looped(p):
        z = ad.checkpoint_loop(step, np.ones(3), 20, args=(p,), snapshots=3)
        return np.sum(z ** 2)

    def scipy_ops(p):          # ops that own tapes of Python functions
        import scipy.integrate as si, scipy.optimize as so, scipy.sparse.linalg as spla
        op = spla.LinearOperator((3, 3), matvec=lambda v: 3.0 * v + np.roll(v, 1),
                                 rmatvec=lambda w: 3.0 * w + np.roll(w, -1))
        return (si.quad(lambda x: np.exp(-p[0] * x) * p[1], 0.0, p[2])[0]
                + np.sum(so.fsolve(lambda z: z ** 3 + p[:2] * z - 1.0, np.ones(2)))
                + so.brentq(lambda t: t ** 3 - p[1] * t - 1.0, 0.0, 3.0)
                + np.sum(spla.gmres(op, p, rtol=1e-10)[0]))

    x0, p0 = np.linspace(0.1, 0.9, 5), np.array([0.5, 1.0, 1.5])
    files = [tapefile.dumps(ad.record(plain, x0)), tapefile.dumps(ad.record(looped, p0)),
             tapefile.dumps(ad.record(scipy_ops, p0))]
    rng = np.random.default_rng(int(sys.argv[1]))
    n_cases = int(sys.argv[2])

    def damage(data):
        b = bytearray(data)
        kind = rng.integers(5)
        if kind == 0:
            for _ in range(rng.integers(1, 4)):
                b[rng.integers(len(b))] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            b = b[:rng.integers(len(b))]
        elif kind == 2:
            b += rng.bytes(int(rng.integers(1, 64)))
        elif kind == 3:
            b = bytearray(rng.bytes(int(rng.integers(0, len(b)))))
            if rng.integers(2):
                b[:16] = data[:16]
        else:      # a length field: version, payload, tape count or a section count
            at = [20, layout(data)[0] - 8, layout(data)[1], layout(data)[1] + 4][rng.integers(4)]
            b[at:at + 4] = struct.pack("<I", int(rng.integers(0, 2 ** 32)))
        return bytes(b)

    def alter(data):
        body, start = layout(data)
        payload = bytearray(data[start:])
        kind = rng.integers(5)
        if kind == 4:          # values only: constants and branch outcomes, which load
            tapes = [(t, tag, count, at) for t, tag, code, count, _, at in sections(data)
                     if tag in ("CNST", "BRCH") and count]
            _, tag, count, at = tapes[rng.integers(len(tapes))]
            width = 8 if tag == "CNST" else 1
            i = at - start + width * int(rng.integers(count))
            payload[i + int(rng.integers(width))] ^= 1 << int(rng.integers(8 if width == 8 else 1))
        elif kind == 0:
            for _ in range(rng.integers(1, 3)):
                payload[rng.integers(len(payload))] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            payload = payload[:rng.integers(len(payload))]
        elif kind == 2:
            at = int(rng.integers(0, len(payload) - 8))
            payload[at:at + 8] = struct.pack("<q", int(rng.choice(
                [-1, 0, 1, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 40, 2 ** 62])))
        else:
            at = int(rng.integers(len(payload)))
            n = int(rng.integers(1, 16))
            payload[at:at + n] = rng.bytes(n)
        head = data[:body - 8] + struct.pack("<Q", len(payload)) + data[body:start]
        return resign(head + bytes(payload))

    def replay(tape):
        point = tuple(np.random.default_rng(0).uniform(0.2, 0.8, s) for s in tape.input_shapes)
        for call in (lambda: tape.forward(*point), lambda: tape.gradient(*point),
                     lambda: tape.jvp(point, point), lambda: tape.hvp(point, point),
                     lambda: tape.vjp(point, np.ones(tuple(tape.output_shape)))):
            try:
                call()
            except Exception:
                pass

    counts = dict(damaged=0, damaged_refused=0, altered=0, altered_refused=0, altered_loaded=0)
    for case in range(n_cases):
        data = files[case % len(files)]
        bad = damage(data)
        if bad == data:
            continue
        counts["damaged"] += 1
        try:
            tapefile.loads(bad)
            print(f"damaged file {case} loaded")
        except TapeFileError:
            counts["damaged_refused"] += 1
        except Exception as err:
            print(f"damaged file {case}: {type(err).__name__}: {err}"[:300])
        altered = alter(data)
        counts["altered"] += 1
        try:
            tape = tapefile.loads(altered)
        except TapeFileError:
            counts["altered_refused"] += 1
            continue
        except Exception as err:
            print(f"altered file {case}: {type(err).__name__}: {err}"[:300])
            continue
        counts["altered_loaded"] += 1
        replay(tape)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
""")


@pytest.mark.parametrize("seed", [1, 2])
def test_damaged_files_are_refused_and_altered_ones_never_crash(seed):
    run = subprocess.run([sys.executable, "-c", FUZZ, str(seed), "200"], capture_output=True,
                         text=True, timeout=240, cwd=TESTS.parent,
                         env={"PYTHONPATH": f"{TESTS.parent}:{TESTS}", "OPENBLAS_NUM_THREADS": "1",
                              "OMP_NUM_THREADS": "1", "PATH": ""})
    assert run.returncode == 0, f"the child died (code {run.returncode}):\n{run.stderr[-3000:]}"
    lines = run.stdout.strip().splitlines()
    counts = dict(item.split("=") for item in lines[-1].split())
    assert lines[:-1] == [], "\n".join(lines[:-1])
    assert counts["damaged_refused"] == counts["damaged"] and int(counts["damaged"]) > 150
    assert int(counts["altered_refused"]) > 20 and int(counts["altered_loaded"]) > 20, counts
