"""Text and SVG pictures of states (`gomoku_jax.games.gomoku.render`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled

import gomoku_jax
from gomoku_jax import to_svg, to_text
from gomoku_jax.games.gomoku import render
from gomoku_jax.games.gomoku.state import BLACK, WHITE

SVG = "{http://www.w3.org/2000/svg}"
E9 = gomoku_jax.make("gomoku", board_size=9, rule="exact5")
E5K3 = gomoku_jax.make("gomoku", board_size=5, win_length=3)


def parse_text_board(text: str, n: int):
    """(board int[n, n], last action or -1) read back from `board_to_text`'s grid."""
    lines = text.splitlines()
    assert lines[0].split() == [str(c) for c in range(n)]
    board, last = np.zeros((n, n), int), -1
    for r in range(n):
        line = lines[1 + r]
        assert int(line[:3]) == r
        cells = line[4:].ljust(3 * n)
        for c in range(n):
            cell = cells[3 * c:3 * c + 3]
            board[r, c] = {"X": BLACK, "O": WHITE, ".": 0}[cell[1]]
            if cell[0] == "[":
                assert cell[2] == "]" and last == -1
                last = r * n + c
    return board, last


def stack(states):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def circles(svg: str):
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == SVG + "svg"
    return root, root.findall(f"{SVG}circle")


# -------------------------------------------------------------------------------- text

@pytest.mark.parametrize("moves, status", [
    ([], "black (X) to move"),
    ([(4, 4)], "white (O) to move"),
    ([(4, 4), (0, 8)], "black (X) to move"),
    ([(0, 0), (8, 8), (0, 1), (8, 7), (0, 2), (8, 6), (0, 3), (8, 5), (0, 4)], "black (X) won"),
])
def test_text_shows_stones_last_move_and_status(moves, status):
    state = E9.from_moves(moves, allow_terminal=True)
    text = to_text(state)
    assert text.splitlines()[-1] == status
    assert str(state) == text
    board, last = parse_text_board(text, 9)
    np.testing.assert_array_equal(board, np.asarray(state.board))
    assert last == (moves[-1][0] * 9 + moves[-1][1] if moves else -1)
    grid = "\n".join(text.splitlines()[:-1])
    assert grid.count("X") == sum(1 for i in range(len(moves)) if i % 2 == 0)
    assert grid.count("O") == len(moves) // 2


def test_text_status_of_white_win_draw_and_illegal_move():
    white_win = E5K3.from_moves([(4, 4), (0, 0), (4, 2), (0, 1), (2, 4), (0, 2)],
                                allow_terminal=True)
    assert to_text(white_win).endswith("white (O) won")
    drawn = gomoku_jax.make("gomoku", board_size=5).from_board(
        np.array([[1, 1, -1, -1, 1], [-1, -1, 1, 1, -1], [1, 1, -1, -1, 1],
                  [-1, -1, 1, 1, -1], [1, 1, -1, -1, 1]]), allow_terminal=True)
    assert to_text(drawn).endswith("\ndraw")
    # an illegal (off-board) last action: white lost, no bracketed cell
    lost = compiled(E5K3).step(E5K3.from_moves([(2, 2)]), np.int32(25))
    text = to_text(lost)
    assert text.endswith("black (X) won") and "[" not in text


def test_board_to_text_layout():
    board = np.zeros((5, 5), int)
    board[1, 3], board[4, 0] = 1, -1
    text = render.board_to_text(board, last_action=8)
    lines = text.splitlines()
    assert len(lines) == 6
    assert lines[2] == "  1  .  .  . [X] ."
    assert lines[5].startswith("  4  O")
    assert render.board_to_text(board).count("[") == 0


def test_text_of_a_batch_renders_element_index():
    games = [[], [(1, 1)], [(1, 1), (2, 2), (3, 3)]]
    states = [E9.from_moves(g) for g in games]
    batch = stack(states)
    for i, s in enumerate(states):
        assert to_text(batch, i) == to_text(s)
    nested = jax.tree.map(lambda x: jnp.stack([x, x]), batch)  # [2, 3]
    assert to_text(nested, 4) == to_text(states[1])
    assert to_text(batch) == to_text(states[0])


