"""ONNXLINT_SHARD=K/N (tests/conftest.py) is how .ci/run splits one run over the Pythons between the oldest and the
newest: the shards must be disjoint and together the whole run, or a test would silently run nowhere."""

from __future__ import annotations

import pytest
from conftest import pytest_collection_modifyitems


class _Hook:
    def __init__(self):
        self.deselected: list[str] = []

    def pytest_deselected(self, items):
        self.deselected.extend(items)


class _Config:
    def __init__(self):
        self.hook = _Hook()


def _kept(monkeypatch, shard: str, items: list[str]) -> tuple[list[str], list[str]]:
    monkeypatch.delenv("ONNXLINT_SKIP_ONCE", raising=False)
    monkeypatch.setenv("ONNXLINT_SHARD", shard)
    config = _Config()
    items = list(items)
    pytest_collection_modifyitems(config, items)
    return items, config.hook.deselected


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_the_shards_of_a_run_are_disjoint_and_together_the_whole_run(monkeypatch, n):
    items = [f"test_{i}" for i in range(23)]
    kept = []
    for k in range(1, n + 1):
        mine, deselected = _kept(monkeypatch, f"{k}/{n}", items)
        assert sorted(mine + deselected) == sorted(items)  # what is not run is reported as deselected, not lost
        kept.extend(mine)
    assert sorted(kept) == sorted(items) and len(kept) == len(items)


def test_a_shard_takes_every_nth_test_so_a_slow_file_is_spread_over_all_shards(monkeypatch):
    items = [f"test_{i}" for i in range(6)]
    assert _kept(monkeypatch, "2/3", items)[0] == ["test_1", "test_4"]


@pytest.mark.parametrize("shard", ["0/2", "3/2", "1", "1/0", "a/b", "1/2/3", "-1/2"])
def test_a_malformed_shard_stops_the_run_instead_of_running_everything(monkeypatch, shard):
    with pytest.raises(pytest.UsageError, match="ONNXLINT_SHARD"):
        _kept(monkeypatch, shard, ["test_0", "test_1"])


def test_no_shard_runs_everything(monkeypatch):
    items = ["test_0", "test_1", "test_2"]
    assert _kept(monkeypatch, "", items) == (items, [])
