"""Value names are per graph (ort.node_args): sibling If branches that reuse a name keep two values, as optimum's
merged KV-cache decoders have them. The expected placements are ORT's own (onnxruntime-gpu 1.24.4 and 1.31.1,
real sessions on these models)."""

import numpy as np
import onnx
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h
from ort_cases import ANY, INF, _place, _tables

import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex
from onnxlint.ort import node_args


def _branch(src: str, tag: str, local_constants: bool = False) -> onnx.GraphProto:
    """Reshape(t0, Concat(Unsqueeze(Gather(Shape(t0), 0)), [-1])) with t0 = Relu(src); every branch uses the
    same value names (t0, s, g, u, c, out), as optimum's merged decoders do."""
    consts = []
    if local_constants:
        consts = [h.make_node("Constant", [], [n], name=f"{tag}_{n}", value=onnx.numpy_helper.from_array(np.asarray(v, np.int64), n))
                  for n, v in (("i0", 0), ("ax", [0]), ("minus1", [-1]))]
    nodes = [*consts,
             h.make_node("Relu", [src], ["t0"], name=f"{tag}_relu"),
             h.make_node("Shape", ["t0"], ["s"], name=f"{tag}_shape"),
             h.make_node("Gather", ["s", "i0"], ["g"], name=f"{tag}_gather", axis=0),
             h.make_node("Unsqueeze", ["g", "ax"], ["u"], name=f"{tag}_unsq"),
             h.make_node("Concat", ["u", "minus1"], ["c"], name=f"{tag}_concat", axis=0),
             h.make_node("Reshape", ["t0", "c"], ["out"], name=f"{tag}_reshape")]
    return h.make_graph(nodes, tag, [], [vi("out", T.FLOAT, None)])


def _merged_decoder_like(local_constants: bool = False) -> onnx.ModelProto:
    """then reads z, static [2, 4]: its shape chain folds; else reads x, [B, 4]: its Gather stays."""
    node = h.make_node("If", ["cond"], ["y"], name="if", then_branch=_branch("z", "then", local_constants),
                       else_branch=_branch("x", "else", local_constants))
    inits = [] if local_constants else [init("i0", np.int64(0)), init("ax", np.array([0], np.int64)),
                                        init("minus1", np.array([-1], np.int64))]
    return make_model([node], [vi("x", T.FLOAT, ["B", 4]), vi("z", T.FLOAT, [2, 4]), vi("cond", T.BOOL, [])],
                      [vi("y", T.FLOAT, None)], inits)


def _tables_with_if():
    return _tables(cuda_extra={"If": [[16, 18, ANY], [19, 20, ANY], [21, 22, ANY], [23, INF, ANY]]},
                   cpu_extra={"If": [[16, 18, ANY], [19, 20, ANY], [21, 22, ANY], [23, INF, ANY]]})


def test_a_value_folded_in_one_branch_is_not_folded_in_its_sibling():
    # ORT: then_shape/gather/unsqueeze/concat gone (folded), else_gather/unsqueeze/concat on CPU (cpu-preferred);
    # read as one name, the else branch's Gather was called folded ("Gather of constant inputs")
    by, pl = _place(_merged_decoder_like(), "basic", tables=_tables_with_if())
    assert {n: by[n].status for n in ("then_shape", "then_gather", "then_unsq", "then_concat")} == dict.fromkeys(
        ("then_shape", "then_gather", "then_unsq", "then_concat"), "folded")
    assert by["else_shape"].ep == placement.CUDA and by["else_shape"].status == "device"
    for n in ("else_gather", "else_unsq", "else_concat"):
        assert by[n].ep == placement.CPU and by[n].status == "deliberate", (n, by[n])
    assert by["else_reshape"].ep == by["then_reshape"].ep == placement.CUDA


def test_reshape_fusion_reads_the_branchs_own_constants_only():
    # the same branches with their constants inside them: ORT's ReshapeFusion fuses the else branch's shape
    # subgraph (all gone); with the model's initializers (outer scope) it does not (test above)
    by, _ = _place(_merged_decoder_like(local_constants=True), "basic", tables=_tables_with_if())
    assert all(by[n].status == "eliminated" and by[n].reason == "fusion" for n in ("else_shape", "else_gather", "else_unsq", "else_concat"))
    assert by["else_reshape"].status == "device"


