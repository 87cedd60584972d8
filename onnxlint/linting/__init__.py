"""Linting a model: the plan, the engine that evaluates rules, the report, the baseline and the --fix driver."""
