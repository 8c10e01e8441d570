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

// api calls the settings API. Changes are sent as JSON, which is also what
// the page's guard demands of them.
async function api(method, path, body, ifMatch) {
  const opts = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
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
  let s = err.message;
  if (err.body && err.body.hint) s += ' — ' + err.body.hint.replace('with --no-verify', 'with "Save without starting it first"');
  return s;
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

function stateText(st) {
  if (!st.enabled) return 'disabled';
  if (st.needsApproval) return 'needs approval';
  if (st.crashLooping) return 'crash-looping';
  return st.state;
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
  const li = el('li', { class: 'server s-' + st.state, 'data-name': st.name, 'data-state': st.state });
  const label = stateText(st);
  li.append(el('h3', {}, el('span', { class: 'name' }, st.name),
    el('span', { class: 'state s-' + st.state, 'data-testid': 'state' }, 'State: ' + label)));
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
  if (st.lastError) {
    let e = st.lastError;
    if (st.exitCode !== undefined && st.exitCode !== null) e += ' (exit code ' + st.exitCode + ')';
    if (st.httpStatus) e += ' (HTTP ' + st.httpStatus + ')';
    fact(dl, 'Last error', el('span', { class: 'lasterr', 'data-testid': 'lasterr' }, e + (st.lastErrorAt ? ' at ' + when(st.lastErrorAt) : '')));
  }
  if (st.auth) fact(dl, 'Authorization', authText(st.auth));
  for (const w of st.warnings || []) fact(dl, 'Warning', w);
  li.append(dl);
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
  if (st.type !== 'stdio') act.append(el('button', { type: 'button', onclick: () => login(st.name, li) }, 'Log in (OAuth)'));
  act.append(el('button', { type: 'button', class: 'danger', onclick: () => remove(st.name) }, 'Delete'));
  li.append(act, el('p', { class: 'err card-error', role: 'alert' }, cardErrors.get(st.name) || ''));
  return li;
}

function authText(a) {
  if (a.login === 'waiting') return 'waiting for the browser to finish logging in…';
  if (a.login === 'failed') return 'login failed: ' + (a.loginError || 'unknown error');
  if (a.needsLogin) return 'needs a login';
  if (a.loggedIn) return 'logged in' + (a.issuer ? ' at ' + a.issuer : '') + (a.expiresAt ? ', token until ' + when(a.expiresAt) : '');
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

function render() {
  const ul = $('servers');
  const names = [...servers.keys()].sort();
  ul.replaceChildren(...names.map((n) => renderServer(servers.get(n))));
  $('empty').hidden = names.length > 0;
}

function updateServer(st) {
  servers.set(st.name, st);
  const old = document.querySelector('#servers > li[data-name="' + CSS.escape(st.name) + '"]');
  if (!old) { render(); return; }
  const open = [...old.querySelectorAll('details')].map((d) => d.open);
  const logs = old.querySelector('.logs');
  const fresh = renderServer(st);
  fresh.querySelectorAll('details').forEach((d, i) => { if (open[i]) d.open = true; });
  if (logs) fresh.append(logs);
  old.replaceWith(fresh);
}

async function refresh() {
  const list = await api('GET', '/servers');
  servers.clear();
  for (const s of list.servers) servers.set(s.name, s);
  render();
}

// cardErrors keeps each card's last action error, so that a card drawn
// anew by a live update (which may arrive just after the action's answer)
// still shows it; the next action on the card clears it.
const cardErrors = new Map();

function cardError(name, msg) {
  if (msg) cardErrors.set(name, msg);
  else cardErrors.delete(name);
  const li = document.querySelector('#servers > li[data-name="' + CSS.escape(name) + '"]');
  if (li) li.querySelector('.card-error').textContent = msg;
  else notice(msg);
}

async function act_(name, action) {
  cardError(name, '');
  try {
    const res = await api('POST', '/servers/' + enc(name) + '/' + action);
    if (res && res.server) updateServer(res.server);
  } catch (e) { cardError(name, action + ': ' + describe(e)); }
}

async function remove(name) {
  if (!confirm('Delete the server ' + name + ' and its stored credentials?')) return;
  try {
    await api('DELETE', '/servers/' + enc(name));
    servers.delete(name);
    render();
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
    const res = await api('POST', '/servers/' + enc(name) + '/accept', { tools: [h.tool], hashes });
    if (res && res.server) updateServer(res.server);
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
function addRow(name, ref) {
  const i = ++rowSeq;
  const tr = el('tr', {},
    el('td', {}, el('input', { 'aria-label': 'Name ' + i, class: 'r-name', value: name || '', autocomplete: 'off', spellcheck: 'false' })),
    el('td', {}, el('input', { 'aria-label': 'Secret variable ' + i, class: 'r-var', value: ref || '', autocomplete: 'off', spellcheck: 'false' })),
    el('td', {}, el('input', { 'aria-label': 'Value ' + i, class: 'r-value', type: 'password', autocomplete: 'new-password',
      placeholder: ref ? 'blank keeps, - removes' : '' })),
    el('td', {}, el('button', { type: 'button', 'aria-label': 'Remove row ' + i, onclick: () => tr.remove() }, '✕')));
  $('f-rows').append(tr);
}

function clearErrors() {
  for (const id of ['e-name', 'e-command', 'e-url', 'e-rows', 'e-call', 'e-startup', 'form-error']) $(id).textContent = '';
  $('form-progress').textContent = '';
}

function openEditor(name) {
  clearErrors();
  $('server-form').reset();
  $('f-rows').replaceChildren();
  editing = null;
  $('f-name').readOnly = false;
  $('form-h').textContent = 'Add server';
  $('editor').hidden = false;
  if (!name) { showTransport(); $('f-name').focus(); return; }
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
      for (const [k, v] of Object.entries(c.env || {})) addRow(k, v && v.env);
      fillSandbox(c.sandbox);
    } else {
      $('f-url').value = c.url || '';
      for (const [k, v] of Object.entries(c.headers || {})) addRow(k, typeof v === 'string' ? v : v && v.env);
    }
    $('f-call').value = c.callTimeoutMs || '';
    $('f-startup').value = c.startupTimeoutMs || '';
    $('f-name').focus();
  }).catch((e) => cardError(name, 'edit: ' + describe(e)));
}

function closeEditor() {
  $('editor').hidden = true;
  editing = null;
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
  })).filter((r) => r.name || r.ref || r.value);
  const secrets = {};
  const table = {};
  for (const r of rows) {
    if (!r.name) { $('e-rows').textContent = 'every row needs a name'; throw new Error('invalid'); }
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
    const u = $('f-url').value.trim();
    if (!u) { $('e-url').textContent = 'a URL is needed'; throw new Error('invalid'); }
    c.url = u;
    if (Object.keys(table).length) c.headers = table; else delete c.headers;
  }
  const call = millis('f-call', 'e-call'), startup = millis('f-startup', 'e-startup');
  if (call) c.callTimeoutMs = call; else delete c.callTimeoutMs;
  if (startup) c.startupTimeoutMs = startup; else delete c.startupTimeoutMs;
  const req = { name, config: c };
  if (Object.keys(secrets).length) req.secrets = secrets;
  if ($('f-noverify').checked) req.noVerify = true;
  return req;
}