def test_the_placement_comes_back_in_the_models_own_nodes_and_names():
    index = GraphIndex(onnx.shape_inference.infer_shapes(_merged_decoder_like()))
    view = node_args.scoped_view(index)
    assert view is not None and view.original  # the else branch's names are renamed in the view
    assert all("@" in new and "@" not in old for new, old in view.original.items())
    pl = placement.Simulator(index, "ort-cuda", "1.24.4", optimization="disabled", tables=_tables_with_if()).run()
    assert all(p.node is index.nodes[i] for i, p in pl.nodes.items())
    assert all("@" not in b.value and b.consumer is index.nodes[b.consumer.index] for b in pl.boundaries)


def test_a_model_without_reused_names_is_used_as_it_is():
    index = GraphIndex(onnx.shape_inference.infer_shapes(_merged_decoder_like_unique()))
    assert node_args.scoped_view(index) is None


def test_a_body_reusing_a_name_of_the_main_graph_gets_a_view():
    """The main graph is looked up in its own tables (node_args._reuses_names): a branch defining a value name the
    main graph also defines (its input x, a Relu's output t0) is renamed in the view all the same."""
    for outer in ("x", "t0"):
        m = _merged_decoder_like_unique()
        m.graph.node.insert(0, h.make_node("Relu", ["x"], ["t0"] if outer == "t0" else ["r"], name="outer_relu"))
        for a in m.graph.node[1].attribute:
            if a.name == "else_branch":
                a.g.node[0].output[0] = outer
                for n in a.g.node[1:]:
                    n.input[:] = [outer if v == "e_t0" else v for v in n.input]
        view = node_args.scoped_view(GraphIndex(m))
        assert view is not None and set(view.original.values()) == {outer}, outer


def _merged_decoder_like_unique() -> onnx.ModelProto:
    m = _merged_decoder_like()
    for a in m.graph.node[0].attribute:
        if a.name == "else_branch":
            for n in a.g.node:
                n.input[:] = [f"e_{v}" if v in ("t0", "s", "g", "u", "c") else v for v in n.input]
                n.output[:] = [f"e_{v}" for v in n.output]
            a.g.output[0].name = "e_out"
    return m


def test_a_contrib_op_output_onnx_leaves_untyped_takes_its_type_from_ort_s_schema():
    """StringNormalizer -> com.microsoft::Tokenizer -> Flatten (skl2onnx's TF-IDF pipelines): onnx has no schema for
    Tokenizer, ORT's types its output T like its input, a string; the Flatten of strings runs on CPU (no CUDA
    kernel for strings), measured on 1.24.4 and 1.31.1."""
    nodes = [h.make_node("StringNormalizer", ["x"], ["n"], name="norm", case_change_action="LOWER"),
             h.make_node("Tokenizer", ["n"], ["t"], domain="com.microsoft", name="tok", mark=0, pad_value="#",
                         separators=[" "], mincharnum=1),
             h.make_node("Flatten", ["t"], ["y"], name="flat")]
    m = make_model(nodes, [vi("x", T.STRING, ["N"])], [vi("y", T.STRING, None)], opset=17, extra_opsets=[("com.microsoft", 1)])
    index = GraphIndex(onnx.shape_inference.infer_shapes(m))
    assert index.scopes[0].type_of("t").type_str is None  # onnx's inference stops at the contrib op
    assert node_args.ort_type_str(index.scopes[0], "t") == "tensor(string)"
    for version in ("1.24.4", "1.31.1"):
        by = {p.node.name: p for p in placement.simulate(index, "ort-cuda", version).nodes.values()}
        assert by["flat"].ep == placement.CPU


