// mjenv replay viewer: rebuilds every state of a hand by applying the moves embedded by mjenv.viewer to the
// deal (it knows no rule), and draws one state at a time. Format: docs/viewer.md.
"use strict";
const G = JSON.parse(document.getElementById("game").textContent);
const WINDS = ["E", "S", "W", "N"], WIND_WORDS = ["East", "South", "West", "North"];
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
let H = 0, S = 0, persp = -1, timer = null, states = [];

function initial(hand) {
  const d = hand.deal;
  return {hands: d.hands.map((h) => h.slice()), melds: [[], [], [], []], river: [[], [], [], []],
    flowers: d.flowers.map((f) => f.slice()), wall: d.wall.slice(), pw: d.pw || null, scores: [0, 0, 0, 0], dr: d.dr, cur: d.cur,
    offer: null, hl: null, step: null};
}

function apply(prev, step) {  // the state after one step: prev with the step's moves applied
  const s = {hands: prev.hands.map((h) => h.slice()), melds: prev.melds.map((m) => m.slice()),
    river: prev.river.map((r) => r.map((x) => x.slice())), flowers: prev.flowers.map((f) => f.slice()),
    wall: prev.wall, pw: prev.pw, scores: prev.scores, dr: step.dr, cur: step.cur, offer: step.offer || null,
    hl: {r: [], m: []}, step: step};
  const mv = step.mv;
  for (const [seat, out, inn] of mv.h || []) {
    const h = s.hands[seat];
    for (const t of out) { const i = h.indexOf(t); if (i < 0) throw new Error("tile not in hand"); h.splice(i, 1); }
    h.push(...inn); h.sort((a, b) => a - b);
  }
  for (const [seat, i, m] of mv.m || []) { s.melds[seat][i] = m; s.hl.m.push([seat, i]); }
  for (const [seat, ts] of mv.r || []) {
    for (const t of ts) { s.river[seat].push([t, 0]); s.hl.r.push([seat, s.river[seat].length - 1]); }
  }
  for (const [seat, i] of mv.rc || []) s.river[seat][i][1] = 1;
  for (const [seat, fl] of mv.f || []) s.flowers[seat].push(...fl);
  if (mv.w) s.wall = mv.w;
  if (mv.pw) s.pw = mv.pw;
  if (mv.sc) s.scores = mv.sc;
  return s;
}

function loadHand(h) {
  H = h;
  const hand = G.hands[H];
  states = [initial(hand)];
  for (const st of hand.steps) states.push(apply(states[states.length - 1], st));
  $("slider").max = states.length - 1;
  $("hand").value = String(H);
  const names = hand.names;
  $("persp").innerHTML = '<option value="-1">all face up</option>' +
    names.map((n, c) => `<option value="${c}">${WIND_WORDS[(c - hand.dealer + 4) % 4]} (${esc(n)}) view</option>`).join("");
  $("persp").value = String(persp);
}

function tile(t, cls, hidden) {
  const face = hidden ? "b" : t;
  return `<svg class="t${cls ? " " + cls : ""}" data-t="${hidden ? -1 : t}"><use href="#f${face}"/></svg>`;
}

function who(hand, c) { return `${WIND_WORDS[(c - hand.dealer + 4) % 4]} (${esc(hand.names[c])})`; }

function meldHtml(hand, c, m, hl, hide) {
  const [tiles, from, claimed, concealed] = m;
  let inner = "";
  tiles.forEach((t, i) => {
    const back = concealed && (hide || i === 0 || i === 3);
    inner += tile(t, i === claimed ? "claimed" : "", back);
  });
  const src = concealed ? "concealed" : `from ${WINDS[(from - hand.dealer + 4) % 4]}` + (m[4] ? " +kong" : "");
  const known = concealed && hide ? "" : ` data-tiles="${tiles.join(",")}"`;
  return `<span class="meld${hl ? " hl" : ""}" data-from="${from}" data-concealed="${concealed}"${known}>` +
    `<span class="tiles">${inner}</span><span class="src">${src}</span></span>`;
}

