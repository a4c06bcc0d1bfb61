// gomoku-jax play: the page's logic. Talks to the JSON API of gomoku_jax/web/app.py
// (GET /api/config, POST /api/games, GET /api/games/{id}, POST .../move, POST .../takeback)
// and draws the board as SVG in the style of the notebooks' renderers.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CELL = 32;           // SVG units per cell; the SVG itself scales with the window
const POLL_MS = 100;       // poll interval while the AI is compiling or thinking (localhost)
const QUICK_POLL_MS = 20;  // the first poll after a move: a fast AI's reply shows at once
const TOP_LABELS = 5;      // analysis: percentages on this many most likely cells
const BUSY = new Set(["compiling", "thinking"]);

const $ = (id) => document.getElementById(id);
const state = {
  config: null,      // GET /api/config
  view: null,        // the last game view
  busy: false,       // a request of the person's is in flight
  pollTimer: null,
  compilingSince: null,
};

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    throw new ApiError(`Cannot reach the server (${err.message}). Is gomoku-jax play still running?`, 0);
  }
  let data = null;
  try { data = await response.json(); } catch (_) { /* not JSON: reported below */ }
  if (!response.ok) {
    const what = data && data.error ? data.error : `${response.status} ${response.statusText}`;
    throw new ApiError(what, response.status);
  }
  if (data === null) throw new ApiError(`${method} ${path}: the server's reply is not JSON`, response.status);
  return data;
}

function showMessage(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = false;
}

function clearMessage() {
  $("message").hidden = true;
  $("message").textContent = "";
}

// Runs one of the person's requests (new game, move, pass, takeback): one at a time,
// errors shown in #message, the returned view drawn.
async function act(method, path, body) {
  if (state.busy) return;
  state.busy = true;
  clearMessage();
  render();
  try {
    setView(await api(method, path, body), QUICK_POLL_MS);
  } catch (err) {
    showMessage(err.message);
  } finally {
    state.busy = false;
    render();
  }
}

function setView(view, pollDelay = POLL_MS) {
  state.view = view;
  if (view.ai.status === "compiling") state.compilingSince = state.compilingSince || Date.now();
  else state.compilingSince = null;
  history.replaceState(null, "", `#game=${encodeURIComponent(view.id)}`);
  render();
  schedulePoll(pollDelay);
}

function schedulePoll(delay = POLL_MS) {
  clearTimeout(state.pollTimer);
  const view = state.view;
  if (!view || !BUSY.has(view.ai.status)) return;
  state.pollTimer = setTimeout(async () => {
    try {
      const fresh = await api("GET", `/api/games/${encodeURIComponent(view.id)}`);
      if (state.view && state.view.id === fresh.id) setView(fresh);
    } catch (err) {
      showMessage(`While waiting for the AI: ${err.message}`);
      if (err.status !== 404) schedulePoll(1000);  // the server may come back
    }
  }, delay);
}

// ---------------------------------------------------------------- actions

function newGame(event) {
  if (event) event.preventDefault();
  const game = $("game").value;
  const body = { game, colour: $("colour").value };
  for (const field of gameFields(game)) {
    const value = $(fieldId(field)).value;
    body[field.name] = field.kind === "int" || field.kind === "float" ? Number(value) : value;
  }
  const previous = state.view && state.view.id;
  return act("POST", "/api/games", body).then(() => {
    if (previous && state.view && state.view.id !== previous) {
      // Free the old game on the server; a failure here is harmless but still said.
      api("DELETE", `/api/games/${encodeURIComponent(previous)}`).catch((err) => {
        if (err.status !== 404) showMessage(`Could not delete the previous game: ${err.message}`);
      });
    }
  });
}

function play(action) {
  const view = state.view;
  if (!view || !view.your_turn || state.busy || !view.legal[action]) return;
  act("POST", `/api/games/${encodeURIComponent(view.id)}/move`, { action });
}

function pass() {
  const view = state.view;
  if (!view) return;
  act("POST", `/api/games/${encodeURIComponent(view.id)}/move`, { pass: true });
}

function takeback() {
  const view = state.view;
  if (!view) return;
  act("POST", `/api/games/${encodeURIComponent(view.id)}/takeback`);
}