def test_the_partitioner_s_input_types_are_ort_type_str_s_answers_in_any_node_order():
    """node_args.ort_input_types (the partitioner's, from the answers known so far) gives each untyped input the
    type ort_type_str gives it, and leaves the same answers in the cache: read from the cache, from the producer's
    schema rule over known input types, and, for a reader listed before its producer (y below), by ort_type_str."""
    nodes = [h.make_node("StringNormalizer", ["x"], ["n"], name="norm", case_change_action="LOWER"),
             h.make_node("Identity", ["y"], ["z"], name="early"),
             h.make_node("Tokenizer", ["n"], ["t"], domain="com.microsoft", name="tok", mark=0, pad_value="#",
                         separators=[" "], mincharnum=1),
             h.make_node("Flatten", ["t"], ["y"], name="flat"),
             h.make_node("Concat", ["t", "z", "y"], ["w"], name="cat", axis=0)]
    m = make_model(nodes, [vi("x", T.STRING, ["N"])], [vi("w", T.STRING, None)], opset=17,
                   extra_opsets=[("com.microsoft", 1)])
    index = GraphIndex(m)  # no inference: every computed value untyped
    scope = index.scopes[0]
    fast: node_args.OrtTypes = {}
    slow: node_args.OrtTypes = {}
    for node in index.nodes:
        types = index.signature(node)[3]
        want = tuple(node_args.ort_type_str(scope, v, cache=slow) if v and t is None else t for v, t in zip(node.inputs, types))
        assert node_args.ort_input_types(index, node, types, fast) == want
        assert {k: d for k, d in fast.items() if d} == slow
    assert set(slow[id(scope)].values()) == {"tensor(string)"} and set(slow[id(scope)]) == {"n", "t", "y", "z"}


def test_the_producers_answers_the_partitioner_keeps_are_ort_type_str_s():
    """The partitioner keeps, per keyed node, the ORT types of its untyped outputs (node_args.output_types, a code
    a node in node_args.Produced) and its readers read them there: the same answers ort_type_str gives, the same
    cache left, for a chain through a contrib op (Tokenizer's output typed like its input), an op whose output
    has a concrete type (NonZero: int64), one that shares its inputs' parameter (Concat), one whose output type
    its schema does not tie to anything (Shape's T1: no answer), and a node listed before its producer."""
    nodes = [h.make_node("StringNormalizer", ["x"], ["n"], name="norm", case_change_action="LOWER"),
             h.make_node("Identity", ["y"], ["z"], name="early"),
             h.make_node("Tokenizer", ["n"], ["t"], domain="com.microsoft", name="tok", mark=0, pad_value="#",
                         separators=[" "], mincharnum=1),
             h.make_node("Flatten", ["t"], ["y"], name="flat"),
             h.make_node("Concat", ["t", "z", "y"], ["w"], name="cat", axis=0),
             h.make_node("NonZero", ["w"], ["s"], name="nonzero"),
             h.make_node("Concat", ["s", "s"], ["s2"], name="cat2", axis=0),
             h.make_node("Shape", ["s2"], ["s3"], name="shape"),
             h.make_node("Identity", ["s3"], ["s4"], name="last")]
    m = make_model(nodes, [vi("x", T.STRING, ["N"])], [vi("s4", T.INT64, None)], opset=17,
                   extra_opsets=[("com.microsoft", 1)])
    index = GraphIndex(m)  # no inference: every computed value untyped
    scope = index.scopes[0]
    fast: node_args.OrtTypes = {}
    slow: node_args.OrtTypes = {}
    produced = node_args.Produced(len(index.nodes))
    for node in index.nodes:
        sig = index.signature(node)
        want = tuple(node_args.ort_type_str(scope, v, cache=slow) if v and t is None else t for v, t in zip(node.inputs, sig[3]))
        got = node_args.ort_input_types(index, node, sig[3], fast, produced)
        assert got == want
        assert all(slow[id(scope)][v] == t for v, t in fast.get(id(scope), {}).items())  # ort_type_str's answers
        produced.codes[node.index] = produced.code(node_args.output_types(sig, got))
    assert slow[id(scope)]["s2"] == "tensor(int64)" and slow[id(scope)]["w"] == "tensor(string)"
    assert slow[id(scope)]["s3"] is None
    # the producers' answers are read from their codes, not copied into the cache (a million entries at 1M
    # nodes): only y, read before its producer, and t, which ort_type_str asked for y, are there; ort_type_str
    # given them answers as without them
    assert set(fast[id(scope)]) == {"t", "y"}
    for value, want_type in slow[id(scope)].items():
        assert node_args.ort_type_str(scope, value, cache=fast, produced=produced) == want_type
    assert [produced.answers[produced.codes[n.index]] for n in index.nodes[-4:-1]] == [
        ("tensor(int64)",), ("tensor(int64)",), (None,)]  # the last one's output is typed: a graph output