# --------------------------------------------------------------------------------- SVG

def test_svg_has_a_circle_per_stone_and_a_last_move_marker():
    moves = [(4, 4), (4, 5), (3, 3), (0, 8), (8, 0)]
    state = E9.from_moves(moves)
    svg = to_svg(state)
    root, cs = circles(svg)
    stones = [c for c in cs if c.get("fill") in ("black", "white")]
    markers = [c for c in cs if c.get("fill") == "red"]
    assert len(cs) == len(moves) + 1
    assert len(stones) == len(moves) and len(markers) == 1
    assert sum(c.get("fill") == "black" for c in stones) == 3
    # stone and marker positions: cx from the column, cy from the row
    cell = 28
    pos = {(round(float(c.get("cy"))), round(float(c.get("cx")))): c.get("fill") for c in stones}
    assert pos == {(cell + r * cell, cell + c * cell): ("black" if i % 2 == 0 else "white")
                   for i, (r, c) in enumerate(moves)}
    assert (float(markers[0].get("cx")), float(markers[0].get("cy"))) == (cell, cell + 8 * cell)
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == to_text(state)
    assert title.text.endswith("white (O) to move")
    # 9 horizontal and 9 vertical grid lines, coordinates 0..8 on both sides
    assert len(root.findall(f"{SVG}line")) == 18
    assert len(root.findall(f"{SVG}text")) == 18
    size = 2 * cell + 8 * cell
    assert root.get("width") == str(size) and root.get("viewBox") == f"0 0 {size} {size}"


def test_svg_of_the_empty_board_and_of_an_illegal_last_action():
    _, cs = circles(to_svg(E9.init(jax.random.key(0))))
    assert cs == []
    lost = compiled(E5K3).step(E5K3.from_moves([(2, 2)]), np.int32(-1))
    _, cs = circles(to_svg(lost))
    assert [c.get("fill") for c in cs] == ["black"]  # no marker for action -1


def test_svg_heatmap_adds_rects():
    state = E9.from_moves([(4, 4)])
    root, _ = circles(to_svg(state))
    base_rects = root.findall(f"{SVG}rect")
    assert len(base_rects) == 1  # the background
    heat = np.zeros((9, 9))
    heat[0, 0], heat[2, 3], heat[8, 8], heat[5, 5] = 0.1, 0.5, 1.0, -3.0  # negatives ignored
    for h in (heat, heat.reshape(-1), jnp.asarray(heat, jnp.float32)):
        root, cs = circles(to_svg(state, heatmap=h))
        rects = root.findall(f"{SVG}rect")
        assert len(rects) == 1 + 3
        assert len(cs) == 2  # the heat map does not add or remove stones
        tips = sorted(float(r.find(f"{SVG}title").text) for r in rects[1:])
        np.testing.assert_allclose(tips, [0.1, 0.5, 1.0], rtol=1e-4)
        opac = {(float(r.get("x")), float(r.get("y"))): float(r.get("fill-opacity"))
                for r in rects[1:]}
        assert max(opac.values()) == pytest.approx(0.85)  # scaled to the maximum
    root, _ = circles(to_svg(state, heatmap=np.zeros(81)))
    assert len(root.findall(f"{SVG}rect")) == 1


def test_svg_cell_size():
    root, cs = circles(to_svg(E9.from_moves([(0, 0)]), cell=10))
    assert root.get("width") == str(2 * 10 + 8 * 10)
    assert float(cs[0].get("cx")) == 10.0


def test_repr_html_is_the_svg():
    state = E9.from_moves([(4, 4), (4, 5)])
    html = state._repr_html_()
    assert html.startswith("<svg") and html == to_svg(state)
    circles(html)


def test_svg_of_a_batch_renders_element_index():
    games = [[(0, 0)], [(1, 1), (2, 2)], [(1, 1), (2, 2), (3, 3)]]
    states = [E9.from_moves(g) for g in games]
    batch = stack(states)
    for i, s in enumerate(states):
        svg = to_svg(batch, i)
        assert svg == to_svg(s)
        _, cs = circles(svg)
        assert len(cs) == len(games[i]) + 1
