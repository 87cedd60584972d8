"""When ORT's CUDA EP got a kernel for a node: the first onnxruntime-gpu release after the one checked whose
shipped kernel table (24 releases, `kernel_registry`) matches the node's op version and dtypes, as the
partitioner matches them. A fallback's hint names it: upgrading ORT is a fix that touches no model."""

from __future__ import annotations

from onnxlint.model.graph import NodeRef
from onnxlint.ort import cuda_capability, schema_registry
from onnxlint.ort import kernel_registry as kernels
from onnxlint.ort.partitioner import bind_types
from onnxlint.ort.releases import version_key


def first_cuda_release(node: NodeRef, checked: str | None) -> str | None:
    """The oldest shipped CUDA table newer than `checked` with a kernel this node matches (and that GetCapability
    does not refuse), or None when none has one (or nothing newer is shipped)."""
    if not checked:
        return None
    since = schema_registry.since_version(node.op_type, node.opset, node.domain)
    if since is None:
        since = node.opset if node.opset is not None else 1
    for v in kernels.releases("cuda"):
        if version_key(v) <= version_key(checked):
            continue
        table = kernels.load("cuda", v)
        if not table.has_domain(node.domain):
            continue
        if table.lookup(node.domain, node.op_type, since, bind_types(node, table)).ok \
                and not cuda_capability.cuda_refusal(node, since):
            return v
    return None
