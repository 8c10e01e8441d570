// The Plexus web page: Settings → MCP Servers. It calls the daemon's
// settings API under /api/v1 (the same routes as the CLI) and follows its
// event stream. Everything from the daemon is put in the page as text
// (textContent), never parsed as HTML.
'use strict';

const $ = (id) => document.getElementById(id);
const servers = new Map(); // name → ServerStatus
let editing = null; // null, or {name, revision, config} while editing

// el builds an element: el('p', {class: 'x'}, 'text', child, …).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || ('HTTP ' + status));
    this.status = status;
    this.body = body || {};
  }
}

// The session's page token. The login redirect brings it in the fragment
// (which no server ever receives); it is kept in this origin's
// sessionStorage, out of reach of a page on any other port, and sent with
// every API call: the session cookie alone, which the browser also sends to
// other ports of 127.0.0.1, opens nothing.
const pageToken = (() => {
  const m = /^#page_token=([0-9a-f]+)$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('plexus.pageToken', m[1]);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('plexus.pageToken') || '';
})();

// api calls the settings API (the page's one way to reach it, with the
// page token). Changes are sent as JSON, which is also what the page's
// guard demands of them.
async function api(method, path, body, ifMatch) {
  const opts = { method, headers: { Accept: 'application/json', 'X-Plexus-Page-Token': pageToken }, credentials: 'same-origin' };
  if (method !== 'GET') {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body === undefined ? {} : body);
  }
  if (ifMatch) opts.headers['If-Match'] = String(ifMatch);
  let res;
  try {
    res = await fetch('/api/v1' + path, opts);
  } catch (e) {
    throw new APIError(0, { message: 'the daemon cannot be reached: is it running?' });
  }
  const text = await res.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch (e) { data = null; } }
  if (res.status === 401) showSignin();
  if (!res.ok) throw new APIError(res.status, data && data.error);
  return data;
}

const enc = encodeURIComponent;

function describe(err) {
  const h = hintOf(err);
  return h ? err.message + ' — ' + h : err.message;
}

function notice(msg) {
  const n = $('notice');
  n.textContent = msg || '';
  n.hidden = !msg;
}

function showSignin() {
  $('signin').hidden = false;
  $('app').hidden = true;
  $('logout').hidden = true;
  $('live').textContent = 'Not logged in';
}

// ---- the server list ----

// stateText is a server's state in the words every front end uses, by the
// rules of internal/statewords (a Go test holds the two together).
function stateText(st) {
  if (st.state === 'disabled' || (!st.state && !st.enabled)) return 'disabled';
  if (st.needsApproval) return 'needs approval';
  if (st.state === 'needs-login' || (st.auth && st.auth.needsLogin && st.state !== 'ready')) return 'needs login';
  if (st.installing && (st.state === 'starting' || st.state === 'waking')) return 'installing';
  if (st.state === 'idle') return 'stopped (idle)';
  if (st.state === 'waking') return 'starting on demand';
  if (st.crashLooping) return 'crash-looping';
  if (st.state === 'failed' && (st.httpStatus === 401 || st.httpStatus === 403)) return 'unauthorized';
  return st.state || 'unknown';
}

// progress is each server's latest stderr line since its start began (a
// first `npx -y` downloads its package meanwhile), and restarting the
// servers a restart of this page waits for: the old instance serves until
// the new one is up, so its state stays, and the card says it restarts.
const progress = new Map();
const restarting = new Set();

// startNote is what a starting server's card says after its state: its
// latest stderr line, and for a restart of this page that it restarts.
function startNote(st) {
  const line = (progress.get(st.name) || '').split('\n')[0];
  if (restarting.has(st.name)) return line ? 'Restarting: ' + line : 'Restarting…';
  if (st.state === 'starting' || st.state === 'waking') return line;
  return '';
}

function fact(dl, name, value) {
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && !value.length)) return;
  dl.append(el('dt', {}, name), el('dd', {}, value));
}

function when(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? '' : d.toLocaleTimeString();
}

