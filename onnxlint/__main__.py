import sys

from onnxlint.cli import main

sys.exit(main())
