"""NodeVerdicts (a code a node for a prediction's verdicts) reads as the dict of the verdicts recorded, in the order
first recorded, whether they fit its codes or turn it into a plain dict."""

from __future__ import annotations

import pytest
from conftest import chain_with_if

from onnxlint.model import graph
from onnxlint.model.graph import GraphIndex
from onnxlint.model.node_verdicts import NodeVerdicts
from onnxlint.ort.verdicts import CPU, CUDA, NodePlacement, Placement
from onnxlint.tensorrt.verdicts import TrtNode


@pytest.fixture
def big(monkeypatch):
    """Every graph is a big one (GraphIndex.big): the verdicts of its index are kept as codes."""
    monkeypatch.setattr(graph, "INTERN_NODES", 0)


def _fill(verdicts: list[tuple[int, NodePlacement]]) -> tuple[NodeVerdicts[NodePlacement], dict[int, NodePlacement]]:
    coded: NodeVerdicts[NodePlacement] = NodeVerdicts()
    plain: dict[int, NodePlacement] = {}
    for i, v in verdicts:
        coded[i] = v
        plain[i] = v
    return coded, plain


def _same(coded: NodeVerdicts, plain: dict) -> None:
    assert list(coded) == list(plain) and len(coded) == len(plain)
    assert list(coded.items()) == list(plain.items()) and list(coded.values()) == list(plain.values())
    assert all(coded[i] == v and coded.get(i) == v and i in coded for i, v in plain.items())
    assert coded == plain and coded.get(-1) is None and -1 not in coded and 10**6 not in coded
    get = coded.getter()  # the plain dict's get once the verdicts are one
    assert all(get(i) == v for i, v in plain.items()) and get(-1) is None and get(10**6) is None
    counts: dict = {}
    by: dict = {}
    for v in plain.values():
        counts[v.status] = counts.get(v.status, 0) + 1
        by.setdefault(v.status, []).append(v.node)
    assert list(coded.count("status").items()) == list(counts.items())
    assert list(coded.nodes_by("status").items()) == list(by.items())
    for names in (("status", "reason"), ("status",)):  # fields_at: a verdict's fields by node index, no verdict made
        codes, kinds, recorded = coded.fields_at(names)
        for i in range(max(plain, default=-1) + 2):
            want = tuple(getattr(plain[i], name) for name in names) if i in plain else None
            assert (kinds[codes[i]] if i < len(codes) else None) == want, (names, i)
        assert [(n, kinds[c]) for n, c in recorded] == [(v.node, tuple(getattr(v, name) for name in names))
                                                        for v in plain.values()]


def test_verdicts_in_node_order_are_kept_as_codes_and_read_back_equal(big):
    gi = GraphIndex(chain_with_if(6))  # kept: the codes read its nodes
    nodes = gi.nodes
    kinds = [(CUDA, "device", None, ""), (CPU, "deliberate", "cpu-preferred", "a shape computation"),
             (None, "eliminated", "cse", "duplicate of x")]
    verdicts = [(n.index, NodePlacement(n, *kinds[(n.index * 7) % 3])) for n in nodes if n.index != 2]
    # a node recorded again keeps its place
    verdicts.append((5, NodePlacement(nodes[5], *kinds[(5 * 7 + 1) % 3])))
    coded, plain = _fill(verdicts)
    assert coded._plain is None and len(coded._kinds) == 3  # a code a node: three distinct verdicts kept
    _same(coded, plain)
    assert coded[5] is not coded[5] and coded[5] == plain[5]  # made again when asked, equal to the one recorded


def test_set_fields_given_one_tuple_again_keeps_its_code_and_a_new_one_its_own(big):
    """set_fields takes the code of the fields it was last given, when given that very tuple again, without hashing
    it (the partitioner hands one tuple for every node of a signature): the verdicts read back are those recorded,
    whether the fields come as the same object, an equal one, or a different one between two of the same."""
    gi = GraphIndex(chain_with_if(6))
    nodes = gi.nodes
    device, cpu = (CUDA, "device", None, ""), (CPU, "deliberate", "cpu-preferred", "a shape computation")
    given = [device, device, cpu, device, (CUDA, "device", None, ""), cpu, cpu, (None, "eliminated", "cse", "x")]
    coded: NodeVerdicts[NodePlacement] = NodeVerdicts()
    plain: dict[int, NodePlacement] = {}
    coded[nodes[0].index] = plain[nodes[0].index] = NodePlacement(nodes[0], *device)  # its class: codes from here
    assert len(nodes) > len(given)
    for node, fields in zip(nodes[1:], given):
        assert coded.set_fields(node.index, node, NodePlacement, fields)
        plain[node.index] = NodePlacement(node, *fields)
    assert coded._plain is None and len(coded._kinds) == 3
    _same(coded, plain)