function renderServer(st) {
  const li = el('li', { class: 'server s-' + st.state + (needsAttention(st) ? ' needs-attention' : '') + (!st.enabled || st.state === 'stopped' ? ' off' : ''),
    'data-name': st.name, 'data-state': st.state });
  const label = stateText(st);
  li.append(el('h3', {}, el('span', { class: 'name' }, st.name),
    el('span', { class: 'state s-' + st.state, 'data-testid': 'state' }, 'State: ' + label),
    marks(st)));
  const note = startNote(st);
  if (note) li.append(el('p', { class: 'start-line', 'data-testid': 'progress', 'aria-live': 'polite' }, note.slice(0, 200)));
  const dl = el('dl', { class: 'facts' });
  fact(dl, 'Transport', st.type === 'stdio' ? 'stdio' : st.type === 'sse' ? 'HTTP+SSE' : 'Streamable HTTP');
  fact(dl, 'Tools', String(st.tools) + (st.held && st.held.length ? ' (' + st.held.length + ' held back)' : ''));
  fact(dl, 'URL', st.url);
  if (st.command) fact(dl, 'Command', st.command.map(quoteArg).join(' '));
  if (st.headerNames && st.headerNames.length) fact(dl, 'Headers', st.headerNames.length + ': ' + st.headerNames.join(', '));
  if (st.envNames && st.envNames.length) fact(dl, 'Environment', st.envNames.join(', '));
  if (st.pid) fact(dl, 'PID', el('span', { 'data-testid': 'pid' }, String(st.pid)));
  if (st.restarts) fact(dl, 'Restarts', String(st.restarts));
  if (st.nextTryAt) fact(dl, 'Next try', when(st.nextTryAt));
  // An action's error that already says the server's last error is the
  // one message about that failure: the card shows it once, with the action.
  const actionErr = cardErrors.get(st.name) || '';
  if (st.lastError && !actionErr.includes(st.lastError.replace(/^server "[^"]*": /, ''))) {
    let e = st.lastError;
    if (st.exitCode !== undefined && st.exitCode !== null) e += ' (exit code ' + st.exitCode + ')';
    if (st.httpStatus) e += ' (HTTP ' + st.httpStatus + ')';
    fact(dl, 'Last error', el('span', { class: 'lasterr', 'data-testid': 'lasterr' }, e + (st.lastErrorAt ? ' at ' + when(st.lastErrorAt) : '')));
  }
  if (st.auth) fact(dl, 'Authorization', authText(st.auth));
  for (const w of st.warnings || []) fact(dl, 'Warning', w);
  li.append(dl);
  const tools = renderTools(st);
  if (tools) li.append(tools);
  if (st.stderr && st.stderr.length) {
    li.append(el('details', { class: 'stderr' }, el('summary', {}, 'Last stderr lines (' + st.stderr.length + ')'),
      el('pre', { 'data-testid': 'stderr' }, st.stderr.join('\n'))));
  }
  if (st.needsApproval && st.approval) li.append(renderApproval(st));
  if (st.held && st.held.length) li.append(renderHeld(st));
  const act = el('div', { class: 'toolbar' });
  act.append(
    el('button', { type: 'button', onclick: () => openEditor(st.name) }, 'Edit'),
    el('button', { type: 'button', onclick: () => act_(st.name, st.enabled ? 'disable' : 'enable') },
      st.enabled ? 'Disable' : 'Enable'),
    el('button', { type: 'button', onclick: () => act_(st.name, 'restart') }, 'Restart'),
    el('button', { type: 'button', onclick: () => showLogs(st.name, li) }, 'Logs'));
  if (canLogIn(st)) act.append(el('button', { type: 'button', onclick: () => login(st.name, li) }, 'Log in'));
  act.append(el('button', { type: 'button', class: 'danger', onclick: () => remove(st.name) }, 'Delete'));
  li.append(act, el('p', { class: 'err card-error', role: 'alert' }, cardErrors.get(st.name) || ''),
    el('p', { class: 'progress card-note', role: 'status' }, cardNotes.get(st.name) || ''));
  return li;
}

// marks are a card's badges, in words, for what its state does not say:
// its sandbox, and a login it needs while it still runs. (A server
// switched off or stopped says so in its state, and is dimmed and listed
// last; one that needs a login and does not run says so too.)
function marks(st) {
  const out = [];
  if (st.sandbox) out.push(el('span', { class: 'badge sandboxed', 'data-testid': 'mark-sandboxed', title: st.sandbox }, 'sandboxed: ' + st.sandbox));
  if (st.auth && st.auth.needsLogin && stateText(st) !== 'needs login') out.push(el('span', { class: 'badge login', 'data-testid': 'mark-login' }, 'needs login'));
  return out;
}

// canLogIn: a login can succeed only on an enabled remote server that uses
// OAuth (it asked for authorization, or has OAuth settings): the daemon
// refuses every other, so the page offers none.
function canLogIn(st) {
  return st.type !== 'stdio' && st.enabled && !!st.auth && st.auth.login !== 'waiting';
}

function authText(a) {
  if (a.login === 'waiting') return 'waiting for the browser to finish logging in…';
  if (a.login === 'checking') return 'logged in; checking that the server takes the new token…';
  if (a.login === 'failed') return 'login failed: ' + (a.loginError || 'unknown error');
  if (a.needsLogin) return 'needs a login' + (a.reason ? ' (' + a.reason + ')' : '');
  if (a.loggedIn && !a.refreshToken && a.expiresAt) return 'logged in' + (a.issuer ? ' at ' + a.issuer : '') + '; no refresh token: the login ends ' + when(a.expiresAt);
  if (a.loggedIn) return 'logged in' + (a.issuer ? ' at ' + a.issuer : '') + (a.expiresAt ? ', token until ' + when(a.expiresAt) + ', renewed before' : '');
  return 'OAuth';
}

// renderApproval shows what a pending server runs next to what was
// approved before, row by row, changed rows marked in text and colour.
function renderApproval(st) {
  const ap = st.approval;
  const box = el('div', { class: 'attention', 'data-testid': 'approval' },
    el('p', {}, el('strong', {}, 'Waiting for your approval: '), ap.reason));
  const show = (d, k) => {
    if (!d) return '—';
    const v = d[k];
    if (v === undefined || v === null) return '';
    if (k === 'command') return v.map(quoteArg).join(' ');
    if (k === 'env') return Object.entries(v).map(([a, b]) => a + ' ← ' + b).join(', ');
    if (Array.isArray(v)) return v.join(', ');
    return String(v);
  };
  const t = el('table', { class: 'diff' }, el('tr', {}, el('th', { scope: 'col' }, ''),
    el('th', { scope: 'col' }, 'Approved before'), el('th', { scope: 'col' }, 'Now')));
  for (const k of ['type', 'command', 'cwd', 'env', 'url', 'headerNames']) {
    const a = show(ap.approved, k), b = show(ap.current, k);
    if (!a && !b) continue;
    const changed = a !== b;
    t.append(el('tr', { class: changed ? 'changed' : '' }, el('th', { scope: 'row' }, k + (changed ? ' (changed)' : '')),
      el('td', {}, a), el('td', {}, b)));
  }
  box.append(t, el('button', { type: 'button', onclick: () => approve(st.name, ap.key) }, 'Approve and start'));
  return box;
}

function renderHeld(st) {
  const box = el('div', { class: 'attention', 'data-testid': 'held' },
    el('p', {}, el('strong', {}, 'Tools held back until you accept their change:')));
  for (const h of st.held) {
    const t = el('table', { class: 'diff' }, el('tr', {}, el('th', { scope: 'col' }, ''),
      el('th', { scope: 'col' }, 'Accepted before'), el('th', { scope: 'col' }, 'Offered now')));
    for (const k of ['title', 'description', 'inputSchema', 'outputSchema', 'annotations']) {
      const a = h.old ? fmt(h.old[k]) : '—', b = fmt(h.new[k]);
      if (!a && !b) continue;
      const changed = (h.changed || []).includes(k);
      t.append(el('tr', { class: changed ? 'changed' : '' }, el('th', { scope: 'row' }, k + (changed ? ' (changed)' : '')),
        el('td', {}, el('pre', {}, a)), el('td', {}, el('pre', {}, b))));
    }
    box.append(el('details', {}, el('summary', {}, h.tool + ': ' + h.reason), t,
      el('button', { type: 'button', onclick: () => accept(st.name, h) }, 'Accept ' + h.tool)));
  }
  return box;
}

function fmt(v) {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

// rank puts the servers that need a person first and those switched off
// or stopped last.
function rank(st) {
  if (needsAttention(st)) return 0;
  return !st.enabled || st.state === 'stopped' ? 2 : 1;
}

function render() {
  const ul = $('servers');
  const names = [...servers.keys()].sort((a, b) => rank(servers.get(a)) - rank(servers.get(b)) || (a < b ? -1 : a > b ? 1 : 0));
  ul.replaceChildren(...names.map((n) => renderServer(servers.get(n))));
  $('empty').hidden = names.length > 0;
  listChanged();
}

// ---- tool names, the summary and the filter ----

const toolNames = new Map(); // server → its tools' own names, sorted

// loadTools reads every server's tool names. Each catalog update makes the
// page read them again, and two reads may answer out of order: the names
// read as of the later event stay (order.tools).
async function loadTools() {
  const conn = order.conn;
  const list = await api('GET', '/tools');
  if (conn !== order.conn || (list.eventSeq || 0) < order.tools) return;
  order.tools = list.eventSeq || 0;
  toolNames.clear();
  for (const t of list.tools || []) {
    if (t.kind && t.kind !== 'tool') continue;
    if (!toolNames.has(t.server)) toolNames.set(t.server, []);
    toolNames.get(t.server).push(t.tool);
  }
  for (const names of toolNames.values()) names.sort();
}

// renderTools is a server's tool names, folded.
function renderTools(st) {
  const names = toolNames.get(st.name) || [];
  if (!names.length) return null;
  return el('details', { class: 'tools', 'data-testid': 'tools' },
    el('summary', {}, 'Tool names (' + names.length + ')'),
    el('ul', {}, names.map((n) => el('li', {}, el('code', {}, n)))));
}

// needsAttention is a server a person has to look at.
function needsAttention(st) {
  if (!st.enabled) return false;
  return st.state === 'failed' || st.state === 'backoff' || st.state === 'needs-login' || st.crashLooping || st.needsApproval ||
    (st.auth && st.auth.needsLogin) || (st.held && st.held.length > 0);
}

// listChanged redraws the summary and applies the filter after the list
// changed.
function listChanged() {
  const all = [...servers.values()];
  const ready = all.filter((s) => s.enabled && s.state === 'ready').length;
  const attention = all.filter(needsAttention).length;
  $('summary').textContent = all.length ? plural(all.length, 'server') + ' · ' + ready + ' ready' +
    (attention ? ' · ' + attention + (attention === 1 ? ' needs' : ' need') + ' attention' : '') : '';
  applyFilter();
}

function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

// applyFilter shows the servers whose name or a tool's name holds the
// filter's text.
function applyFilter() {
  const q = $('filter').value.trim().toLowerCase();
  for (const li of document.querySelectorAll('#servers > li')) {
    const name = li.dataset.name;
    const hit = !q || name.toLowerCase().includes(q) || (toolNames.get(name) || []).some((t) => t.toLowerCase().includes(q));
    li.hidden = !hit;
  }
}

// Answers (the list, a save's or an action's result) and live updates come
// on two connections, and either may arrive first: the "starting" update
// sent before a save's answer was read can arrive after its "ready". The
// daemon numbers its events (seq) and says of every status which events it
// is as new as (eventSeq), so the page shows the newer of two by their
// numbers, never by the order they arrive in:
//  - an event is newer than what is known of its server unless that was
//    read as of it or later (its number is not above the known one);
//  - an answer as of event N includes every event up to N: it is newer
//    unless what is known came from a later event or answer.
// What is known of a server is its shown status, or else the number as of
// which it was seen gone: its removal's event, or a list without it.
// conn numbers the connections of the live updates: a restarted daemon
// numbers its events from 1 again, so an answer asked before a reconnect
// is not compared with them. tools is the number as of which the tool
// names shown were read (loadTools).
const order = { conn: 0, listed: 0, gone: new Map(), tools: 0 };

function older(seq, fromEvent, known) {
  return fromEvent ? seq <= known : seq < known;
}

// knownSeq is the number as of which the page knows server name.
function knownSeq(name) {
  const shown = servers.get(name);
  return shown ? shown.eventSeq || 0 : Math.max(order.listed, order.gone.get(name) || 0);
}

// showStatus shows st, from an event or an answer, unless what is known of
// its server is newer.
function showStatus(st, fromEvent) {
  if (older(st.eventSeq || 0, fromEvent, knownSeq(st.name))) return;
  const shown = servers.get(st.name);
  // A new start: the lines before it are not its own.
  if (shown && shown.state !== st.state && (st.state === 'starting' || st.state === 'waking')) progress.delete(st.name);
  drawServer(st);
}

// seenGone notes server name gone as of seq, unless its shown status is
// newer; it reports whether the server was taken off.
function seenGone(name, seq, fromEvent) {
  const shown = servers.get(name);
  if (shown && older(seq, fromEvent, shown.eventSeq || 0)) return false;
  order.gone.set(name, Math.max(order.gone.get(name) || 0, seq));
  progress.delete(name);
  return servers.delete(name);
}

// reconnected starts the numbering again: what is shown is kept until the
// list read next replaces it, and is known as of nothing.
function reconnected() {
  order.conn++;
  order.listed = 0;
  order.tools = 0;
  order.gone.clear();
  for (const st of servers.values()) st.eventSeq = 0;
}

// drawServer shows st as it is, keeping the card's open sections and logs.
function drawServer(st) {
  servers.set(st.name, st);
  const old = document.querySelector('#servers > li[data-name="' + CSS.escape(st.name) + '"]');
  const before = old && old.classList.contains('needs-attention') ? 0 : old && old.classList.contains('off') ? 2 : 1;
  if (!old || before !== rank(st)) { render(); return; }
  const open = [...old.querySelectorAll('details')].map((d) => d.open);
  const logs = old.querySelector('.logs');
  const fresh = renderServer(st);
  fresh.querySelectorAll('details').forEach((d, i) => { if (open[i]) d.open = true; });
  if (logs) fresh.append(logs);
  old.replaceWith(fresh);
  listChanged();
}

// readStatuses runs a request whose answer tells server statuses and hands
// the answer to apply, unless the live updates reconnected meanwhile.
async function readStatuses(request, apply) {
  const conn = order.conn;
  const res = await request();
  if (conn === order.conn) apply(res);
  return res;
}

// showAnswer shows the server status in an action's answer, if any.
function showAnswer(res) {
  if (res && res.server) showStatus(res.server, false);
}

// showList takes in a list of the servers: each status newer than what is
// known, and without the servers it does not have that were known as of
// it or earlier. The caller renders.
function showList(list) {
  const listed = new Set(list.servers.map((s) => s.name));
  for (const s of list.servers) {
    if (!older(s.eventSeq || 0, false, knownSeq(s.name))) servers.set(s.name, s);
  }
  for (const name of [...servers.keys()]) {
    if (!listed.has(name)) seenGone(name, list.eventSeq || 0, false);
  }
  order.listed = Math.max(order.listed, list.eventSeq || 0);
}

async function refresh() {
  await loadTools().catch(() => toolNames.clear());
  await readStatuses(() => api('GET', '/servers'), showList);
  render();
  await api('GET', '/status').then((s) => showHandEdit(s.settingsFile)).catch(() => {});
}

// showHandEdit says that extensions.json holds a hand edit the daemon has
// not applied (the daemon announces one within a second, settings_file),
// with what a reload would refuse in it, line and column included.
function showHandEdit(f) {
  const box = $('hand-edit');
  box.hidden = !f;
  if (!f) { box.replaceChildren(); return; }
  const problems = f.problems || [];
  box.replaceChildren(
    el('strong', {}, 'The settings file was changed by hand'), ' (', el('code', {}, f.path), ') ',
    problems.length
      ? 'and cannot be applied as it is: fix it; this note follows the file.'
      : 'and is not applied yet: Reload settings file applies it.',
    problems.length ? el('ul', {}, problems.map((p) => el('li', {}, el('code', {}, p)))) : null);
}

// cardErrors keeps each card's last action error, so that a card drawn
// anew by a live update (which may arrive just after the action's answer)
// still shows it; the next action on the card clears it.
const cardErrors = new Map();

// cardNotes keeps a card's last word of success the same way.
const cardNotes = new Map();

function cardError(name, msg) {
  cardNotes.delete(name);
  if (msg) cardErrors.set(name, msg);
  else cardErrors.delete(name);
  const li = document.querySelector('#servers > li[data-name="' + CSS.escape(name) + '"]');
  // Drawn anew, so that the card says a failure once (see renderServer).
  if (li && servers.has(name)) drawServer(servers.get(name));
  else notice(msg);
}

async function act_(name, action) {
  cardError(name, '');
  const redraw = () => { const st = servers.get(name); if (st) drawServer(st); };
  if (action === 'restart') { restarting.add(name); progress.delete(name); redraw(); }
  try {
    await readStatuses(() => api('POST', '/servers/' + enc(name) + '/' + action), showAnswer);
  } catch (e) { cardError(name, action + ': ' + describe(e)); } finally {
    if (restarting.delete(name)) redraw();
  }
}

async function remove(name) {
  if (!confirm('Delete the server ' + name + ' and its stored credentials?')) return;
  try {
    await readStatuses(() => api('DELETE', '/servers/' + enc(name)), (res) => { if (seenGone(name, res.eventSeq || 0, false)) render(); });
    loadSecrets();
  } catch (e) { cardError(name, 'delete: ' + describe(e)); }
}

async function approve(name, key) {
  try {
    await api('POST', '/servers/' + enc(name) + '/approve', { key });
    await refresh();
  } catch (e) { cardError(name, 'approve: ' + describe(e)); }
}

async function accept(name, h) {
  try {
    const hashes = {}; hashes[h.tool] = h.newHash;
    await readStatuses(() => api('POST', '/servers/' + enc(name) + '/accept', { tools: [h.tool], hashes }), showAnswer);
  } catch (e) { cardError(name, 'accept: ' + describe(e)); }
}

async function showLogs(name, li) {
  try {
    const res = await api('GET', '/servers/' + enc(name) + '/logs');
    let box = li.querySelector('.logs');
    if (!box) { box = el('div', { class: 'logs' }); li.append(box); }
    box.replaceChildren(el('h4', {}, 'stderr of ' + name + ' (' + res.lines.length + ' lines)'),
      el('pre', { tabindex: '0' }, res.lines.join('\n') || '(nothing yet)'));
  } catch (e) { cardError(name, 'logs: ' + describe(e)); }
}

async function login(name, li) {
  cardError(name, 'Starting the login…');
  try {
    const res = await api('POST', '/servers/' + enc(name) + '/login', {});
    cardError(name, '');
    if (!res.authUrl) {
      // A grant without a person: the daemon already has the token (and
      // restarts the server with it, which draws the card anew).
      cardNotes.set(name, 'Got a new token with the ' + (res.grant || 'OAuth') + ' grant.');
      const note = document.querySelector('#servers > li[data-name="' + CSS.escape(name) + '"] .card-note');
      if (note) note.textContent = cardNotes.get(name);
      return;
    }
    window.open(res.authUrl, '_blank', 'noopener,noreferrer');
    const p = el('p', { class: 'progress', role: 'status' }, 'Waiting for the browser: finish logging in on the page that opened. ',
      el('a', { href: res.authUrl, target: '_blank', rel: 'noopener noreferrer' }, 'Open it again'));
    li.append(p);
  } catch (e) { cardError(name, 'log in: ' + describe(e)); }
}

// ---- the add / edit form ----

const stdioKeys = ['command', 'args', 'cwd', 'env', 'sandbox'];
const remoteKeys = ['url', 'headers', 'bearerTokenEnvVar', 'oauth'];
const varName = /^[A-Za-z_][A-Za-z0-9_]*$/;

function transport() { return document.querySelector('input[name="type"]:checked').value; }

function showTransport() {
  const stdio = transport() === 'stdio';
  $('stdio-fields').hidden = !stdio;
  $('remote-fields').hidden = stdio;
  $('rows-legend').textContent = stdio ? 'Environment variables' : 'Headers';
  $('rows-col-name').textContent = stdio ? 'Variable' : 'Header';
  $('add-row').textContent = stdio ? 'Add variable' : 'Add header';
}

let rowSeq = 0;
function addRow(name, ref, plain, hint) {
  const i = ++rowSeq;
  const isPlain = typeof plain === 'string';
  // A plain value ({"value": …}) is a setting, not a secret: shown and
  // edited as text, and saved as a plain value again.
  const value = isPlain
    ? el('input', { 'aria-label': 'Value ' + i, class: 'r-value', type: 'text', value: plain, autocomplete: 'off', spellcheck: 'false' })
    : el('input', { 'aria-label': 'Value ' + i, class: 'r-value', type: 'password', autocomplete: 'new-password',
      placeholder: hint || (ref ? 'blank keeps, - removes' : ''), title: hint || null });
  const tr = el('tr', {},
    el('td', {}, el('input', { 'aria-label': 'Name ' + i, class: 'r-name', value: name || '', autocomplete: 'off', spellcheck: 'false' })),
    el('td', {}, el('input', { 'aria-label': 'Secret variable ' + i, class: 'r-var', value: ref || '', autocomplete: 'off', spellcheck: 'false',
      placeholder: isPlain ? 'plain value, not secret' : '', readonly: isPlain })),
    el('td', {}, value),
    el('td', {}, el('button', { type: 'button', 'aria-label': 'Remove row ' + i, onclick: () => tr.remove() }, '✕')));
  if (isPlain) tr.dataset.plain = '1';
  $('f-rows').append(tr);
}

// secretParam matches the query parameters that carry keys, as the CLI's
// and the terminal UI's do (serverconf.MoveURLSecrets).
const secretParam = /(key|token|secret|passw|pwd|auth|credential|signature|^sig$|session)/i;

// varFor is the variable a form keeps one of server's secrets in
// (serverconf.VarFor).
function varFor(server, what) {
  let v = (server + '_' + what).toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  if (!v || /^[0-9]/.test(v)) v = 'MCP_' + v;
  return v;
}

// moveURLSecrets takes the values of a URL's key-like query parameters out
// of it: the URL gets ${VAR} in their place, and moved maps VAR to the
// value, to be sent as the server's secrets. The page never shows a key.
function moveURLSecrets(server, raw) {
  const moved = {};
  const q = raw.indexOf('?');
  if (q < 0) return { url: raw, moved };
  let query = raw.slice(q + 1), frag = '';
  const h = query.indexOf('#');
  if (h >= 0) { frag = query.slice(h); query = query.slice(0, h); }
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    if (eq < 0) return part;
    const k = part.slice(0, eq), v = part.slice(eq + 1);
    if (!secretParam.test(k) || v.includes('${')) return part;
    let val, name;
    try { val = decodeURIComponent(v.replace(/\+/g, ' ')); name = decodeURIComponent(k); } catch (e) { return part; }
    if (val.length < 4 || /^(true|false|yes|none|null|basic|bearer|oauth|debug)$/i.test(val)) return part;
    let ref = varFor(server, name);
    for (let n = 2; ref in moved && moved[ref] !== val; n++) ref = varFor(server, name) + '_' + n;
    moved[ref] = val;
    return k + '=${' + ref + '}';
  });
  if (!Object.keys(moved).length) return { url: raw, moved };
  return { url: raw.slice(0, q + 1) + parts.join('&') + frag, moved };
}

