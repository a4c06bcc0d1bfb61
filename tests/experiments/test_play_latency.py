"""experiments/play_latency.py: a game through real HTTP to the play app, its AI moves timed
beside the same agent's direct moves on the same positions."""

from experiment_scripts import load_script

pl = load_script("play_latency")


def test_smallest_run_end_to_end(capsys):
    assert pl.main(["--board-size", "7", "--agent", "heuristic", "--moves", "3"]) == 0
    out = capsys.readouterr().out
    assert "| UI: move request to the AI's stone (HTTP, polling) |" in out
    assert "| direct: TimedPlayer.move, same positions, no server |" in out
    assert "agent heuristic" in out
