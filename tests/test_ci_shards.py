"""ONNXLINT_SHARD=K/N (tests/conftest.py) is how .ci/run splits one run over the Pythons between the oldest and the
newest: the shards must be disjoint and together the whole run, or a test would silently run nowhere."""

from __future__ import annotations

import pytest
from conftest import pytest_collection_modifyitems


class _Item:
    def __init__(self, nodeid: str):
        self.nodeid = nodeid

    def __repr__(self) -> str:
        return self.nodeid


class _Hook:
    def __init__(self):
        self.deselected: list[_Item] = []

    def pytest_deselected(self, items):
        self.deselected.extend(items)


class _Config:
    def __init__(self):
        self.hook = _Hook()


def _kept(monkeypatch, shard: str, items: list[_Item]) -> tuple[list[_Item], list[_Item]]:
    monkeypatch.delenv("ONNXLINT_SKIP_ONCE", raising=False)
    monkeypatch.setenv("ONNXLINT_SHARD", shard)
    config = _Config()
    items = list(items)
    pytest_collection_modifyitems(config, items)
    return items, config.hook.deselected


def _items(n: int) -> list[_Item]:
    return [_Item(f"tests/test_m{i % 5}.py::test_{i}[{i % 3}]") for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_the_shards_of_a_run_are_disjoint_and_together_the_whole_run(monkeypatch, n):
    items = _items(200)
    kept: list[_Item] = []
    for k in range(1, n + 1):
        mine, deselected = _kept(monkeypatch, f"{k}/{n}", items)
        assert sorted(map(id, mine + deselected)) == sorted(map(id, items))  # the rest is reported deselected
        assert [it for it in items if it in mine] == mine  # in collection order
        kept.extend(mine)
    assert sorted(map(id, kept)) == sorted(map(id, items))
    if n > 1:  # every shard has its share, not one all and the others none
        assert all(len(_kept(monkeypatch, f"{k}/{n}", items)[0]) > 200 / n / 2 for k in range(1, n + 1))


def test_a_test_missing_from_one_pythons_collection_moves_no_test_of_another_file(monkeypatch):
    """The shards run on different Pythons: one may collect a test the other skips at import."""
    items = _items(100)
    gone = items[10]
    first = {it.nodeid for it in _kept(monkeypatch, "1/2", items)[0]}
    second = {it.nodeid for it in _kept(monkeypatch, "1/2", [it for it in items if it is not gone])[0]}
    other_files = {it.nodeid for it in items if not it.nodeid.startswith(gone.nodeid.partition("::")[0])}
    assert first & other_files == second & other_files
    assert first - other_files != second - other_files  # its own file's later tests did move


def test_a_files_tests_alternate_over_the_shards(monkeypatch):
    items = [_Item(f"tests/test_slow.py::test_{i}") for i in range(6)]
    one, two = _kept(monkeypatch, "1/2", items)[0], _kept(monkeypatch, "2/2", items)[0]
    assert len(one) == len(two) == 3
    assert {items.index(it) % 2 for it in one} == {items.index(it) % 2 for it in two} ^ {0, 1}


@pytest.mark.parametrize("shard", ["0/2", "3/2", "1", "1/0", "a/b", "1/2/3", "-1/2"])
def test_a_malformed_shard_stops_the_run_instead_of_running_everything(monkeypatch, shard):
    with pytest.raises(pytest.UsageError, match="ONNXLINT_SHARD"):
        _kept(monkeypatch, shard, _items(2))


def test_no_shard_runs_everything(monkeypatch):
    items = _items(3)
    assert _kept(monkeypatch, "", items) == (items, [])
