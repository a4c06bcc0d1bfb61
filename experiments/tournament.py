"""Round-robin tournament over agent specs: an Elo table as markdown and JSON.

    python experiments/tournament.py --agents random,proximity_random,heuristic \
        --board-size 9 --games 64 --out table.md --json table.json

Every pair plays each opening with both sides (`gomoku_jax.eval.arena`); the ratings are
one maximum-likelihood fit of every game with its colours and a first-move term
(`gomoku_jax.eval.elo.fit_games`), with intervals from the joint covariance.
"""

import sys

from gomoku_jax.cli import tournament

if __name__ == "__main__":
    sys.exit(tournament.main(tournament.build_parser().parse_args()))
