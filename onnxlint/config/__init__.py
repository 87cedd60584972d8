"""Configuration: config files, the settings they make with overrides, and deployment intent beside a model."""