// ---------------------------------------------------------------- board

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function starPoints(n) {
  const d = n >= 13 ? 3 : n >= 9 ? 2 : -1;
  if (d < 0) return [];
  const lines = n % 2 ? [d, (n - 1) / 2, n - 1 - d] : [d, n - 1 - d];
  return lines.flatMap((r) => lines.map((c) => [r, c]));
}

function renderBoard() {
  const svg = $("board");
  const view = state.view;
  svg.replaceChildren();
  if (!view) return;
  const n = view.board_size;
  const size = CELL * (n + 1);
  const xy = (i) => CELL * (i + 1);
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.style.maxWidth = `${(n + 1) * 64}px`;  // small boards: not giant stones
  svg.dataset.gameId = view.id;
  svg.dataset.aiStatus = view.ai.status;

  const defs = el("defs", {}, svg);
  const grad = (id, stops, attrs) => {
    const g = el("radialGradient", { id, ...attrs }, defs);
    stops.forEach(([offset, color]) => el("stop", { offset, "stop-color": color }, g));
  };
  grad("g-black", [["0%", "#6a6a6a"], ["45%", "#222"], ["100%", "#000"]], { cx: "35%", cy: "35%", r: "65%" });
  grad("g-white", [["0%", "#ffffff"], ["70%", "#eeeae2"], ["100%", "#c8c2b6"]], { cx: "35%", cy: "35%", r: "70%" });
  const wood = el("linearGradient", { id: "g-wood", x1: "0", y1: "0", x2: "1", y2: "1" }, defs);
  el("stop", { offset: "0%", "stop-color": "#e6c275" }, wood);
  el("stop", { offset: "100%", "stop-color": "#d4a851" }, wood);

  el("rect", { class: "wood", width: size, height: size, rx: 6, fill: "url(#g-wood)" }, svg);

  // Faux Go: enclosures (empty cells owned by a side) shaded in that side's colour
  if (view.owner) {
    view.owner.forEach((row, r) => row.forEach((o, c) => {
      if (o === 0 || view.board[r][c] !== 0) return;
      el("rect", { class: `owner ${o > 0 ? "black" : "white"}`, x: xy(c) - CELL / 2, y: xy(r) - CELL / 2,
                   width: CELL, height: CELL }, svg);
    }));
  }

  // the AI's policy as a heat map under the stones
  const policy = $("show-analysis").checked && view.ai.policy ? view.ai.policy : null;
  const top = [];
  if (policy) {
    const cells = policy.slice(0, n * n);
    const max = Math.max(...cells) || 1;
    cells.forEach((p, a) => {
      if (p <= 0) return;
      const r = Math.floor(a / n), c = a % n;
      const heat = el("rect", { class: "heat", "data-p": p.toFixed(4), x: xy(c) - CELL / 2, y: xy(r) - CELL / 2,
                                width: CELL, height: CELL, "fill-opacity": (0.1 + 0.7 * p / max).toFixed(3) }, svg);
      el("title", {}, heat).textContent = `${(100 * p).toFixed(1)}%`;
      top.push([p, a]);
    });
    top.sort((x, y) => y[0] - x[0]);
  }

  for (let i = 0; i < n; i++) {
    el("line", { class: "grid", x1: xy(0), y1: xy(i), x2: xy(n - 1), y2: xy(i) }, svg);
    el("line", { class: "grid", x1: xy(i), y1: xy(0), x2: xy(i), y2: xy(n - 1) }, svg);
    el("text", { class: "coord", x: xy(i), y: CELL * 0.4 }, svg).textContent = i;
    el("text", { class: "coord", x: CELL * 0.3, y: xy(i) + CELL * 0.13 }, svg).textContent = i;
  }
  starPoints(n).forEach(([r, c]) => el("circle", { class: "star", cx: xy(c), cy: xy(r), r: CELL * 0.09 }, svg));

  view.board.forEach((row, r) => row.forEach((v, c) => {
    if (v === 0) return;
    const colour = v > 0 ? "black" : "white";
    el("circle", { class: `stone ${colour}`, "data-action": r * n + c, cx: xy(c), cy: xy(r), r: CELL * 0.46,
                   fill: `url(#g-${colour})` }, svg);
  }));

  const last = view.last_action;
  if (last >= 0 && last < n * n) {
    const r = Math.floor(last / n), c = last % n;
    const onBlack = view.board[r][c] > 0;
    if (view.owner) {  // a game that shades enclosures marks the last stone with a ring, as Go does
      el("circle", { class: "last-move ring", "data-action": last, cx: xy(c), cy: xy(r), r: CELL * 0.2 }, svg);
    } else {
      el("circle", { class: `last-move dot${onBlack ? " on-black" : ""}`, "data-action": last,
                     cx: xy(c), cy: xy(r), r: CELL * 0.14 }, svg);
    }
  }

  // forbidden points (the view's `forbidden`, e.g. renju's for black) as small red crosses
  const arm = CELL * 0.16;
  (view.forbidden || []).forEach((f, a) => {
    if (!f || a >= n * n) return;
    const x = xy(a % n), y = xy(Math.floor(a / n));
    const cross = el("g", { class: "forbidden", "data-action": a }, svg);
    el("line", { x1: x - arm, y1: y - arm, x2: x + arm, y2: y + arm }, cross);
    el("line", { x1: x - arm, y1: y + arm, x2: x + arm, y2: y - arm }, cross);
    el("title", {}, cross).textContent = view.forbidden_note || "forbidden";
  });

  top.slice(0, TOP_LABELS).forEach(([p, a]) => {
    if (p < 0.005) return;
    const r = Math.floor(a / n), c = a % n;
    // under a stone's centre (where the last-move mark is) when the cell holds one
    const y = view.board[r][c] !== 0 ? xy(r) + CELL * 0.42 : xy(r) + CELL * 0.13;
    el("text", { class: "heat-label", x: xy(c), y }, svg).textContent =
      p >= 0.995 ? "100" : p >= 0.1 ? (100 * p).toFixed(0) : (100 * p).toFixed(1);
  });

  // hover preview and transparent hit targets on top of everything
  const ghost = el("circle", { id: "ghost", class: `ghost ${view.human}`, r: CELL * 0.46, visibility: "hidden" }, svg);
  const clickable = view.your_turn && !state.busy;
  for (let a = 0; a < n * n; a++) {
    const r = Math.floor(a / n), c = a % n;
    const legal = clickable && view.legal[a];
    el("rect", { class: legal ? "hit legal" : "hit", "data-action": a, x: xy(c) - CELL / 2, y: xy(r) - CELL / 2,
                 width: CELL, height: CELL, "aria-label": `row ${r}, column ${c}` }, svg);
  }
  svg.onclick = (event) => {
    const target = event.target.closest(".hit.legal");
    if (target) play(Number(target.dataset.action));
  };
  svg.onpointerover = (event) => {
    const target = event.target.closest(".hit.legal");
    if (!target) { ghost.setAttribute("visibility", "hidden"); return; }
    const a = Number(target.dataset.action);
    ghost.setAttribute("cx", xy(a % n));
    ghost.setAttribute("cy", xy(Math.floor(a / n)));
    ghost.setAttribute("visibility", "visible");
  };
  svg.onpointerleave = () => ghost.setAttribute("visibility", "hidden");
}

