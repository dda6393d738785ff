"""The progress display of long sweeps (``progress=True``).

On a terminal: one line redrawn in place (a bar, steps done, the rate and
the time left), at most ten times a second. Elsewhere (a log file, a pipe,
a notebook's captured stream): a plain line every few seconds, so that logs
stay readable. The line ends when the sweep does.
"""
import sys
import time

__all__ = ["ProgressLine", "format_line"]

_REDRAW_SECONDS = 0.1       # on a terminal
_LINE_SECONDS = 5.0         # elsewhere
_BAR = 30


def _duration(seconds):
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


def format_line(label, done, total, elapsed, bar=True):
    """``label  45%|#####     | 450/1000 [00:09<00:11, 50.0 steps/s]``:
    the time left is the steps left at the rate so far (``?`` before the
    first step)."""
    fraction = done / total if total else 1.0
    rate = done / elapsed if elapsed > 0 else 0.0
    left = _duration((total - done) / rate) if rate > 0 else "?"
    speed = f"{rate:.1f} steps/s" if rate < 100 else f"{rate:.0f} steps/s"
    shown = " "
    if bar:
        filled = int(_BAR * fraction)
        shown = f"|{'#' * filled}{' ' * (_BAR - filled)}| "
    return (f"{label} {100 * fraction:3.0f}%{shown}{done}/{total} "
            f"[{_duration(elapsed)}<{left}, {speed}]")


class ProgressLine:
    """A ``progress(done, total)`` callable drawing one sweep's progress on
    ``stream`` (stderr by default); ``clock`` gives seconds (for tests)."""

    def __init__(self, label="adsim reverse sweep", stream=None, clock=time.monotonic):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.start = clock()
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        self.last = None          # when the last line was drawn
        self.width = 0            # of the line drawn last (terminal)

    def __call__(self, done, total):
        now = self.clock()
        finished = done >= total
        every = _REDRAW_SECONDS if self.terminal else _LINE_SECONDS
        if not finished and self.last is not None and now - self.last < every:
            return
        if not finished and self.last is None and not self.terminal and now - self.start < every:
            return                 # a short sweep writes one line, at its end
        self.last = now
        text = format_line(self.label, done, total, now - self.start, bar=self.terminal)
        if self.terminal:
            self.stream.write("\r" + text.ljust(self.width) + ("\n" if finished else ""))
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
