"""Where the tests and the project they check live (for tests that read
docs, examples or benchmarks, or start Python processes)."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
