"""Solve rates of agents on the tactical suite (see gomoku_jax/cli/tactics.py).

    python experiments/tactics.py --agents random,heuristic,mcts --out tactics.md
"""

import sys

from gomoku_jax.cli import tactics as tactics_report

if __name__ == "__main__":
    sys.exit(tactics_report.main(tactics_report.build_parser().parse_args()))
