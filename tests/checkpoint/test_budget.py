"""Tests of byte parsing and of the snapshot count for a memory budget."""

import pytest

from adsim.checkpoint import format_bytes, parse_bytes, snapshots_for_budget
from adsim.errors import MemoryBudgetError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100MB", 100_000_000),
        ("100 MB", 100_000_000),
        ("100mb", 100_000_000),
        ("1kB", 1000),
        ("1KB", 1000),
        ("2GB", 2 * 10**9),
        ("1TB", 10**12),
        ("1KiB", 1024),
        ("3 MiB", 3 * 2**20),
        ("1.5GiB", 3 * 2**29),
        ("2TiB", 2 * 2**40),
        ("0.1GB", 100_000_000),
        (".5kB", 500),
        ("1e3kB", 10**6),
        ("2.5e-3MB", 2500),
        ("512", 512),
        ("512B", 512),
        ("  7 b ", 7),
        ("1.7B", 1),
        ("0", 0),
    ],
)
def test_parse_text(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize(
    ("number", "expected"), [(0, 0), (4096, 4096), (1.5e9, 1_500_000_000), (10.9, 10)]
)
def test_parse_numbers(number, expected):
    assert parse_bytes(number) == expected


@pytest.mark.parametrize(
    "garbage", ["", "MB", "abc", "10 XB", "1,5MB", "1.2.3MB", "-5MB", "5 M B", "inf", "nan", "1e"]
)
def test_garbage_text_is_rejected_with_the_accepted_forms(garbage):
    with pytest.raises(ValueError, match="cannot read .* as a size.*KiB"):
        parse_bytes(garbage)


@pytest.mark.parametrize("number", [-1, -0.5, float("inf"), float("nan")])
def test_bad_numbers_are_rejected(number):
    with pytest.raises(ValueError):
        parse_bytes(number)


@pytest.mark.parametrize("value", [True, None, [1], b"1MB"])
def test_other_types_are_rejected(value):
    with pytest.raises(TypeError):
        parse_bytes(value)


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(1500) == "1.5 kB"
    assert format_bytes(2 * 10**9) == "2 GB"


def test_snapshot_count():
    # 1 MB budget, 200 kB step tape: 800 kB left for 80 kB snapshots.
    assert snapshots_for_budget("1MB", 80_000, 200_000) == 10
    assert snapshots_for_budget(1_000_000, 80_000, 200_000) == 10
    assert snapshots_for_budget(1_079_999, 80_000, 200_000) == 10
    assert snapshots_for_budget(1_080_000, 80_000, 200_000) == 11
    assert snapshots_for_budget("1GB", 8, 0) == 125_000_000


def test_snapshot_count_is_capped_at_the_loop_length():
    assert snapshots_for_budget("1GB", 1000, 1000, n_steps=50) == 50
    assert snapshots_for_budget("1GB", 1000, 1000, n_steps=1) == 1


def test_exact_minimum_gives_one_snapshot():
    assert snapshots_for_budget(130_000, 80_000, 50_000) == 1
    assert snapshots_for_budget(130_000, 80_000, 50_000, n_steps=100) == 1


def test_too_small_budget_names_the_minimum_and_the_ways_out():
    with pytest.raises(MemoryBudgetError) as caught:
        snapshots_for_budget("100kB", state_nbytes=80_000, step_tape_nbytes=50_000)
    message = str(caught.value)
    assert "130000 bytes" in message
    assert "memory_limit" in message
    assert "snapshot_dir=" in message
    assert "shorten the step" in message
    assert isinstance(caught.value, MemoryError)


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (("1MB", 0, 10), ValueError),
        (("1MB", 10, -1), ValueError),
        (("1MB", 10.0, 10), TypeError),
        (("1MB", 10, 10, 0), ValueError),
        (("lots", 10, 10), ValueError),
    ],
)
def test_invalid_arguments(arguments, error):
    with pytest.raises(error):
        snapshots_for_budget(*arguments)