// The name is suggested from the URL or the command by the daemon's rules
// (the terminal UI's), until the person types one.
let nameEdited = false;
let suggestSeq = 0;

async function suggestName() {
  if (editing || nameEdited) return;
  // Only the host names a server: the query (which may hold a key) stays here.
  const body = transport() === 'stdio' ? { command: $('f-command').value } : { url: $('f-url').value.trim().split(/[?#]/)[0] };
  const seq = ++suggestSeq;
  let res;
  try { res = await api('POST', '/suggest/name', body); } catch (e) { return; } // a suggestion is optional
  if (seq !== suggestSeq || editing || nameEdited) return;
  $('f-name').value = res.name || '';
  $('h-name').textContent = res.name ? '(suggested)' : '';
}

function clearErrors() {
  for (const id of ['e-name', 'e-command', 'e-url', 'e-rows', 'e-call', 'e-startup', 'e-sandbox', 'e-oauth', 'form-error']) $(id).textContent = '';
  $('form-progress').textContent = '';
}

function openEditor(name) {
  clearErrors();
  $('form-from').hidden = true;
  $('form-from').replaceChildren();
  $('saved').hidden = true;
  $('server-form').reset();
  $('f-rows').replaceChildren();
  editing = null;
  nameEdited = false;
  $('h-name').textContent = '';
  $('f-name').readOnly = false;
  $('form-h').textContent = 'Add server';
  $('editor').hidden = false;
  $('editor').scrollIntoView({ block: 'start' });
  if (!name) { showTransport(); fillOAuth(null); $('f-name').focus(); return; }
  api('GET', '/servers/' + enc(name)).then((sc) => {
    const c = sc.config || {};
    editing = { name, revision: sc.revision, config: c };
    $('form-h').textContent = 'Edit ' + name;
    $('f-name').value = name;
    $('f-name').readOnly = true;
    const t = c.type || 'stdio';
    document.querySelector('input[name="type"][value="' + t + '"]').checked = true;
    showTransport();
    if (t === 'stdio') {
      $('f-command').value = [c.command || '', ...(c.args || [])].filter((a, i) => i > 0 || a).map(quoteArg).join(' ');
      $('f-cwd').value = c.cwd || '';
      for (const [k, v] of Object.entries(c.env || {})) {
        if (v && typeof v.value === 'string') addRow(k, '', v.value); else addRow(k, v && v.env);
      }
      fillSandbox(c.sandbox);
    } else {
      // A key written in the stored URL is shown as the variable a save
      // keeps it in, never as itself.
      const m = moveURLSecrets(name, c.url || '');
      editing.urlSecrets = m.moved;
      $('f-url').value = m.url;
      for (const [k, v] of Object.entries(c.headers || {})) addRow(k, typeof v === 'string' ? v : v && v.env);
      fillOAuth(c.oauth);
    }
    $('f-call').value = c.callTimeoutMs || '';
    $('f-startup').value = c.startupTimeoutMs || '';
    $('f-name').focus();
  }).catch((e) => cardError(name, 'edit: ' + describe(e)));
}

function closeEditor() {
  $('editor').hidden = true;
  editing = null;
  // What was typed (a key in a URL, a secret's value) leaves the page.
  $('server-form').reset();
  $('f-rows').replaceChildren();
}

function millis(id, errId) {
  const v = $(id).value.trim();
  if (!v) return 0;
  if (!/^[0-9]+$/.test(v)) { $(errId).textContent = 'a whole number of milliseconds, or blank'; throw new Error('invalid'); }
  return parseInt(v, 10);
}

// buildRequest turns the form into a PutServerRequest. Keys the form does
// not show (enabledTools, oauth, …) are kept from the stored config.
function buildRequest() {
  const name = $('f-name').value.trim();
  if (!name) { $('e-name').textContent = 'a name is needed'; throw new Error('invalid'); }
  const c = editing ? JSON.parse(JSON.stringify(editing.config)) : {};
  const t = transport();
  c.type = t;
  const rows = [...$('f-rows').querySelectorAll('tr')].map((tr) => ({
    name: tr.querySelector('.r-name').value.trim(),
    ref: tr.querySelector('.r-var').value.trim(),
    value: tr.querySelector('.r-value').value,
    plain: tr.dataset.plain === '1',
  })).filter((r) => r.name || r.ref || r.value || r.plain);
  const secrets = {};
  const table = {};
  for (const r of rows) {
    if (!r.name) { $('e-rows').textContent = 'every row needs a name'; throw new Error('invalid'); }
    if (r.plain && t === 'stdio') { table[r.name] = { value: r.value }; continue; }
    let ref = r.ref;
    if (!ref) ref = (t === 'stdio' ? r.name : (name + '_' + r.name)).toUpperCase().replace(/[^A-Z0-9_]/g, '_').replace(/^([0-9])/, '_$1');
    if (varName.test(ref)) {
      table[r.name] = { env: ref };
      secrets[ref] = r.value;
    } else if (t !== 'stdio' && /\$\{?[A-Za-z_]/.test(ref)) {
      table[r.name] = ref; // a template such as "Bearer ${TOKEN}"
      const m = ref.match(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/);
      secrets[m[1]] = r.value;
    } else {
      $('e-rows').textContent = r.name + ': the secret variable must be a name (letters, digits, _), never the secret itself';
      throw new Error('invalid');
    }
  }
  if (t === 'stdio') {
    for (const k of remoteKeys) delete c[k];
    let argv;
    try { argv = splitCommand($('f-command').value); } catch (e) { $('e-command').textContent = e.message; throw e; }
    if (!argv.length) { $('e-command').textContent = 'a command is needed'; throw new Error('invalid'); }
    c.command = argv[0];
    if (argv.length > 1) c.args = argv.slice(1); else delete c.args;
    const cwd = $('f-cwd').value.trim();
    if (cwd) c.cwd = cwd; else delete c.cwd;
    if (Object.keys(table).length) c.env = table; else delete c.env;
    readSandbox(c);
  } else {
    for (const k of stdioKeys) delete c[k];
    const typed = $('f-url').value.trim();
    if (!typed) { $('e-url').textContent = 'a URL is needed'; throw new Error('invalid'); }
    const m = moveURLSecrets(name, typed);
    Object.assign(secrets, m.moved);
    for (const [ref, val] of Object.entries((editing && editing.urlSecrets) || {})) {
      if (!(ref in secrets) && m.url.includes('${' + ref + '}')) secrets[ref] = val;
    }
    c.url = m.url;
    if (Object.keys(table).length) c.headers = table; else delete c.headers;
    readOAuth(c, name, secrets);
  }
  const call = millis('f-call', 'e-call'), startup = millis('f-startup', 'e-startup');
  if (call) c.callTimeoutMs = call; else delete c.callTimeoutMs;
  if (startup) c.startupTimeoutMs = startup; else delete c.startupTimeoutMs;
  const req = { name, config: c };
  if (Object.keys(secrets).length) req.secrets = secrets;
  if ($('f-noverify').checked) req.noVerify = true;
  return req;
}

// showFormError shows the daemon's error once: each problem beside the
// field it concerns, and above the buttons only what no field shows (a
// problem of no field, or the whole error when no field takes it, and the
// hint); the form keeps what was typed.
function showFormError(e) {
  let placed = false; // the error's message is shown beside a field
  const unplaced = [];
  const fieldOf = (path) => {
    const p = path.split('.').slice(3).join('.');
    if (p.startsWith('url')) return 'e-url';
    if (p.startsWith('command') || p.startsWith('args') || p.startsWith('cwd')) return 'e-command';
    if (p.startsWith('headers') || p.startsWith('env')) return 'e-rows';
    if (p.startsWith('sandbox')) return 'e-sandbox';
    if (p.startsWith('oauth')) return 'e-oauth';
    if (p.startsWith('callTimeoutMs')) return 'e-call';
    if (p.startsWith('startupTimeoutMs')) return 'e-startup';
    if (path.split('.').length <= 3) return 'e-name';
    return null;
  };
  const problems = (e.body && e.body.problems) || [];
  for (const p of problems) {
    const id = fieldOf(p.path);
    // A fieldset of several settings says which one a problem is of.
    const msg = id === 'e-oauth' || id === 'e-sandbox' ? p.path.split('.').slice(3).join('.') + ' ' + p.message : p.message;
    if (id) $(id).textContent = ($(id).textContent ? $(id).textContent + '; ' : '') + msg;
    else unplaced.push(p.path + ': ' + p.message);
  }
  if (/startup timeout \(/.test(e.message || '')) {
    $('e-startup').textContent = 'the server did not start in time (a first `npx -y` may download its package): raise the startup timeout';
  }
  if (!problems.length && e.status === 409 && e.body.code === 'conflict') {
    $(transport() === 'stdio' ? 'e-command' : 'e-url').textContent = e.message;
    placed = true;
  }
  let top;
  if (placed) top = hintOf(e) || 'See the field marked above.';
  else if (problems.length) top = unplaced.length ? unplaced.join('; ') : 'Please correct the fields marked above.';
  else top = describe(e);
  $('form-error').textContent = top;
}

// hintOf is the error's hint alone, in the page's words.
function hintOf(err) {
  return err.body && err.body.hint ? err.body.hint.replace('with --no-verify', 'with "Save without starting it first"') : '';
}

async function save(ev) {
  ev.preventDefault();
  clearErrors();
  let req;
  try { req = buildRequest(); } catch (e) { $('form-error').textContent = 'Please correct the fields marked above.'; return; }
  $('save').disabled = true;
  $('form-progress').textContent = req.noVerify ? 'Saving…' : 'Connecting to ' + req.name + '…';
  // A first start can take long (`npx -y` downloads its package): say how
  // long it has waited and the server's latest stderr line.
  starting = req.noVerify ? null : { name: req.name, since: Date.now(), line: '' };
  const ticker = starting && setInterval(showStarting, 1000);
  try {
    const res = await readStatuses(() => editing
      ? api('PUT', '/servers/' + enc(editing.name), req, editing.revision)
      : api('POST', '/servers', req), showAnswer);
    closeEditor();
    confirmSaved(req.name, res && res.server, req.noVerify);
    loadSecrets();
  } catch (e) {
    showFormError(e);
  } finally {
    if (ticker) clearInterval(ticker);
    starting = null;
    $('save').disabled = false;
    $('form-progress').textContent = '';
  }
}

// showStarting says how long the server being started for a save has
// been waited for, and its latest stderr line: every second, and at once
// when a line comes (a start may end before the next second).
function showStarting() {
  if (!starting) return;
  const s = Math.round((Date.now() - starting.since) / 1000);
  $('form-progress').textContent = 'Connecting to ' + starting.name + '… ' + s + ' s' +
    (starting.line ? ' · ' + starting.line.slice(0, 120) : '');
}

// confirmSaved says at the top of the page that a save is done, and in
// what state the server is.
function confirmSaved(name, st, noVerify) {
  let msg = 'Saved ' + name;
  if (st) msg += ': ' + stateText(st) + (st.state === 'ready' ? ', ' + plural(st.tools, 'tool') : '');
  if (noVerify) msg += ' (saved without starting it first)';
  $('saved').textContent = msg + '.';
  $('saved').hidden = false;
  const li = document.querySelector('#servers > li[data-name="' + CSS.escape(name) + '"]');
  if (li) li.scrollIntoView({ block: 'nearest' });
}

// openEditorWith opens the add form filled from a registry server's plan
// (guide.js): its name, command or URL, its variables and headers — a
// secret as its managed variable with an empty value to type, described —
// and what the registry says of it.
function openEditorWith(plan) {
  openEditor(null);
  const c = plan.config || {};
  $('f-name').value = plan.server;
  nameEdited = true;
  $('h-name').textContent = '(from the registry)';
  const t = c.type || 'stdio';
  document.querySelector('input[name="type"][value="' + t + '"]').checked = true;
  showTransport();
  const about = new Map((plan.fields || []).filter((f) => f.var).map((f) => [f.var, f]));
  const hint = (ref) => {
    const f = about.get(ref);
    if (!f) return '';
    const what = (f.required ? 'required' : 'optional') + (f.description ? ': ' + f.description : '');
    return f.stored ? 'stored: blank keeps it (' + what + ')' : what;
  };
  if (t === 'stdio') {
    $('f-command').value = [c.command || '', ...(c.args || [])].map(quoteArg).join(' ');
    for (const [k, v] of Object.entries(c.env || {})) {
      if (v && typeof v.value === 'string') addRow(k, '', v.value); else addRow(k, v && v.env, undefined, hint(v && v.env));
    }
  } else {
    $('f-url').value = c.url || '';
    if (c.bearerTokenEnvVar) addRow('Authorization', 'Bearer ${' + c.bearerTokenEnvVar + '}', undefined, hint(c.bearerTokenEnvVar));
    for (const [k, v] of Object.entries(c.headers || {})) {
      const ref = typeof v === 'string' ? v : v && v.env;
      const m = typeof v === 'string' && v.match(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/);
      addRow(k, ref, undefined, hint(m ? m[1] : ref));
    }
  }
  const from = $('form-from');
  from.replaceChildren(el('p', {}, 'From the MCP registry: ', el('strong', {}, plan.name + ' ' + plan.version),
    ' (' + plan.option.kind + ' ' + plan.option.label + '). Type the secrets below; nothing is saved until the server starts.'),
  ...(plan.notes || []).map((n) => el('p', { class: 'hint' }, n)));
  from.hidden = false;
}

// starting is the server a save is waiting for: its name, since when,
// and its latest stderr line.
let starting = null;

// splitCommand splits a command line with shell quoting ('…', "…", \),
// without running or expanding anything.
function splitCommand(line) {
  const out = [];
  let cur = '', inTok = false, q = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (q === "'") { if (c === "'") q = null; else cur += c; continue; }
    if (q === '"') {
      if (c === '"') q = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') { q = c; inTok = true; continue; }
    if (c === '\\' && i + 1 < line.length) { cur += line[++i]; inTok = true; continue; }
    if (/\s/.test(c)) { if (inTok) { out.push(cur); cur = ''; inTok = false; } continue; }
    cur += c; inTok = true;
  }
  if (q) throw new Error('a quote is not closed');
  if (inTok) out.push(cur);
  return out;
}

function quoteArg(a) {
  return /^[A-Za-z0-9_\-.,/:=@+%]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";
}

// ---- global settings and managed variables ----

let settingsRev = 0;
async function loadSettings() {
  try {
    const s = await api('GET', '/settings');
    settingsRev = s.revision;
    $('g-call').value = s.callTimeoutMs || '';
    $('g-retry').value = s.retryMs || '';
    showGates(s.face || {});
    showPolicy(s.policy || {});
  } catch (e) { $('settings-msg').textContent = 'Global settings: ' + describe(e); }
}

// showPolicy lists mcp.policy's rules, in the order they are tried, and
// its rate limits.
function showPolicy(p) {
  const any = (v) => v || 'any';
  const actions = { allow: 'allow', deny: 'deny', askOncePerSession: 'ask once per session', askEveryCall: 'ask every call' };
  const rules = (p.rules || []).map((r) => el('li', {},
    el('strong', {}, actions[r.action] || r.action), ': tool ', el('code', {}, any(r.tool)), ', client ', el('code', {}, any(r.client)),
    ', profile ', el('code', {}, any(r.profile)),
    r.destructive === undefined ? '' : (r.destructive ? ', destructive tools only' : ', tools that are not destructive')));
  $('policy-rules').replaceChildren(...(rules.length ? rules : [el('li', {}, 'No rules: every call is allowed.')]));
  const limits = (p.limits || []).map((l) => el('li', {},
    el('strong', {}, `${l.calls} calls per ${l.windowMs} ms`), ' for each client: tool ', el('code', {}, any(l.tool)), ', client ', el('code', {}, any(l.client))));
  $('policy-limits').replaceChildren(...(limits.length ? limits : [el('li', {}, 'No rate limits.')]));
}

// showGates shows the face's gates, and says at the top of the page when
// clients see none of the servers' tools.
function showGates(face) {
  $('g-external').checked = !!face.allowExternalCall;
  $('g-write').checked = !!face.allowWrite;
  $('gates-off').hidden = !!face.allowExternalCall;
}

async function switchOnExternalCalls() {
  notice('');
  try {
    const s = await api('GET', '/settings');
    const face = Object.assign({}, s.face, { allowExternalCall: true });
    const saved = await api('PUT', '/settings', { callTimeoutMs: s.callTimeoutMs, retryMs: s.retryMs, face }, s.revision);
    settingsRev = saved.revision;
    showGates(saved.face || {});
  } catch (e) { notice('external calls: ' + describe(e)); }
}

async function saveSettings(ev) {
  ev.preventDefault();
  $('settings-msg').textContent = '';
  $('e-g-call').textContent = ''; $('e-g-retry').textContent = '';
  let body;
  try { body = { callTimeoutMs: millis('g-call', 'e-g-call'), retryMs: millis('g-retry', 'e-g-retry') }; } catch (e) { return; }
  body.face = { allowExternalCall: $('g-external').checked, allowWrite: $('g-write').checked };
  try {
    const s = await api('PUT', '/settings', body, settingsRev);
    settingsRev = s.revision;
    showGates(s.face || {});
    $('settings-msg').textContent = 'Saved.';
  } catch (e) {
    $('settings-msg').textContent = describe(e);
    if (e.body && e.body.code === 'stale_revision') {
      // Servers changed meanwhile: take the current revision, keep the
      // values typed, and let the person save again.
      const typed = [$('g-call').value, $('g-retry').value];
      await loadSettings();
      [$('g-call').value, $('g-retry').value] = typed;
      $('settings-msg').textContent = 'The settings changed meanwhile: check the values and save again.';
    }
    for (const p of (e.body && e.body.problems) || []) {
      const id = p.path.endsWith('retryMs') ? 'e-g-retry' : 'e-g-call';
      $(id).textContent = p.message;
    }
  }
}

async function loadSecrets() {
  try {
    const s = await api('GET', '/secrets');
    $('secrets').replaceChildren(...s.names.map((n) => el('li', {}, el('code', {}, n),
      el('button', { type: 'button', class: 'danger', 'aria-label': 'Remove ' + n, onclick: () => removeSecret(n) }, 'Remove'))));
    if (!s.names.length) $('secrets').append(el('li', {}, 'none stored'));
  } catch (e) { $('secret-msg').textContent = describe(e); }
}

async function setSecret(ev) {
  ev.preventDefault();
  const name = $('s-name').value.trim();
  $('secret-msg').textContent = '';
  try {
    await api('PUT', '/secrets/' + enc(name), { value: $('s-value').value });
    $('s-value').value = '';
    $('secret-msg').textContent = name + ' is set.';
    loadSecrets();
  } catch (e) { $('secret-msg').textContent = describe(e); }
}

async function removeSecret(name) {
  if (!confirm('Remove the variable ' + name + '?')) return;
  try { await api('DELETE', '/secrets/' + enc(name)); loadSecrets(); } catch (e) { $('secret-msg').textContent = describe(e); }
}

// ---- live updates ----

function follow() {
  // EventSource sends no custom headers: the token rides in the query.
  const es = new EventSource('/api/v1/events?page_token=' + enc(pageToken));
  es.addEventListener('open', () => {
    $('live').textContent = 'Live: changes appear as they happen';
    reconnected();
    refresh().catch((e) => notice(describe(e)));
  });
  es.addEventListener('error', () => {
    $('live').textContent = es.readyState === EventSource.CLOSED ? 'Disconnected' : 'Reconnecting…';
    if (es.readyState === EventSource.CLOSED) {
      api('GET', '/status').then(() => setTimeout(follow, 2000)).catch(() => {});
    }
  });
  const on = (type, f) => es.addEventListener(type, (m) => { try { f(JSON.parse(m.data)); } catch (e) { /* a malformed event is skipped */ } });
  on('server', (ev) => { if (ev.status) showStatus(ev.status, true); });
  on('server_removed', (ev) => { if (seenGone(ev.server, ev.seq || 0, true)) render(); });
  on('held', () => refresh());
  on('settings_file', (ev) => showHandEdit(ev.settingsFile));
  on('catalog', () => refresh());
  on('call_approval', () => loadApprovals());
  on('stderr', (ev) => {
    // The server being started for a save: its latest line is progress.
    if (starting && starting.name === ev.server) { starting.line = ev.line; showStarting(); }
    progress.set(ev.server, ev.line);
    const st = servers.get(ev.server);
    if (!st) return;
    st.stderr = (st.stderr || []).concat([ev.line]).slice(-20);
    drawServer(st);
  });
}

async function start() {
  $('add').addEventListener('click', () => openEditor(null));
  $('empty-add').addEventListener('click', () => openEditor(null));
  $('reload').addEventListener('click', async () => {
    notice('');
    try { await api('POST', '/reload'); await refresh(); } catch (e) { notice('reload: ' + describe(e)); }
  });
  $('cancel').addEventListener('click', closeEditor);
  $('server-form').addEventListener('submit', save);
  $('settings-form').addEventListener('submit', saveSettings);
  $('gates-on').addEventListener('click', switchOnExternalCalls);
  $('filter').addEventListener('input', applyFilter);
  $('secret-form').addEventListener('submit', setSecret);
  $('add-row').addEventListener('click', () => addRow('', ''));
  $('f-name').addEventListener('input', () => { nameEdited = true; $('h-name').textContent = ''; });
  for (const id of ['f-url', 'f-command']) $(id).addEventListener('input', suggestName);
  document.querySelectorAll('input[name="type"]').forEach((r) => r.addEventListener('change', () => { showTransport(); suggestName(); }));
  $('logout').addEventListener('click', async () => {
    await fetch('/logout', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Plexus-Page-Token': pageToken }, body: '{}' });
    sessionStorage.removeItem('plexus.pageToken');
    showSignin();
  });
  try {
    await api('GET', '/status');
  } catch (e) {
    if (e.status !== 401) notice(describe(e));
    return;
  }
  $('app').hidden = false;
  $('logout').hidden = false;
  await refresh().catch((e) => notice(describe(e)));
  loadSecrets();
  loadSettings();
  loadApprovals();
  follow();
}

// ---- tool calls waiting for the user's approval ----

// loadApprovals lists the calls waiting, each with what it would do and
// buttons that decide it.
// A client that elicits in URL mode sends the user here with the call's id
// in ?call= (the daemon's host/urlask.go): that call is marked and brought
// into view, and the page says so when it no longer waits.
const sentFor = new URLSearchParams(location.search).get('call') || '';

async function loadApprovals() {
  let waiting;
  try { waiting = await api('GET', '/approvals'); } catch (e) { $('approvals-msg').textContent = describe(e); return; }
  const sent = sentFor && waiting.find((w) => w.id === sentFor);
  if (sentFor && !sent && !$('approvals-msg').textContent) {
    $('approvals-msg').textContent = 'The call ' + sentFor + ' you were sent here for no longer waits: it was decided, or it gave up.';
  }
  $('approvals').hidden = waiting.length === 0 && !$('approvals-msg').textContent;
  $('approval-list').replaceChildren(...waiting.map((w) => el('li', w === sent ? { 'data-id': w.id, class: 'attention', 'aria-current': 'true' } : { 'data-id': w.id },
    el('span', {}, w === sent && el('strong', {}, 'You were sent here for this call: '), el('strong', {}, w.name), ' from ', el('code', {}, w.client || 'the settings API'), ' (', w.rule, '): ', el('code', {}, w.arguments)),
    el('button', { type: 'button', onclick: () => decideCall(w, true) }, 'Approve'),
    el('button', { type: 'button', onclick: () => decideCall(w, false) }, 'Deny'))));
  if (sent && !shown) {
    shown = true;
    $('approval-list').querySelector('[aria-current]').scrollIntoView({ block: 'center' });
  }
}
let shown = false;

async function decideCall(w, approve) {
  try {
    await api('POST', '/approvals/' + encodeURIComponent(w.id), { approve });
    $('approvals-msg').textContent = (approve ? 'Approved ' : 'Refused ') + w.name + '.';
  } catch (e) { $('approvals-msg').textContent = describe(e); }
  loadApprovals();
}

document.addEventListener('DOMContentLoaded', start);

// The sandbox fields (docs/sandbox.md): the box switches it on; the lists
// widen it. Any list filled in implies the box.
const lines = (id) => $(id).value.split('\n').map((s) => s.trim()).filter(Boolean);

function fillSandbox(sb) {
  $('f-sandbox').checked = !!sb;
  if (!sb) return;
  const fs = sb.filesystem || {};
  $('f-sb-read').value = (fs.read || []).join('\n');
  $('f-sb-write').value = (fs.write || []).join('\n');
  $('f-sb-net').value = Array.isArray(sb.network) ? sb.network.join('\n') : (sb.network || 'none');
}

function readSandbox(c) {
  const read = lines('f-sb-read'), write = lines('f-sb-write'), net = lines('f-sb-net');
  if (!$('f-sandbox').checked && !read.length && !write.length && !net.length) { delete c.sandbox; return; }
  const sb = Object.assign({}, c.sandbox || {});
  const fs = {};
  if (read.length) fs.read = read;
  if (write.length) fs.write = write;
  sb.filesystem = fs;
  sb.network = net.length === 1 && (net[0] === 'none' || net[0] === 'all') ? net[0] : (net.length ? net : 'none');
  c.sandbox = sb;
}
