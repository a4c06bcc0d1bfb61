import sys

from gomoku_jax.cli import main

sys.exit(main())