// ---------------------------------------------------------------- panels

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

function renderStatus() {
  const view = state.view;
  const box = $("status");
  box.className = "status";
  if (!view) { box.textContent = state.busy ? "Starting a game…" : "No game: start one below."; return; }
  const ai = view.ai;
  const spinner = '<span class="spinner" aria-hidden="true"></span>';
  const aiPassed = view.moves.length && view.moves[view.moves.length - 1].by === "ai"
    && view.moves[view.moves.length - 1].text === "pass";
  if (view.over) {
    box.textContent = "Game over.";
    box.classList.add("over");
  } else if (ai.status === "compiling") {
    const secs = state.compilingSince ? Math.round((Date.now() - state.compilingSince) / 1000) : 0;
    box.innerHTML = `${spinner}<span>The AI is compiling for this board size (first move only, up to a minute)… `
      + `<span class="muted">${secs} s</span></span>`;
    box.classList.add("compiling");
  } else if (ai.status === "thinking") {
    box.innerHTML = `${spinner}<span>AI is thinking…</span>`;
    box.classList.add("thinking");
  } else if (ai.status === "error") {
    box.textContent = `The AI failed: ${ai.message || "unknown error"}`;
    box.classList.add("error");
  } else if (view.your_turn) {
    box.innerHTML = `<span class="dot ${view.human}"></span><span>${aiPassed ? "The AI passed. " : ""}`
      + `Your move — you play ${cap(view.human)}</span>`;
    if (ai.message) {  // e.g. the server replaced an illegal move of the agent
      const note = document.createElement("span");
      note.className = "muted";
      note.textContent = ` (${ai.message})`;
      box.appendChild(note);
    }
    box.classList.add("your-turn");
  } else {
    box.textContent = `${cap(view.to_move)} to move`;
  }
}