function drawSeat(hand, st, c) {
  const hide = persp >= 0 && persp !== c;
  const end = hand.end && S === states.length - 1;
  let tiles = st.hands[c].slice(), drawn = null;
  if (st.dr && st.dr[0] === c) { tiles.splice(tiles.indexOf(st.dr[1]), 1); drawn = st.dr[1]; }
  const showHand = !hide || (end && end.winner === c);
  const hl = st.hl || {r: [], m: []};
  const handHtml = tiles.map((t) => tile(t, "", !showHand)).join("");
  const drawnHtml = drawn === null ? "" : tile(drawn, "", !showHand);
  const melds = st.melds[c].map((m, i) => meldHtml(hand, c, m, hl.m.some(([s, j]) => s === c && j === i), hide)).join("");
  const river = st.river[c].map(([t, cl], i) =>
    tile(t, (cl ? "claimed" : "") + (hl.r.some(([s, j]) => s === c && j === i) ? " hl" : ""), false)).join("");
  const wind = (c - hand.dealer + 4) % 4;
  const total = hand.totals_before[c] + st.scores[c];
  const offer = st.offer && st.offer[0] === c ? `<span class="offer">on offer ${tile(st.offer[1], "hl", false)}</span>` : "";
  return `<div class="seat${st.cur === c ? " cur" : ""}" data-seat="${c}">` +
    `<div class="who"><span class="wind">${WINDS[wind]}</span><span class="name">${esc(hand.names[c])}</span>` +
    (wind === 0 ? '<span class="dealer">dealer</span>' : "") +
    (st.pw ? `<span class="pwall" data-wall="${st.pw[c]}">wall ${st.pw[c]}</span>` : "") +
    `<span class="score" data-v="${st.scores[c]}" data-total="${total}">hand ${st.scores[c] >= 0 ? "+" : ""}${st.scores[c]}` +
    (G.hands.length > 1 ? ` · total ${total}` : "") + `</span></div>` +
    `<div class="row"><span class="hand" data-n="${st.hands[c].length}">${handHtml}</span>` +
    `<span class="drawn">${drawnHtml}</span><span class="melds">${melds}</span>` +
    `<span class="flowers">${st.flowers[c].map((t) => tile(t, "", false)).join("")}</span>${offer}</div>` +
    `<div class="river">${river}</div></div>`;
}

function endHtml(hand, end) {
  let h = "";
  if (end.type === "illegal") {
    h += `<h3 class="illegal">illegal action by ${who(hand, end.illegal.seat)} (${end.illegal.mode})</h3>`;
  } else if (end.winner < 0) {
    h += `<h3>${end.type === "draw" ? "draw: the wall is empty" : "hand aborted"}</h3>`;
  } else {
    const how = end.type === "self_drawn" ? "self-drawn" : end.type === "robbed_kong" ?
      `robbing the kong of ${who(hand, end.loser)}` : `on the discard of ${who(hand, end.loser)}`;
    h += `<h3 data-winner="${end.winner}">${who(hand, end.winner)} wins ${how} ${tile(end.win_tile, "", false)}</h3>`;
    h += '<table class="fans"><tr><th>番种</th><th>fan</th><th class="n">pts</th></tr>' + end.fans.map(([zh, en, p, n]) =>
      `<tr><td>${esc(zh)}</td><td>${esc(en)}</td><td class="n">${n > 1 ? n + " × " : ""}${p}</td></tr>`).join("") +
      `<tr><th colspan="2">total</th><th class="n" id="fantotal">${end.fan_total}</th></tr></table>`;
  }
  h += '<table class="pay"><tr><th>seat</th><th class="n">payment</th>' + (G.hands.length > 1 ? '<th class="n">total</th>' : "") +
    "</tr>" + end.payments.map((p, c) => `<tr><td>${who(hand, c)}</td><td class="n" data-pay="${p}">${p >= 0 ? "+" : ""}${p}</td>` +
    (G.hands.length > 1 ? `<td class="n">${hand.totals_before[c] + p}</td>` : "") + "</tr>").join("") + "</table>";
  return h;
}

