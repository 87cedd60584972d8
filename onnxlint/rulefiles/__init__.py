"""Rule files: reading and validating them against the published schema, and their JSON form."""