// showFormError puts the daemon's error beside the field it concerns, and
// the whole of it above the buttons; the form keeps what was typed.
function showFormError(e) {
  $('form-error').textContent = describe(e);
  const fieldOf = (path) => {
    const p = path.split('.').slice(3).join('.');
    if (p.startsWith('url')) return 'e-url';
    if (p.startsWith('command') || p.startsWith('args') || p.startsWith('cwd')) return 'e-command';
    if (p.startsWith('headers') || p.startsWith('env')) return 'e-rows';
    if (p.startsWith('sandbox')) return 'e-sandbox';
    if (p.startsWith('callTimeoutMs')) return 'e-call';
    if (p.startsWith('startupTimeoutMs')) return 'e-startup';
    if (path.split('.').length <= 3) return 'e-name';
    return null;
  };
  const problems = (e.body && e.body.problems) || [];
  for (const p of problems) {
    const id = fieldOf(p.path);
    if (id) $(id).textContent = ($(id).textContent ? $(id).textContent + '; ' : '') + p.message;
  }
  if (!problems.length && e.status === 409 && e.body.code === 'conflict') {
    $(transport() === 'stdio' ? 'e-command' : 'e-url').textContent = e.message;
  }
}

async function save(ev) {
  ev.preventDefault();
  clearErrors();
  let req;
  try { req = buildRequest(); } catch (e) { $('form-error').textContent = 'Please correct the fields marked above.'; return; }
  $('save').disabled = true;
  $('form-progress').textContent = req.noVerify ? 'Saving…' : 'Connecting to ' + req.name + '…';
  try {
    const res = editing
      ? await api('PUT', '/servers/' + enc(editing.name), req, editing.revision)
      : await api('POST', '/servers', req);
    if (res && res.server) updateServer(res.server);
    closeEditor();
    loadSecrets();
  } catch (e) {
    showFormError(e);
  } finally {
    $('save').disabled = false;
    $('form-progress').textContent = '';
  }
}

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
  } catch (e) { $('settings-msg').textContent = 'Global settings: ' + describe(e); }
}

