"""`onnxlint verify`: confirm the predicted placement with a real ORT session (session_child, session, logs,
naming, cuda_status, compare, command)."""