function renderBanner() {
  const view = state.view;
  const banner = $("banner");
  banner.hidden = !(view && view.over);
  if (banner.hidden) return;
  banner.className = `banner ${view.winner === view.human ? "won" : view.winner === "draw" ? "draw" : "lost"}`;
  $("banner-result").textContent = view.result || "Game over";
  $("banner-detail").textContent = view.scores
    ? `Black ${view.scores.black} – White ${view.scores.white}. Start a new game below.`
    : `${view.moves.length} moves. Start a new game below, or take back.`;
}

function renderMoves() {
  const list = $("moves");
  const moves = state.view ? state.view.moves : [];
  list.replaceChildren(...moves.map((m, i) => {
    const li = document.createElement("li");
    li.dataset.action = m.action;
    if (i === moves.length - 1) li.className = "last";
    li.innerHTML = `<span class="dot ${m.colour}"></span><span class="move-text"></span>`
      + `<span class="by ${m.by}">${m.by === "ai" ? "AI" : "you"}</span>`;
    li.querySelector(".move-text").textContent = m.text;
    return li;
  }));
  list.scrollTop = list.scrollHeight;
}

function renderAnalysis() {
  const view = state.view;
  const on = $("show-analysis").checked;
  $("analysis-panel").hidden = !on;
  if (!on || !view) return;
  const ai = view.ai;
  const known = (x) => x !== null && x !== undefined;
  const win = known(ai.value) ? (ai.value + 1) / 2 : null;
  $("value").textContent = known(win) ? `${(100 * win).toFixed(0)}%` : "–";
  $("value-fill").style.width = known(win) ? `${(100 * win).toFixed(1)}%` : "0";
  $("value-raw").textContent = known(ai.value) ? `${ai.value >= 0 ? "+" : ""}${ai.value.toFixed(3)}` : "–";
  $("move-ms").textContent = known(ai.move_ms) ? `${ai.move_ms.toFixed(0)} ms` : "–";
  $("simulations").textContent = known(ai.simulations) ? String(ai.simulations) : "–";
  const passRow = view.pass_action !== null && ai.policy;
  $("pass-prob").textContent = passRow ? `${(100 * ai.policy[view.pass_action]).toFixed(1)}%` : "–";
  $("pass-prob").previousElementSibling.hidden = $("pass-prob").hidden = view.pass_action === null;
}

function renderScores() {
  const view = state.view;
  $("scores-panel").hidden = !(view && view.scores);
  if (!view || !view.scores) return;
  for (const side of ["black", "white"]) {
    $(`score-${side}`).textContent = view.scores[side];
    $(`captures-${side}`).textContent = view.captures ? view.captures[side] : "–";
  }
}

function renderControls() {
  const view = state.view;
  const aiBusy = view && BUSY.has(view.ai.status);
  const humanMoved = view && view.moves.some((m) => m.by === "human");
  $("takeback").disabled = !view || state.busy || aiBusy || !humanMoved;
  const passes = view && view.pass_action !== null;
  $("pass").hidden = !passes;
  $("pass").disabled = !passes || state.busy || !view.your_turn || !view.legal[view.pass_action];
  $("new-game").disabled = state.busy;
  $("agent-line").textContent = view ? `You (${view.human}) against the AI: ${view.ai.agent}` : "";
}

function render() {
  renderStatus();
  renderBanner();
  renderBoard();
  renderMoves();
  renderAnalysis();
  renderScores();
  renderControls();
}

// ---------------------------------------------------------------- new-game form

// The form's controls are built from GET /api/config: each game's `fields` (the spec's
// playable fields) with their kind ("int", "float", "choice", "text"), bounds, step,
// default, label and notes. A field's control has the id of its name with dashes
// (board_size: #board-size), its label #<id>-label and its one-line note #<id>-note.
const fieldId = (field) => field.name.replaceAll("_", "-");

