"""Reading model files without ever reading their external weights, in one module per job:

- opening: open a regular file within protobuf's limit, parse it (lean: without its weights' bytes);
- external: external-data safety (where each external tensor's bytes are, never outside the model's folder);
- wire: protobuf wire surgery (a model's bytes without its large initializers' data);
- inference: onnx shape inference within budgets;
- checker: onnx's checker, once per model;
- model_file: the types they share.

Nothing here imports onnx at module level: expand_paths serves the CLI's cache hits, onnx-free."""

from onnxlint.model.loading.checker import check_model, checker_message, checker_result, file_complaint
from onnxlint.model.loading.external import (
    OUTSIDE,
    check_external_data,
    external_data_tensors,
    external_location_problem,
    external_tensors,
    has_external_data,
    linked_data_folder,
    relocated,
    safe_external_path,
)
from onnxlint.model.loading.inference import (
    INFER_BUDGET,
    INFER_MAX_NODES,
    index_model,
    infer_shapes,
    inference_cost,
    over_inference_budget,
    reinference_within_budget,
)
from onnxlint.model.loading.model_file import BYTES_ERRORS, ExternalTensor, ModelFile, repair_strings, with_strings_repaired
from onnxlint.model.loading.opening import PROTOBUF_LIMIT, external_data_problem, load, loaded_data_problem
from onnxlint.model.loading.wire import WEIGHT_BYTES, weightless_bytes
from onnxlint.model.paths import expand_paths

__all__ = ["BYTES_ERRORS", "INFER_BUDGET", "INFER_MAX_NODES", "OUTSIDE", "PROTOBUF_LIMIT", "WEIGHT_BYTES", "ExternalTensor",
           "ModelFile", "check_external_data", "check_model", "checker_message", "checker_result", "expand_paths", "file_complaint",
           "external_data_problem", "external_data_tensors", "external_location_problem", "external_tensors",
           "has_external_data", "index_model", "linked_data_folder", "infer_shapes", "inference_cost", "load",
           "loaded_data_problem", "over_inference_budget", "reinference_within_budget", "relocated", "repair_strings",
           "safe_external_path", "weightless_bytes",
           "with_strings_repaired"]
