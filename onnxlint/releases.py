"""Which runtime releases a lint checks against: the configured ones, else the newest shipped tables.

The same model must get the same answer on every machine: the default never depends on what happens to be
installed (`pip install .` and `pip install '.[test]'` pulled different onnxruntime releases, and a pre-commit
hook's environment another). The installed onnxruntime is read only when asked for by name
(`--ort-version installed`)."""

from __future__ import annotations

import re

INSTALLED = "installed"  # the --ort-version value that asks for the installed onnxruntime's release


def default_ort() -> str:
    """The newest ORT release every shipped kernel table (CPU, CUDA) has: one release for all ORT targets."""
    from onnxlint.ort import kernel_registry as kernels

    shipped = [set(v) for v in kernels.available().values()]
    common = set.intersection(*shipped) if shipped else set()
    if not common:
        raise LookupError("no ORT release has a shipped kernel table for every provider")
    from onnxlint.ort.releases import version_key

    return max(common, key=version_key)


def ort(requested: str | None) -> tuple[str, str | None]:
    """(the ORT release to read tables of, a note or None). `installed` without onnxruntime installed falls back
    to the default, with a note saying so."""
    if requested != INSTALLED:
        return requested or default_ort(), None
    from onnxlint.ort import kernel_registry as kernels

    found = kernels.installed_ort_version()
    if found is None:
        default = default_ort()
        return default, f"ORT {default} tables used (--ort-version installed, but no onnxruntime is installed)"
    return found, None


def default_trt() -> str:
    """The newest parser-verified TensorRT table (what `tensorrt.default_version` picks), from the file names
    alone: the summary of a run whose models all come from the cache must not import onnx (tensorrt does)."""
    from packaging.version import Version

    from onnxlint import resources

    labels = [p.name[len("trt-"):-len(".json")] for p in (resources.data_dir() / "tensorrt").glob("trt-*.json")]

    def key(label: str) -> tuple:  # tensorrt._sort_key: '10.1+rtx1.4' after '10.1', the RTX line after 8.x
        v = Version(label)
        return (v.release[0], 1 if v.local else 0, v.release, v.local or "")

    return max(labels, key=key)


def trt(requested: str | None) -> str:
    """The TensorRT table label a requested version resolves to."""
    if requested is None:
        return default_trt()
    from onnxlint import resources

    if (resources.data_dir() / "tensorrt" / f"trt-{requested}.json").is_file():
        return requested
    from onnxlint import tensorrt

    return tensorrt.resolve(requested)[0]


def checked(runtimes: set[str], ort_version: str | None, trt_version: str | None) -> str:
    """`ORT 1.31.1, TensorRT 10.1+rtx1.4`: the releases a run checks, each runtime ("ORT", "TensorRT": what
    the selected targets read, `Target.runtime`) named once, for the summary line."""
    parts = []
    if "ORT" in runtimes:
        parts.append(f"ORT {ort(ort_version)[0]}")
    if "TensorRT" in runtimes:
        label = trt(trt_version)
        rtx = re.search(r"\+rtx(\d+(?:\.\d+)*)", label)
        # the product the table was measured on; a TensorRT 10 user is told what answers for them, once a run
        parts.append(f"TensorRT-RTX {rtx.group(1)} (its 10.x-line parser stands in for TensorRT 10: measured on "
                     "RTX, not on TensorRT 10 itself, which has plugins RTX lacks)" if rtx else f"TensorRT {label}")
    return ", ".join(parts)