def test_a_reader_of_a_node_without_a_code_reads_through_it_to_its_producer_s_code(monkeypatch):
    """A node a Level-1 transformer removed is not keyed (no code in node_args.Produced): the untyped input its
    reader takes from it is worked out from its schema rule over its own inputs, which read their producers'
    codes (_from_known, in the order ort_type_str reads them): the same answers and the same cache as ort_type_str
    gives, without falling back to ort_type_str's walk (at 1M nodes the readers of the 133k twins CSE removed)."""
    nodes = [h.make_node("StringNormalizer", ["x"], ["n"], name="norm", case_change_action="LOWER"),
             h.make_node("Tokenizer", ["n"], ["t"], domain="com.microsoft", name="tok", mark=0, pad_value="#",
                         separators=[" "], mincharnum=1),
             h.make_node("Flatten", ["t"], ["y"], name="removed"),
             h.make_node("Concat", ["y", "t"], ["w"], name="cat", axis=0)]
    m = make_model(nodes, [vi("x", T.STRING, ["N"])], [vi("w", T.STRING, None)], opset=17,
                   extra_opsets=[("com.microsoft", 1)])
    index = GraphIndex(m)  # no inference: every computed value untyped
    scope = index.scopes[0]
    slow: node_args.OrtTypes = {}
    want = {node.name: tuple(node_args.ort_type_str(scope, v, cache=slow) if v and t is None else t
                             for v, t in zip(node.inputs, index.signature(node)[3])) for node in index.nodes}
    walked = []
    ort_type_str = node_args.ort_type_str
    monkeypatch.setattr(node_args, "ort_type_str", lambda *a, **k: walked.append(a[1]) or ort_type_str(*a, **k))
    fast: node_args.OrtTypes = {}
    produced = node_args.Produced(len(index.nodes))
    for node in index.nodes:
        if node.name == "removed":
            continue  # not keyed: no code for its output
        sig = index.signature(node)
        got = node_args.ort_input_types(index, node, sig[3], fast, produced)
        assert got == want[node.name]
        produced.codes[node.index] = produced.code(node_args.output_types(sig, got))
    assert want["cat"] == ("tensor(string)", "tensor(string)")
    assert not walked  # y from Flatten's rule over t, t from Tokenizer's code
    assert fast[id(scope)] == {"y": "tensor(string)"} and slow[id(scope)]["y"] == "tensor(string)"


def test_ort_type_str_stops_at_the_partitioner_s_answers():
    """A chain of untyped values longer than ort_type_str's depth limit: asked afresh at its end, ort_type_str gives
    up (None); given the answers the partitioner keeps for the nodes it met (node_args.Produced) it reads the
    nearest one, the type the chain has (tensor(string)), as it reads its cache."""
    nodes = [h.make_node("StringNormalizer", ["x"], ["n"], name="norm", case_change_action="LOWER"),
             h.make_node("Tokenizer", ["n"], ["v0"], domain="com.microsoft", name="tok", mark=0, pad_value="#",
                         separators=[" "], mincharnum=1)]
    nodes += [h.make_node("Identity", [f"v{i}"], [f"v{i + 1}"], name=f"id{i}") for i in range(30)]
    m = make_model(nodes, [vi("x", T.STRING, ["N"])], [vi("v30", T.STRING, None)], opset=17,
                   extra_opsets=[("com.microsoft", 1)])
    index = GraphIndex(m)  # no inference: every computed value untyped
    scope = index.scopes[0]
    assert node_args.ort_type_str(scope, "v29") is None  # past the depth limit, nothing known on the way
    cache: node_args.OrtTypes = {}
    produced = node_args.Produced(len(index.nodes))
    for node in index.nodes:
        sig = index.signature(node)
        types = node_args.ort_input_types(index, node, sig[3], cache, produced)
        produced.codes[node.index] = produced.code(node_args.output_types(sig, types))
    assert not cache[id(scope)]  # every answer from a producer's code
    assert node_args.ort_type_str(scope, "v29", cache=cache, produced=produced) == "tensor(string)"


def _relu_chain_types(order: list[int]) -> list[str | None]:
    """The ORT types the partitioner gives v1..v19 of x -> Relu -> v1 -> ... -> Relu -> v20, untyped (no
    inference), its nodes listed in this order (their positions in the chain)."""
    chain = [h.make_node("Relu", ["x" if k == 1 else f"v{k - 1}"], [f"v{k}"], name=f"n{k}") for k in range(1, 21)]
    index = GraphIndex(make_model([chain[k] for k in order], [vi("x", T.FLOAT, [2])], [vi("v20", T.FLOAT, [2])]))
    sim = placement.Simulator(index, "ort-cuda", "1.24.4", optimization="disabled", tables=_tables())
    sim.run()
    return [node_args.ort_type_str(index.scopes[0], f"v{k}", cache=sim._ort_types, produced=sim._produced) for k in range(1, 20)]


