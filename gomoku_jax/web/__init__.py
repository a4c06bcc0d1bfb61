"""Play in the browser: `gomoku-jax play` serves a page and a JSON API (Starlette) where a
person plays Gomoku or Faux Go against an agent. `seats` picks the agent of each game,
`sessions` keeps the games and runs the AI's moves, `view` is a game's JSON, `app` the
routes; the page is static HTML, CSS and JavaScript in `static/`."""
