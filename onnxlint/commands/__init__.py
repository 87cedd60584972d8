"""One module per command of the CLI (lint, doctor, ...): what runs once the arguments are parsed."""