function gameFields(game) {
  const cfg = state.config && state.config.games[game];
  return cfg ? cfg.fields : [];
}

function fieldControl(field) {
  let control;
  if (field.kind === "choice") {
    control = document.createElement("select");
    control.replaceChildren(...field.choices.map((choice) => {
      const option = new Option(choice.value.replaceAll("_", " "), choice.value);
      if (choice.note) option.title = choice.note;
      return option;
    }));
    control.addEventListener("change", syncNotes);
  } else if (field.kind === "int" || field.kind === "float") {
    control = document.createElement("input");
    control.type = "number";
    control.required = true;
    if (field.min !== null) control.min = field.min;
    if (field.max !== null) control.max = field.max;
    control.step = field.step === null ? "any" : field.step;
  } else {
    control = document.createElement("input");
    control.type = "text";
  }
  control.id = fieldId(field);
  control.value = field.default;
  return control;
}

// Rebuilds the selected game's controls at their defaults.
function syncForm() {
  const fields = gameFields($("game").value);
  $("game-fields").replaceChildren(...fields.map((field) => {
    const label = document.createElement("label");
    label.id = `${fieldId(field)}-label`;
    label.append(`${field.label} `, fieldControl(field));
    return label;
  }));
  $("field-notes").replaceChildren(...fields.filter((f) => f.note || f.kind === "choice").map((field) => {
    const note = document.createElement("p");
    note.id = `${fieldId(field)}-note`;
    note.className = "field-note muted small";
    return note;
  }));
  syncNotes();
}

// Each note under the form: the chosen value's one-line note, else the field's own.
function syncNotes() {
  for (const field of gameFields($("game").value)) {
    const note = $(`${fieldId(field)}-note`);
    if (!note) continue;
    const choice = field.kind === "choice" && field.choices.find((c) => c.value === $(fieldId(field)).value);
    note.textContent = (choice && choice.note) || field.note || "";
  }
}

// Sets the form's fields from `values` ({field name: value}; unknown names are ignored).
function setFields(values) {
  for (const field of gameFields($("game").value)) {
    if (values[field.name] !== undefined && values[field.name] !== null) {
      $(fieldId(field)).value = values[field.name];
    }
  }
  syncNotes();
}

// A link such as /?game=fauxgo&size=7&komi=0.5&colour=white presets the form (and so the
// game the page starts with): a parameter per field name (size: board_size).
function presetForm(params) {
  if (params.has("game") && state.config.games[params.get("game")]) {
    $("game").value = params.get("game");
    syncForm();
  }
  const values = Object.fromEntries(params.entries());
  if (params.has("size") && !params.has("board_size")) values.board_size = params.get("size");
  if (params.has("colour")) $("colour").value = params.get("colour");
  setFields(values);
}

async function init() {
  $("new-game-form").addEventListener("submit", newGame);
  $("game").addEventListener("change", syncForm);
  $("takeback").addEventListener("click", takeback);
  $("pass").addEventListener("click", pass);
  const analysis = $("show-analysis");
  analysis.checked = localStorage.getItem("gomoku-jax-analysis") === "1";
  analysis.addEventListener("change", () => {
    localStorage.setItem("gomoku-jax-analysis", analysis.checked ? "1" : "0");
    render();
  });
  setInterval(() => { if (state.view && state.view.ai.status === "compiling") renderStatus(); }, 1000);

  try {
    state.config = await api("GET", "/api/config");
  } catch (err) {
    showMessage(`Could not load the configuration: ${err.message}`);
    render();
    return;
  }
  $("game").replaceChildren(...Object.entries(state.config.games).map(
    ([game, cfg]) => new Option(cfg.title, game)));
  $("game").value = state.config.default_game;
  syncForm();
  presetForm(new URLSearchParams(location.search));

  // Reloading the page resumes its game (its id is in the URL) when the server still has it.
  const match = /game=([^&]+)/.exec(location.hash);
  if (match) {
    try {
      const view = await api("GET", `/api/games/${match[1]}`);
      $("game").value = view.game;
      syncForm();
      setFields(view.config);
      $("colour").value = view.human;
      setView(view);
      return;
    } catch (err) {
      if (err.status !== 404) showMessage(err.message);
    }
  }
  await newGame();
}

document.addEventListener("DOMContentLoaded", init);
