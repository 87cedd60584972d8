"""--diff's description of a fix (fixers/diff.py)."""

from fix_cases import _noisy_fold_model


def test_diff_lists_nodes_one_per_line_grouped_by_op(tmp_path):
    from onnxlint.fixers import diff

    m = _noisy_fold_model()
    from onnxlint.fixers.fold_shapes import fold

    lines = diff.describe_lines(m, fold(m))
    removed = [ln for ln in lines if ln.startswith("- ")]
    assert len(removed) >= 3 and all(len(ln.split()) == 3 for ln in removed)  # "- Op location"
    ops = [ln.split()[1] for ln in lines if ln[:2] in ("- ", "+ ", "~ ")]
    assert ops == sorted(ops)


def test_a_name_with_line_breaks_stays_on_its_line(tmp_path):
    """The printer writes names as they are: a node name holding a newline broke the diff's line there, its rest a
    line of its own, raw (here a forged `+++` header and hunk). Each line break shows as its escape, in its line."""
    import onnx
    from onnx import TensorProto, helper

    from onnxlint.fixers import diff

    forged = "r\n+++ b/other.onnx\n@@ -1 +1 @@\n+   fine\u2028x\x85y\r"

    def model(op: str) -> onnx.ModelProto:
        node = helper.make_node(op, ["x" + forged], ["y"], name=forged, text="s\nt")
        graph = helper.make_graph([node], "g" + forged, [helper.make_tensor_value_info("x" + forged, TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                                  initializer=[helper.make_tensor("w" + forged, TensorProto.FLOAT, [1], [1.0])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8,
                                 producer_name="p\nq")

    text = diff.unified(model("Relu"), model("Sigmoid"), "m.onnx")
    lines = text.splitlines()
    assert [ln for ln in lines if ln.startswith(("+++", "---", "@@"))] == ["--- a/m.onnx", "+++ b/m.onnx", lines[2]], text
    changed = [ln for ln in lines[3:] if ln[:1] in "+-"]
    assert len(changed) == 2 and all("\\n+++ b/other.onnx\\n@@ -1 +1 @@\\n+   fine\\u2028x\\x85y\\r" in ln
                                     for ln in changed), changed
    assert '<text: string = "s\\nt">' in changed[0], changed
    assert not any(ch in ln for ln in diff.text_lines(model("Relu")) for ch in "\n\r\x85\u2028")
    # a model too large to diff as text is described node by node: the same names, the same escapes
    described = diff.describe_lines(model("Relu"), model("Sigmoid"))
    assert len(described) == 1 and not any(ch in ln for ln in described for ch in "\n\r\x85\u2028"), described


def test_a_constants_values_are_diffed_whatever_bytes_they_hold():
    """Line breaks are escaped in text, never in a tensor's raw bytes: a float whose bytes hold 0x0a (10.00001)
    made the printer refuse the node ("Data size mismatch"), and --diff failed on any such Constant."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from onnxlint.fixers import diff

    values = numpy_helper.from_array(np.frombuffer(bytes([0x0A, 0, 0x20, 0x41] * 3), dtype=np.float32), "c")

    def model(op: str) -> onnx.ModelProto:
        nodes = [helper.make_node("Constant", [], ["c"], value=values), helper.make_node(op, ["c"], ["y"])]
        graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)

    text = diff.unified(model("Relu"), model("Sigmoid"), "m.onnx")
    # the values as onnx's printer writes them (onnx 1.21: 10, 1.23: 10.00001)
    assert "Constant <value: tensor = float[3] c {10" in text and "+      y = Sigmoid (c)" in text, text


def test_a_file_name_with_line_breaks_stays_in_its_header_line():
    """The `---`/`+++` lines carried the file name as it was: a model named `a<LF>::warning::x.onnx` broke each
    header in two, its rest a line of its own (raw in the API's .diff). It is escaped as the names inside are."""
    import onnx
    from onnx import TensorProto, helper

    from onnxlint.fixers import diff

    def model(op: str) -> onnx.ModelProto:
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)

    for name in ("d/a\n::warning::x.onnx", "a\r\u2028b.onnx"):
        lines = diff.unified(model("Relu"), model("Sigmoid"), name).splitlines()
        shown = diff._name(name)
        assert lines[:2] == [f"--- a/{shown}", f"+++ b/{shown}"] and lines[2].startswith("@@"), lines