function render() {
  const t0 = performance.now();
  const hand = G.hands[H], st = states[S];
  const order = persp < 0 ? [0, 1, 2, 3] : [1, 2, 3, 0].map((k) => (persp + k) % 4);
  $("table").innerHTML = order.map((c) => drawSeat(hand, st, c)).join("");
  const left = st.pw ? st.pw.reduce((a, b) => a + b, 0) : st.wall[1] - st.wall[0];
  $("meta").textContent = (hand.label ? esc(hand.label) : `seed ${hand.seed}`) + ` · prevailing ${WIND_WORDS[hand.prevalent]}` +
    (hand.dice[0] ? ` · dice ${hand.dice[0]}+${hand.dice[1]}` : "") +
    (st.pw ? ` · private walls ${st.pw.join(" / ")} (${left} tiles)` : ` · wall ${left} tiles`);
  $("meta").dataset.wall = left;
  $("stepno").textContent = `hand ${H + 1}/${G.hands.length} · step ${S}/${states.length - 1}`;
  const step = st.step;
  $("say").innerHTML = step ? esc(step.say) : `deal; the dealer ${who(hand, hand.dealer)} plays first`;
  $("claims").innerHTML = step && step.claims ? "claims: " + step.claims.map(([c, a]) =>
    `<span data-seat="${c}">${WINDS[(c - hand.dealer + 4) % 4]} ${esc(a)}</span>`).join(", ") : "";
  let pol = "";
  if (step && step.info) {
    const inf = step.info;
    pol = `policy of ${who(hand, step.op[1])}` + (inf.value !== undefined ? ` · value <b id="value">${inf.value}</b>` : "");
    if (inf.top) pol += "<table>" + inf.top.map(([a, p]) => `<tr class="top"><td>${esc(a)}</td><td class="n">${(100 * p).toFixed(1)}%</td>` +
      `<td><span class="bar" style="width:${Math.round(80 * p)}px"></span></td></tr>`).join("") + "</table>";
  }
  $("policy").innerHTML = pol;
  $("end").innerHTML = hand.end && S === states.length - 1 ? endHtml(hand, hand.end) : "";
  $("slider").value = S;
  const hash = G.hands.length > 1 ? `#hand=${H + 1}&step=${S}` : `#step=${S}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
  document.body.dataset.renderMs = (performance.now() - t0).toFixed(2);
}

function go(h, s) {
  h = Math.max(0, Math.min(G.hands.length - 1, h));
  if (h !== H || !states.length) loadHand(h);
  S = Math.max(0, Math.min(states.length - 1, s));
  render();
}
function next() {
  if (S < states.length - 1) go(H, S + 1);
  else if (H < G.hands.length - 1) go(H + 1, 0);
  else pause();
}
function prev() {
  if (S > 0) go(H, S - 1);
  else if (H > 0) { loadHand(H - 1); go(H, states.length - 1); }
}
function pause() { if (timer) clearInterval(timer); timer = null; $("play").innerHTML = "&#x25B6;"; }
function play() {
  pause();
  timer = setInterval(next, 1000 / Number($("speed").value));
  $("play").innerHTML = "||";
}
function fromHash() {
  const m = new URLSearchParams(location.hash.replace(/^#/, ""));
  const h = m.has("hand") ? parseInt(m.get("hand"), 10) - 1 : 0, s = m.has("step") ? parseInt(m.get("step"), 10) : 0;
  go(Number.isFinite(h) ? h : 0, Number.isFinite(s) ? s : 0);
}

$("title").textContent = G.title;
$("hand").innerHTML = G.hands.map((h, i) => `<option value="${i}">hand ${i + 1} · ${WINDS[h.prevalent]} round, dealer ${esc(h.names[h.dealer])}</option>`).join("");
if (G.hands.length < 2) $("hand").style.display = "none";
$("hand").onchange = () => go(Number($("hand").value), 0);
$("first").onclick = () => go(H, 0);
$("last").onclick = () => go(H, states.length - 1);
$("next").onclick = next;
$("prev").onclick = prev;
$("play").onclick = () => (timer ? pause() : play());
$("speed").onchange = () => { if (timer) play(); };
$("slider").oninput = () => go(H, Number($("slider").value));
$("persp").onchange = () => { persp = Number($("persp").value); render(); };
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT" && e.target.type !== "range") return;
  const k = e.key;
  if (k === "ArrowRight") next(); else if (k === "ArrowLeft") prev();
  else if (k === " ") timer ? pause() : play();
  else if (k === "Home") go(H, 0); else if (k === "End") go(H, states.length - 1);
  else return;
  e.preventDefault();
});
window.addEventListener("hashchange", fromHash);
fromHash();
document.body.dataset.readyMs = performance.now().toFixed(1);
