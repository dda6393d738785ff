"""The progress display of ``progress=True`` (adsim/checkpoint/progress.py):
one line redrawn in place on a terminal, plain lines every few seconds
elsewhere, with the rate and the time left. Formatting is checked on a
stream that says it is (or is not) a terminal and a clock the test moves."""
import io

import numpy as np

import adsim as ad
from adsim.checkpoint.progress import ProgressLine, format_line


class Stream(io.StringIO):
    def __init__(self, terminal):
        super().__init__()
        self.terminal = terminal

    def isatty(self):
        return self.terminal


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_line_shows_steps_rate_and_time_left():
    assert format_line("sweep", 450, 1000, 9.0) == (
        "sweep  45%|#############                 | 450/1000 [00:09<00:11, 50.0 steps/s]")
    assert format_line("sweep", 0, 1000, 0.0, bar=False) == "sweep   0% 0/1000 [00:00<?, 0.0 steps/s]"
    assert format_line("sweep", 200, 100_000, 3700.0, bar=False).endswith(
        "[1:01:40<512:51:40, 0.1 steps/s]")
    assert format_line("sweep", 5000, 5000, 2.0).startswith("sweep 100%|" + "#" * 30 + "| 5000/5000")


def drive(terminal, seconds_per_step, total=100):
    stream, clock = Stream(terminal), Clock()
    show = ProgressLine("sweep", stream, clock)
    for done in range(1, total + 1):
        clock.now += seconds_per_step
        show(done, total)
    return stream.getvalue()


def test_on_a_terminal_one_line_is_redrawn_in_place():
    out = drive(True, 0.05)                        # 5 s in all: redrawn at most 10 times a second
    frames = out.split("\r")[1:]
    assert 25 <= len(frames) <= 51 and out.count("\n") == 1 and out.endswith("\n")
    assert frames[-1].startswith("sweep 100%|") and "100/100 [00:05<00:00, 20.0 steps/s]" in frames[-1]
    assert all(len(f.rstrip("\n")) >= len(frames[0].rstrip()) for f in frames)   # old text covered


def test_elsewhere_plain_lines_every_few_seconds():
    lines = drive(False, 0.25).splitlines()        # 25 s: a line each 5 s, and the end
    assert 5 <= len(lines) <= 6 and "\r" not in "".join(lines) and "|" not in "".join(lines)
    assert lines[-1] == "sweep 100% 100/100 [00:25<00:00, 4.0 steps/s]"
    assert drive(False, 0.001).splitlines() == ["sweep 100% 100/100 [00:00<00:00, 1000 steps/s]"]


def test_a_checkpointed_loop_with_progress_true_writes_the_line(capsys):
    def loss(x):
        return np.sum(ad.checkpoint_loop(lambda u: u + 0.01 * np.sin(u), x, 50, snapshots=4,
                                         progress=True) ** 2)
    ad.grad(loss)(np.linspace(0.0, 1.0, 8))
    err = capsys.readouterr().err
    assert err.startswith("adsim reverse sweep 100% 50/50 [") and err.endswith(" steps/s]\n")


def test_the_demo_shows_the_progress_of_its_sweep(capsys):
    from adsim import demo
    demo.run(n_steps=200, points=32, memory_limit="120kB", check=False, verbose=True)
    captured = capsys.readouterr()
    assert captured.err.startswith("adsim reverse sweep 100% 200/200 [")
    assert "RK4 steps" in captured.out
