"""Round-robin tournament over agent specs: an Elo table as markdown and JSON.

    python experiments/tournament.py --agents random,proximity_random,heuristic \
        --board-size 9 --games 64 --out table.md --json table.json

Every pair plays each opening with both sides (`gomoku_jax.eval.arena`); the ratings are
a Bradley-Terry / Elo maximum-likelihood fit (`gomoku_jax.eval.elo.fit_ratings`).
"""

import sys

from gomoku_jax.cli import tournament

if __name__ == "__main__":
    sys.exit(tournament.main(tournament.build_parser().parse_args()))