def test_a_chain_past_the_depth_limit_listed_readers_first_is_left_untyped_where_ort_types_it():
    """Pinned as it is, not as ORT does it: ORT types every value (Graph::VerifyNodeAndOpMatch runs
    InferAndVerifyTypeMatch over the nodes in topological order), so all of v1..v19 are float there. onnxlint
    walks back from a reader to a typed value at most 16 values deep (ort_type_str) and keeps what it found: listed
    in order, or with a node in the middle met first (its kept answer ends the walk), every value gets its type;
    listed in reverse, the first reader's walk gives up 17 values back and v3..v19 stay untyped (cached so)."""
    assert _relu_chain_types(list(range(20))) == ["tensor(float)"] * 19
    assert _relu_chain_types([9] + [k for k in range(19, -1, -1) if k != 9]) == ["tensor(float)"] * 19
    assert _relu_chain_types(list(range(19, -1, -1))) == ["tensor(float)"] * 2 + [None] * 17


def test_a_value_cached_before_its_producer_is_keyed_is_read_from_the_cache_after():
    """A reader met after its producer reads its input from the cache where the cache answered it before the
    producer was keyed (ort_type_str reads its cache first): here None, a chain's walk given up past the depth
    limit, where the producer's code, worked out later from its typed input, says tensor(float). The readers read
    a keyed producer's code without asking the cache only where nothing was cached for its outputs (Produced.early)."""
    chain = [h.make_node("Relu", ["x" if k == 1 else f"v{k - 1}"], [f"v{k}"], name=f"n{k}") for k in range(1, 21)]
    late = h.make_node("Relu", ["v3"], ["late"], name="late")
    index = GraphIndex(make_model(chain[::-1] + [late], [vi("x", T.FLOAT, [2])],
                                  [vi("v20", T.FLOAT, [2]), vi("late", T.FLOAT, [2])]))
    scope = index.scopes[0]
    cache: node_args.OrtTypes = {}
    produced = node_args.Produced(len(index.nodes))
    got = {}
    for node in index.nodes:
        sig = index.signature(node)
        got[node.name] = node_args.ort_input_types(index, node, sig[3], cache, produced)
        produced.codes[node.index] = produced.code(node_args.output_types(sig, got[node.name]))
    assert cache[id(scope)]["v3"] is None  # the first reader's walk gave up
    assert produced.answers[produced.codes[index.nodes[17].index]] == ("tensor(float)",)  # n3, met after
    assert got["late"] == (None,) == (node_args.ort_type_str(scope, "v3", cache=cache, produced=produced),)


def test_a_local_function_whose_if_branches_define_one_name_is_placed():
    """Both branches of an If inside a local function define `z` (onnx's checker and ORT take it): the view renames
    the main graph's bodies only, so counting the function's made a view of the view for ever (placement: "internal
    error (RecursionError)", the lint: "graph nesting too deep to analyse", exit 2)."""
    def branch(op: str, tag: str) -> onnx.GraphProto:
        return h.make_graph([h.make_node(op, ["x"], ["z"], name=f"{tag}_n")], tag, [], [vi("z", T.FLOAT, None)])
    body = h.make_node("If", ["c"], ["y"], name="if", then_branch=branch("Neg", "t"), else_branch=branch("Identity", "e"))
    fn = h.make_function("loc", "F", ["c", "x"], ["y"], [body], [h.make_opsetid("", 17)])
    m = make_model([h.make_node("F", ["c", "X"], ["Y"], name="call", domain="loc")],
                   [vi("X", T.FLOAT, [1, 2]), vi("c", T.BOOL, [])], [vi("Y", T.FLOAT, [1, 2])])
    m.opset_import.append(h.make_opsetid("loc", 1))
    m.functions.append(fn)
    onnx.checker.check_model(m, full_check=True)
    index = GraphIndex(m)
    assert node_args.scoped_view(index) is None
    pl = placement.Simulator(index, "ort-cuda", "1.24.4", optimization="disabled", tables=_tables_with_if()).run()
    assert {p.node.name for p in pl.nodes.values()} >= {"if", "t_n", "e_n"}
