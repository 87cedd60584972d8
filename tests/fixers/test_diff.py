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
