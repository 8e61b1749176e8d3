"""`jobquake nightly` arguments: durations, rates, shards, and the CLI wiring."""
from __future__ import annotations

import argparse

import pytest

from harness.cli import build_parser
from harness.nightly.command import duration, rate, shard


def test_durations_rates_and_shards_parse_as_written():
    assert duration("90") == 90 and duration("90s") == 90 and duration("30m") == 1800 and duration("1h") == 3600
    assert rate("20/s") == 20 and rate("20") == 20 and rate("600/m") == 10
    assert shard("1/4") == (1, 4)


@pytest.mark.parametrize("parse, text", [(duration, "0s"), (duration, "soon"), (rate, "fast"), (shard, "4/4"),
                                         (shard, "1-4")])
def test_bad_values_are_refused_with_an_example(parse, text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected"):
        parse(text)


def test_nightly_and_merge_are_subcommands_of_jobquake():
    args = build_parser().parse_args(["nightly", "--duration", "2m", "--seed", "7", "--faults", "kill",
                                      "--rate", "20/s", "-n", "2"])
    assert (args.duration, args.seed, args.faults, args.rate, args.shards) == (120, 7, "kill", 20, 2)
    merged = build_parser().parse_args(["merge", "a", "b"])
    assert [str(d) for d in merged.dirs] == ["a", "b"]
