"""TensorRT's ONNX parser, statically: which nodes it imports, laid out like onnx-tensorrt's own source.

    versions            the version table: every version-dependent gate reads it (no onnx import)
    tables              the support tables (generated from the real parser, or onnx-tensorrt's docs matrix) and
                        which one a requested version resolves to (no onnx import)
    verdicts            what the parser says about each node (the vocabulary rule files use)
    model_importer      ModelImporter.cpp: each node gets the importer its op type names; one verdict per node
    builtin_op_checks   builtin_op_static_checkers.cpp: what a table row says the importer rejects
    behaviour           what the parser was measured doing beyond single-node probes (ignored inputs, built types)
    control_flow        ConditionalHelpers.cpp and the Loop importer: If branch outputs, scan output lengths
    node_facts          what a node presents to the parser: bound dtypes, weights, constant values, ranks

ORT's TensorRT EP (TensorRT's part of the graph, the rest to CUDA and CPU) is ORT's code: `ort/tensorrt_ep`.
The rule-facing adapters are `targets/tensorrt` and `targets/ort_trt`, as `targets/ort` is ORT's.
"""
