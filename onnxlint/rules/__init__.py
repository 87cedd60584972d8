"""The rule language: a rule, its comparisons, the per-model context it reads, predicates and messages."""