def test_verdicts_that_do_not_fit_the_codes_read_as_a_plain_dict(big):
    gi = GraphIndex(chain_with_if(6))
    other = GraphIndex(chain_with_if(6))
    nodes = gi.nodes
    dev = (CUDA, "device", None, "")
    cases = {
        "recorded out of order": [(4, NodePlacement(nodes[4], *dev)), (1, NodePlacement(nodes[1], *dev))],
        "another index's node": [(0, NodePlacement(nodes[0], *dev)), (1, NodePlacement(other.nodes[1], *dev))],
        "not at its index": [(0, NodePlacement(nodes[0], *dev)), (1, NodePlacement(nodes[3], *dev))],
        "another class": [(0, NodePlacement(nodes[0], *dev)), (1, TrtNode(nodes[1], "supported"))],
        "past the index's nodes": [(0, NodePlacement(nodes[0], *dev)), (len(nodes), NodePlacement(nodes[1], *dev))],
    }
    for name, verdicts in cases.items():
        coded, plain = _fill(verdicts)
        assert coded._plain is not None, name
        _same(coded, plain)
    coded, plain = _fill([(n.index, NodePlacement(n, *dev)) for n in nodes[:4]])
    del coded[1], plain[1]
    _same(coded, plain)


def test_a_placement_lists_its_nodes_by_status_as_recorded(big):
    gi = GraphIndex(chain_with_if(6))
    nodes = gi.nodes
    pl = Placement("ort-cuda", "1.24.4", {}, [])
    statuses = ["device", "deliberate", "device", "eliminated"]
    for n in nodes:
        status = statuses[n.index % 4]
        pl.record(n.index, NodePlacement(n, CPU if status == "deliberate" else CUDA, status))
    want: dict = {}
    for n in nodes:
        want.setdefault(statuses[n.index % 4], []).append(n)
    assert pl.nodes._plain is None and pl.by_status() == want
    assert pl.by_status(with_common=False) == {s: v for s, v in want.items() if s != "device"}
    assert pl.summary()["shape_only"] == len(want["deliberate"]) and pl.summary()["eliminated"] == len(want["eliminated"])


def test_a_smaller_models_verdicts_are_a_plain_dict():
    gi = GraphIndex(chain_with_if(6))  # under INTERN_NODES: reading codes back would cost time for little memory
    coded, plain = _fill([(n.index, NodePlacement(n, CUDA, "device")) for n in gi.nodes])
    assert not gi.big and coded._plain is not None
    _same(coded, plain)


@pytest.mark.parametrize("big_model", [True, False], ids=["codes", "plain"])
def test_record_as_records_what_record_does(monkeypatch, big_model):
    """StatusIndex.record_as (the fields of a verdict, no verdict made where codes keep it) leaves a prediction as
    record with the verdict made does: kept as codes or a plain dict alike, the same verdicts in the same order,
    the same nodes by status; a TrtNode's status is its first field, a NodePlacement's its second. A smaller
    model's (plain): the recorder puts the verdict into the dict itself."""
    from onnxlint.tensorrt.verdicts import TrtPrediction

    if big_model:
        monkeypatch.setattr(graph, "INTERN_NODES", 0)

    gi = GraphIndex(chain_with_if(6))
    other = GraphIndex(chain_with_if(6))
    nodes = gi.nodes
    kinds = [(CUDA, "device", None, ""), (CPU, "deliberate", "cpu-preferred", "a shape computation"),
             (None, "eliminated", "cse", "duplicate of x")]
    trt = [("supported", None, ""), ("unsupported", "dtype", "no int4")]
    cases = {
        "in order": [(n.index, n, k) for k, n in enumerate(nodes)],
        "again": [(n.index, n, k) for k, n in enumerate(nodes)] + [(3, nodes[3], 1)],
        "out of order": [(4, nodes[4], 0), (1, nodes[1], 2), (5, nodes[5], 1)],
        "another index's node": [(0, nodes[0], 0), (1, other.nodes[1], 1), (2, nodes[2], 2)],
        "a field short": [(0, nodes[0], 0), (1, nodes[1], -1)],
    }
    for name, recorded in cases.items():
        for make, verdict, fields in ((lambda: Placement("ort-cuda", "1.24.4", {}, []), NodePlacement, kinds),
                                      (lambda: TrtPrediction("10.13", None), TrtNode, trt)):
            made, as_fields, bound = make(), make(), make()
            record = bound.recorder()  # record_as bound once, for a loop over every node
            for i, n, k in recorded:
                f = fields[k % len(fields)] if k >= 0 else fields[0][:-1]  # a verdict given without its last field
                made.record(i, verdict(n, *f))
                as_fields.record_as(i, n, f)
                record(i, n, f)
                # asked between two records: each status cache is dropped by the next record, a common one too
                assert made.by_status() == as_fields.by_status() == bound.by_status(), name
            for other_way in (as_fields, bound):
                assert (made.nodes._plain is None) == (other_way.nodes._plain is None), name
                assert list(made.nodes.items()) == list(other_way.nodes.items()), name
                assert made.by_status() == other_way.by_status() and made.by_status(False) == other_way.by_status(False), name
                assert made.__dict__.get("_unusual") == other_way.__dict__.get("_unusual"), name  # the status read
                assert made.__dict__.get("_index") is other_way.__dict__.get("_index"), name
    pl = Placement("ort-cuda", "1.24.4", {}, [])
    for n in nodes:
        pl.record_as(n.index, n, kinds[0])
    if big_model:
        assert pl.nodes._plain is None and len(pl.nodes._kinds) == 1  # kept as codes: one verdict, no object a node
    else:
        assert pl.nodes._plain == {n.index: NodePlacement(n, *kinds[0]) for n in nodes}
