// The game page: swap in the board the server renders, send the clicked move, show the answer.
// The page holds no game logic: every board comes from the server, every move is checked there.
"use strict";
(function () {
  const root = document.getElementById("game");
  if (!root) return;
  const id = root.dataset.game;
  let version = Number(root.dataset.version);
  const board = () => document.getElementById("board");
  const message = (text) => { document.getElementById("message").textContent = text || ""; };

  function show(data) {
    if (data.board && data.version !== version) {
      version = data.version;
      board().outerHTML = data.board;
    }
    // The finished game's links (with its seed) come only once it is over: the seed gives the deal.
    if (data.after) document.getElementById("after").innerHTML = data.after;
    const state = board().dataset.state;
    document.getElementById("consent").hidden = state !== "consent";
    document.getElementById("playing").hidden = !["consent", "playing", "waiting"].includes(state);
  }

  async function post(path, body) {
    const response = await fetch(`/api/games/${id}/${path}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const data = await response.json();
    message(data.ok ? data.message : data.error);
    show(data);
  }

  async function poll() {
    for (;;) {
      try {
        const response = await fetch(`/api/games/${id}?after=${version}`, { cache: "no-store" });
        const data = await response.json();
        if (!response.ok) { message(data.error); return; }
        const unchanged = data.version === version;
        show(data);
        if (data.phase !== "consent" && data.phase !== "playing") return;
        // Nothing new: ask again in 100 ms if the server released this poll early for another's sake, else in 1 s.
        if (unchanged) await new Promise((resolve) => setTimeout(resolve, data.released ? 100 : 1000));
      } catch (error) {
        message("lost the connection to the server; retrying");
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  document.getElementById("consent").addEventListener("submit", (event) => {
    event.preventDefault();
    const record = event.submitter && event.submitter.dataset.record === "yes";
    const field = event.target.elements.namedItem("player_id");
    post("begin", { record: record, player_id: field ? field.value : "" });
  });
  document.addEventListener("click", (event) => {
    const button = event.target.closest("#board [data-action]");
    if (!button) return;
    post("move", { action: Number(button.dataset.action), step: Number(board().dataset.step) });
  });
  document.getElementById("resign").addEventListener("click", () => {
    if (window.confirm("Resign this game? It ends now and is not recorded.")) post("resign", {});
  });
  show({});
  poll();
})();
