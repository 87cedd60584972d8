"""ONNX Runtime, statically: what a session does with a model, laid out like ORT's own source tree.

    releases            the release table: every release-dependent gate reads it
    kernel_registry     core/framework/kernel_registry.cc: the generated kernel tables and their lookup
    model_load          model.cc / model_load_utils.h: the IR version and opset a release loads
    optimizer/          core/optimizer: the Level-1 graph transformers that run before partitioning
    graph_viewer        core/graph/graph_viewer.cc: ORT's topological order
    partitioner         core/framework/graph_partitioner.cc: each EP claims its nodes
    cuda_capability     providers/cuda/cuda_execution_provider.cc: GetCapability refusals, kernels that throw
    function_expansion  a node no EP has a kernel for, inlined into its ONNX function body
    cpu_preferred       core/framework/fallback_cpu_capability.cc: GetCpuPreferredNodes
    memcpy              core/optimizer/transformer_memcpy.cc: the copies between host and device
    verdicts            what the partitioner says about each node (the vocabulary rule files use)
    tensorrt_ep         providers/tensorrt: TensorRT's part of the graph, the rest to CUDA and CPU
"""