async function saveSettings(ev) {
  ev.preventDefault();
  $('settings-msg').textContent = '';
  $('e-g-call').textContent = ''; $('e-g-retry').textContent = '';
  let body;
  try { body = { callTimeoutMs: millis('g-call', 'e-g-call'), retryMs: millis('g-retry', 'e-g-retry') }; } catch (e) { return; }
  try {
    const s = await api('PUT', '/settings', body, settingsRev);
    settingsRev = s.revision;
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
  const es = new EventSource('/api/v1/events');
  es.addEventListener('open', () => {
    $('live').textContent = 'Live: changes appear as they happen';
    refresh().catch((e) => notice(describe(e)));
  });
  es.addEventListener('error', () => {
    $('live').textContent = es.readyState === EventSource.CLOSED ? 'Disconnected' : 'Reconnecting…';
    if (es.readyState === EventSource.CLOSED) {
      api('GET', '/status').then(() => setTimeout(follow, 2000)).catch(() => {});
    }
  });
  const on = (type, f) => es.addEventListener(type, (m) => { try { f(JSON.parse(m.data)); } catch (e) { /* a malformed event is skipped */ } });
  on('server', (ev) => { if (ev.status) updateServer(ev.status); });
  on('server_removed', (ev) => { servers.delete(ev.server); render(); });
  on('held', () => refresh());
  on('catalog', () => refresh());
  on('stderr', (ev) => {
    const st = servers.get(ev.server);
    if (!st) return;
    st.stderr = (st.stderr || []).concat([ev.line]).slice(-20);
    updateServer(st);
  });
}

async function start() {
  $('add').addEventListener('click', () => openEditor(null));
  $('reload').addEventListener('click', async () => {
    notice('');
    try { await api('POST', '/reload'); await refresh(); } catch (e) { notice('reload: ' + describe(e)); }
  });
  $('cancel').addEventListener('click', closeEditor);
  $('server-form').addEventListener('submit', save);
  $('settings-form').addEventListener('submit', saveSettings);
  $('secret-form').addEventListener('submit', setSecret);
  $('add-row').addEventListener('click', () => addRow('', ''));
  document.querySelectorAll('input[name="type"]').forEach((r) => r.addEventListener('change', showTransport));
  $('logout').addEventListener('click', async () => {
    await fetch('/logout', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
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
  follow();
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
