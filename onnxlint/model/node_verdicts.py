"""A prediction's verdicts, node index -> verdict, stored as a code a node in a big model.

A prediction (ORT's placement, TensorRT's parser verdicts) holds one verdict per node of the model, and most
nodes share one of a few verdicts ('device', 'supported'). One object per node (the verdict with its node, and a
dict entry) was ~110 MB at 1M nodes per prediction, alive through the other predictions and the rules: in a big
model (GraphIndex.big) each distinct verdict (its fields but the node) is kept once, each node holds the code of
its verdict, and the verdict object is made again, equal to the one recorded, when asked (a smaller model's are
a dict: making them again cost ~4 % of a 100k-node lint). Verdicts that do not fit that (a node that is not
its index's node at that index, another class, a new node recorded before one recorded earlier, so that the
order would differ from a dict's) turn the whole mapping into a plain dict: it always reads as the dict of the
verdicts recorded, in the order first recorded.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections import Counter
from collections.abc import ItemsView, Iterable, Iterator, MutableMapping, Sequence, ValuesView
from functools import lru_cache
from operator import attrgetter
from typing import Any, Callable, Generic, TypeVar

V = TypeVar("V")


class NodeVerdicts(MutableMapping[int, V], Generic[V]):
    """node index -> verdict, for verdict classes that are dataclasses whose first field is the node (NodePlacement,
    TrtNode), recorded in node order (a node recorded again keeps its place, as in a dict)."""

    __slots__ = ("_plain", "_cls", "_fields", "_width", "_nodes", "_codes", "_kinds", "_code_of", "_size", "_last",
                 "_last_fields", "_last_code")

    def __init__(self) -> None:
        self._plain: dict[int, V] | None = None  # the verdicts as objects, once they do not fit the codes
        self._cls: Callable[..., V] | None = None
        self._fields: Callable[[V], tuple[Any, ...]] | None = None  # a verdict -> its fields but the node
        self._width = 0  # how many fields that is
        self._nodes: list[Any] = []  # the index's nodes: node index -> node
        self._codes = array("I")  # node index -> 1 + its verdict's position in _kinds; 0: none recorded
        self._kinds: list[tuple[Any, ...]] = []
        self._code_of: dict[tuple[Any, ...], int] = {}
        self._size = 0
        self._last = -1  # the highest node index recorded
        # the fields set_fields was last given, one object, and their code: the partitioner and the parser hand the
        # same tuple for each node of a signature, whose hash (its strings') is not worked out again then
        self._last_fields: tuple[Any, ...] | None = None
        self._last_code = 0

    # ------------------------------------------------------------------ writing
    def __setitem__(self, index: int, verdict: V) -> None:
        plain = self._plain
        if plain is not None:
            plain[index] = verdict
            return
        if self._cls is None and not self._start(verdict):
            self._to_plain()[index] = verdict
            return
        cls = self._cls
        if verdict.__class__ is not cls or not self.set_fields(index, verdict.node, cls, self._fields(verdict)):  # type: ignore[attr-defined,misc]
            self._to_plain()[index] = verdict

    def set_fields(self, index: int, node: Any, cls: Callable[..., V], fields: tuple[Any, ...]) -> bool:
        """self[index] = cls(node, *fields) kept as its code without the verdict being made, where it fits the codes
        as that verdict would (fields: all of its fields but the node, in order): for a prediction that records a
        million nodes from a few verdicts. False, nothing changed, where it does not: the caller records the
        verdict itself. The code: the fields' position among the distinct verdicts, added where they are new."""
        codes = self._codes
        if (self._plain is not None or self._cls is not cls or len(fields) != self._width or not 0 <= index < len(codes)
                or self._nodes[index] is not node):
            return False
        new = not codes[index]
        if new and index < self._last:
            return False
        if fields is self._last_fields:
            code = self._last_code
        else:
            got = self._code_of.get(fields)
            if got is None:
                self._kinds.append(fields)
                got = self._code_of[fields] = len(self._kinds)
            code = self._last_code = got
            self._last_fields = fields
        if new:
            self._size += 1
            self._last = index
        codes[index] = code
        return True

    def _start(self, verdict: V) -> bool:
        """Codes for verdicts of this one's class over the nodes of this one's index; False when they cannot be."""
        cls = verdict.__class__
        names = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
        scope = getattr(getattr(verdict, "node", None), "scope", None)
        ref = getattr(scope, "index_ref", None)
        index = ref() if ref is not None else None
        if len(names) < 3 or names[0] != "node" or index is None or not index.big:
            return False  # a smaller model's verdicts as a dict: reading codes back costs time, its memory is small
        self._cls, self._fields, self._width, self._nodes = cls, attrgetter(*names[1:]), len(names) - 1, index.nodes
        self._codes = array("I", bytes(4 * len(index.nodes)))
        return True

    def _to_plain(self) -> dict[int, V]:
        plain = self._plain = dict(self._items())
        self._codes, self._kinds, self._code_of, self._nodes = array("I"), [], {}, []
        self._last_fields, self._last_code = None, 0
        return plain

    def __delitem__(self, index: int) -> None:
        plain = self._plain if self._plain is not None else self._to_plain()
        del plain[index]

    # ------------------------------------------------------------------ reading
    def __getitem__(self, index: int) -> V:
        plain = self._plain
        if plain is not None:
            return plain[index]
        codes = self._codes
        code = codes[index] if index.__class__ is int and 0 <= index < len(codes) else 0
        if not code:
            raise KeyError(index)
        return self._cls(self._nodes[index], *self._kinds[code - 1])  # type: ignore[misc]

    def get(self, index: int, default: V | None = None) -> V | None:  # type: ignore[override]
        plain = self._plain
        if plain is not None:
            return plain.get(index, default)
        codes = self._codes
        code = codes[index] if index.__class__ is int and 0 <= index < len(codes) else 0
        return self._cls(self._nodes[index], *self._kinds[code - 1]) if code else default  # type: ignore[misc]

    def count(self, field: str) -> dict[Any, int]:
        """field's value -> how many verdicts have it (first seen first), no verdict made."""
        out: dict[Any, int] = {}
        if self._plain is not None:
            for v in self._plain.values():
                key = getattr(v, field)
                out[key] = out.get(key, 0) + 1
            return out
        if self._cls is None:
            return out
        at = self._field_at(field)
        for code, n in Counter(self._codes).items():
            if code:
                key = self._kinds[code - 1][at]
                out[key] = out.get(key, 0) + n
        return out

    def nodes_by(self, field: str) -> dict[Any, list[Any]]:
        """field's value -> the nodes whose verdict has it, in order, no verdict made."""
        out: dict[Any, list[Any]] = {}
        if self._plain is not None:
            for v in self._plain.values():
                out.setdefault(getattr(v, field), []).append(v.node)  # type: ignore[attr-defined]
            return out
        if self._cls is None:
            return out
        at = self._field_at(field)
        of_value: dict[Any, list[Any]] = {}
        lists = [of_value.setdefault(kind[at], []) for kind in self._kinds]  # a list per value, per code
        nodes = self._nodes
        for i, code in enumerate(self._codes):
            if code:
                got = lists[code - 1]
                if not got:  # the value's first node: its key goes in now, as in the loop above
                    out[self._kinds[code - 1][at]] = got
                got.append(nodes[i])
        return out

    def fields_at(self, names: tuple[str, ...]) -> tuple[Sequence[int], list[tuple[Any, ...] | None], Iterable[tuple[Any, int]]]:
        """(codes, kinds, recorded): the named fields of the verdict of node index i are kinds[codes[i]] (None: no
        verdict; an index past codes has none either), and recorded lists (its node, its code) for each verdict in
        the order recorded, no verdict made: for a pass that reads the verdicts of a million nodes and their
        producers (the Memcpy boundaries). A plain mapping's are made from its verdicts."""
        if self._plain is None:
            if self._cls is None:
                return array("I"), [None], ()
            at = [self._field_at(name) for name in names]
            nodes, codes = self._nodes, self._codes
            return (codes, [None, *(tuple([kind[k] for k in at]) for kind in self._kinds)],
                    ((nodes[i], code) for i, code in enumerate(codes) if code))
        kinds: list[tuple[Any, ...] | None] = [None]
        code_of: dict[tuple[Any, ...], int] = {}
        recorded: list[tuple[Any, int]] = []
        codes = array("I", bytes(4 * (max([i for i in self._plain if i.__class__ is int], default=-1) + 1)))
        get = attrgetter(*names) if len(names) > 1 else (lambda v: (getattr(v, names[0]),))
        for i, v in self._plain.items():
            kind = get(v)
            code = code_of.get(kind)
            if code is None:
                code = code_of[kind] = len(kinds)
                kinds.append(kind)
            recorded.append((v.node, code))  # type: ignore[attr-defined]
            if i.__class__ is int and i >= 0:  # a node's index: found by it
                codes[i] = code
        return codes, kinds, recorded

    def fields_getter(self, names: tuple[str, ...]) -> Callable[[int], tuple[Any, ...] | None]:
        """index -> the named fields of its verdict as recorded at the time (None: none), no verdict made: for a
        pass that asks of many nodes one at a time while it records (GetCpuPreferredNodes)."""
        made: dict[int, tuple[Any, ...]] = {}  # code -> its fields (codes only grow: a code keeps its verdict)

        def read(index: int) -> tuple[Any, ...] | None:
            plain = self._plain
            if plain is not None:  # once plain, always plain
                v = plain.get(index)
                return None if v is None else tuple([getattr(v, name) for name in names])
            codes = self._codes
            code = codes[index] if 0 <= index < len(codes) else 0
            if not code:
                return None
            got = made.get(code)
            if got is None:
                kind = self._kinds[code - 1]
                got = made[code] = tuple([kind[self._field_at(name)] for name in names])
            return got

        return read

    def in_index_order(self) -> bool:
        """Whether the verdicts are kept as codes: then each is its node's, under its index, recorded in index order
        (fields_at's recorded is each node index with a code, ascending), so a pass may pick the nodes it reads by
        index and keep the order recorded."""
        return self._plain is None

    def _field_at(self, field: str) -> int:
        return field_position(self._cls, field)

    def __contains__(self, index: object) -> bool:
        plain = self._plain
        if plain is not None:
            return index in plain
        codes = self._codes
        return index.__class__ is int and 0 <= index < len(codes) and codes[index] != 0

    def __len__(self) -> int:
        return len(self._plain) if self._plain is not None else self._size

    def __iter__(self) -> Iterator[int]:
        if self._plain is not None:
            return iter(self._plain)
        return (i for i, code in enumerate(self._codes) if code)

    def _items(self) -> Iterator[tuple[int, V]]:
        if self._plain is not None:
            yield from self._plain.items()
            return
        make, nodes, kinds = self._cls, self._nodes, self._kinds
        for i, code in enumerate(self._codes):
            if code:
                yield i, make(nodes[i], *kinds[code - 1])  # type: ignore[misc]

    def values(self) -> ValuesView[V]:
        # plain verdicts stay plain: their dict's own view reads as _Values would, without two generators an item
        return self._plain.values() if self._plain is not None else _Values(self)

    def items(self) -> ItemsView[int, V]:
        return self._plain.items() if self._plain is not None else _Items(self)

    def getter(self) -> Callable[[int], V | None]:
        """get, for a loop that asks of every node: the plain dict's own get once the verdicts are one (they stay
        one), not a call through this class a read."""
        return self._plain.get if self._plain is not None else self.get

    def __repr__(self) -> str:
        return repr(dict(self._items()))


class _Values(ValuesView[V]):
    __slots__ = ()
    _mapping: NodeVerdicts[V]

    def __iter__(self) -> Iterator[V]:
        return (v for _, v in self._mapping._items())


class _Items(ItemsView[int, V]):
    __slots__ = ()
    _mapping: NodeVerdicts[V]

    def __iter__(self) -> Iterator[tuple[int, V]]:
        return self._mapping._items()


@lru_cache(maxsize=None)
def field_position(cls: type, field: str) -> int:
    """Where a verdict class's field is among its fields but the node (the first): in a kind, in a record_as
    tuple."""
    return [f.name for f in dataclasses.fields(cls)].index(field) - 1
