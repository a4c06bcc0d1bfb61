"""End to end: the `gomoku-jax play` page in a real browser, played like a person.

The real server (`create_app` over a `SessionStore`) runs in-process on a free localhost
port with cheap agents (Gomoku's `heuristic` on 7x7, Faux Go's `fauxgo_heuristic` on 5x5,
so compiling takes seconds; the Gomoku one is the program of test_pbrain.py's heuristic
fuzz, which the persistent cache keeps), and Debian's chromium, driven by Playwright, plays a Gomoku
game to its end (with a takeback and the analysis overlay on the way) and a short Faux Go
game ended by passes. The AI's move latency as the page sees it (click to the AI's stone on
the board) and as the server reports it (`ai.move_ms`) is printed (`pytest -s` shows it).

Playwright never downloads a browser here: it launches the chromium found on PATH (or in
GOMOKU_JAX_CHROMIUM); without one, or without the `playwright` package, the test skips.
The last screenshot goes to GOMOKU_JAX_SCREENSHOTS (default: pytest's tmp_path).
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import shutil
import statistics
import time
import urllib.request

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
FIRST_MOVE_MS = 120_000  # the AI's first move on a board compiles its agent
MOVE_MS = 20_000  # later moves (2 shared CPU cores: generous)


def find_chromium() -> str | None:
    env = os.environ.get("GOMOKU_JAX_CHROMIUM")
    if env:
        return env if os.path.exists(env) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium_path():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the Python playwright package is missing: pip install -e '.[dev]' "
                    "(the browser test drives chromium through it)")
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium: install Debian's chromium (apt-get install chromium) or "
                    "point GOMOKU_JAX_CHROMIUM at a chromium binary; Playwright's own "
                    "browser download is not used")
    return path


@pytest.fixture(scope="module")
def server_url():
    """The real app on 127.0.0.1 (a free port), served by uvicorn in a background thread."""
    from gomoku_jax.web.app import create_app
    from gomoku_jax.web.seats import AgentBook
    from gomoku_jax.web.server import background
    from gomoku_jax.web.sessions import SessionStore

    store = SessionStore(AgentBook(agent="heuristic", shipped=False))
    with background(create_app(store)) as url:
        yield url.rstrip("/")


@pytest.fixture(scope="module")
def page(chromium_path, server_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=True,
                                    args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(f"page error: {e}"))
        page.on("console", lambda m: m.type == "error" and page.errors.append(
            f"console error: {m.text}"))
        yield page
        browser.close()


# -- what a person sees -------------------------------------------------------------------------

def count(page, selector: str) -> int:
    return page.locator(selector).count()


def banner_shown(page) -> bool:
    return page.locator("#banner").is_visible()


def api_view(server_url: str, page) -> dict:
    game_id = page.locator("#board").get_attribute("data-game-id")
    with urllib.request.urlopen(f"{server_url}/api/games/{game_id}", timeout=10) as response:
        return json.load(response)


def start_game(page, game: str, size: int, **fields) -> None:
    """Fill the new-game form and press New game; wait for the fresh empty board."""
    page.select_option("#game", game)
    page.fill("#board-size", str(size))
    for field, value in fields.items():
        if page.locator(f"#{field}").evaluate("e => e.tagName") == "SELECT":
            page.select_option(f"#{field}", value)
        else:
            page.fill(f"#{field}", str(value))
    page.click("#new-game")
    page.wait_for_function(
        "([n]) => document.querySelectorAll('#board .hit').length === n"
        " && document.querySelectorAll('#board .stone').length === 0"
        " && document.querySelectorAll('#board .hit.legal').length > 0", arg=[size * size],
        timeout=60_000)
    assert page.locator("#banner").is_hidden()
    assert count(page, "#moves li") == 0


def play_and_wait(page, click, timeout_ms: int) -> float:
    """Do `click` (a person's move), wait until the AI has answered (the move list grew by
    two, the page is the person's again) or the game is over; the page's own ms from the
    click to the AI's move on the board."""
    moves = count(page, "#moves li")
    page.evaluate("""() => {
        window.__clickAt = null; window.__answeredAt = null;
        document.addEventListener('click', () => { window.__clickAt = performance.now(); },
                                  {capture: true, once: true});
        const target = document.querySelectorAll('#moves li').length + 2;
        const observer = new MutationObserver(() => {
            if (document.querySelectorAll('#moves li').length >= target
                    || !document.getElementById('banner').hidden) {
                window.__answeredAt = performance.now(); observer.disconnect();
            }
        });
        observer.observe(document.getElementById('board'), {childList: true});
    }""")
    click()
    page.wait_for_function(
        "([n]) => (document.querySelectorAll('#moves li').length >= n"
        "          && document.querySelector('#board').dataset.aiStatus === 'idle')"
        " || !document.getElementById('banner').hidden", arg=[moves + 2], timeout=timeout_ms)
    message = page.locator("#message")
    assert message.is_hidden(), f"the page shows an error: {message.text_content()}"
    return page.evaluate("() => window.__answeredAt - window.__clickAt")


def click_legal_cell(page, rng: random.Random):
    """A function that clicks one of the board's legal points, chosen at random."""
    targets = page.locator("#board .hit.legal")
    n = targets.count()
    assert n > 0, "no legal point to click while it is the person's turn"
    target = targets.nth(rng.randrange(n))
    return lambda: target.click()


def summary(values: list[float]) -> str:
    if not values:
        return "no moves"
    return (f"min {min(values):.0f} / median {statistics.median(values):.0f} / "
            f"max {max(values):.0f} ms over {len(values)} moves")


def screenshot_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    path = pathlib.Path(os.environ.get("GOMOKU_JAX_SCREENSHOTS") or tmp_path)
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- the games ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_gomoku_and_fauxgo_in_the_browser(page, server_url, tmp_path):
    started = time.monotonic()
    rng = random.Random(0)
    shots = screenshot_dir(tmp_path)

    # Gomoku, 7x7: the page starts the game of its link, then a person uses the form.
    page.goto(f"{server_url}/?game=gomoku&size=7&colour=black")
    page.wait_for_function("document.querySelectorAll('#board .hit').length === 49")
    assert "heuristic" in page.locator("#agent-line").text_content()
    # the form is built from /api/config: every game the page plays, each game's fields
    assert page.locator("#game option").evaluate_all("os => os.map(o => [o.value, o.text])") \
        == [["gomoku", "Gomoku"], ["fauxgo", "Faux Go"]]
    assert [page.locator(f"#{i}").get_attribute("min") for i in ("board-size", "win-length")] \
        == ["5", "3"]
    assert "In a row to win" in page.locator("#win-length-label").text_content()
    start_game(page, "gomoku", 7, rule="freestyle", colour="black")
    assert "Your move" in page.locator("#status").text_content()
    assert page.locator("#pass").is_hidden()

    page_ms, server_ms = [], []
    took_back = False
    for turn in range(41):
        if banner_shown(page):
            break
        ms = play_and_wait(page, click_legal_cell(page, rng),
                           FIRST_MOVE_MS if turn == 0 else MOVE_MS)
        stones = count(page, "#board .stone")
        assert count(page, "#moves li") == stones  # Gomoku captures nothing
        assert count(page, "#board .last-move") == 1
        if banner_shown(page):
            break
        assert stones == 2 * (turn + 1) - (2 if took_back else 0)
        view = api_view(server_url, page)
        assert view["ai"]["status"] == "idle" and view["your_turn"]
        if turn > 0:
            page_ms.append(ms)
            server_ms.append(view["ai"]["move_ms"])
        if turn == 2 and not took_back:  # take back mid-game: two stones go
            page.click("#takeback")
            page.wait_for_function("([n]) => document.querySelectorAll('#board .stone').length"
                                   " === n", arg=[stones - 2], timeout=MOVE_MS)
            assert count(page, "#moves li") == stones - 2
            assert page.locator("#message").is_hidden()
            took_back = True
    else:
        pytest.fail("the Gomoku game did not end in 41 moves")

    view = api_view(server_url, page)
    assert view["over"] and view["result"]
    assert view["result"] in page.locator("#banner").text_content()
    assert "Game over" in page.locator("#status").text_content()
    assert count(page, "#board .hit.legal") == 0
    assert count(page, "#board .stone") == count(page, "#moves li") == len(view["moves"])
    assert count(page, "#board .stone.black") + count(page, "#board .stone.white") \
        == sum(abs(v) for row in view["board"] for v in row)

    # the analysis: the AI's policy as a heat map, its value as a win expectation
    assert count(page, "#board .heat") == 0
    page.check("#show-analysis")
    page.wait_for_selector("#board .heat", timeout=5_000)
    assert count(page, "#board .heat-label") >= 1
    win = page.locator("#value").text_content()
    assert win.endswith("%"), win
    assert abs(float(win[:-1]) - 50 * (view["ai"]["value"] + 1)) <= 1
    gomoku_shot = shots / "play_gomoku.png"
    page.screenshot(path=str(gomoku_shot), full_page=True)
    page.uncheck("#show-analysis")
    assert count(page, "#board .heat") == 0

    # The rule selector offers every rule with its note; renju's forbidden points (the
    # view's `forbidden`, set here on the finished game's view: a real renju seat compiles
    # for a minute, tests/web/test_web_rules.py plays one through the API) draw as crosses.
    from gomoku_jax.games.gomoku.config import RULES

    assert page.locator("#rule option").evaluate_all("os => os.map(o => o.value)") == \
        list(RULES)
    page.select_option("#rule", "renju")
    assert "double-three" in page.locator("#rule-note").text_content()
    page.select_option("#rule", "caro")
    assert "block both ends" in page.locator("#rule-note").text_content()
    assert count(page, "#board .forbidden") == 0
    page.evaluate("""() => {
        const forbidden = state.view.legal.map((_, a) => a === 10 || a === 20);
        state.view = { ...state.view, forbidden }; render(); }""")
    assert page.locator("#board .forbidden").evaluate_all(
        "gs => gs.map(g => Number(g.dataset.action))") == [10, 20]
    page.select_option("#rule", "freestyle")

    # Faux Go, 5x5: a few placements, then passes until the game ends (2 N^2 plies at most)
    start_game(page, "fauxgo", 5, komi=0.5, colour="black")
    assert page.locator("#pass").is_visible() and page.locator("#scores-panel").is_visible()
    assert page.locator("#rule").is_hidden() and page.locator("#win-length").is_hidden()
    assert page.locator("#komi").get_attribute("step") == "0.5"
    for turn in range(6):
        if banner_shown(page):
            break
        play_and_wait(page, click_legal_cell(page, rng), FIRST_MOVE_MS if turn == 0 else MOVE_MS)
    page.check("#show-analysis")  # mid-game, with enclosures and the AI's policy
    page.screenshot(path=str(shots / "play_fauxgo_midgame.png"), full_page=True)
    for _ in range(2 * 25):
        if banner_shown(page):
            break
        play_and_wait(page, lambda: page.click("#pass"), MOVE_MS)
    assert banner_shown(page), "the Faux Go game did not end"
    view = api_view(server_url, page)
    assert view["over"] and view["result"] in page.locator("#banner").text_content()
    assert page.locator("#pass").is_disabled()
    for side in ("black", "white"):
        assert float(page.locator(f"#score-{side}").text_content()) == view["scores"][side]
        assert int(page.locator(f"#captures-{side}").text_content()) == view["captures"][side]
    assert view["moves"][-1]["text"] == "pass"
    assert page.locator("#moves li").last.text_content().startswith("pass")
    shot = shots / "play_fauxgo.png"
    page.screenshot(path=str(shot), full_page=True)

    assert not page.errors, page.errors
    print(f"\nbrowser test: {time.monotonic() - started:.1f} s; screenshots {gomoku_shot} {shot}")
    print(f"Gomoku 7x7 heuristic, AI move latency after the first move: "
          f"page (click to the AI's stone) {summary(page_ms)}; "
          f"server ai.move_ms {summary(server_ms)}")
