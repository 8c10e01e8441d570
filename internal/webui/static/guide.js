// The web page as a guide (with app.js): the MCP registry's catalog, to
// browse and search and to fill the add form from an entry; and the
// person's MCP clients, to import their servers and to connect them to
// Plexus. The daemon does the work (GET /v1/registry/servers, POST
// /v1/registry/plan, /v1/clients): the page shows what it answers, as
// text, and asks before anything is written.
'use strict';

// ---- the registry's catalog ----

const catalog = { q: '', cursor: '', entry: null, plan: null };

function ago(ms) {
  const s = Math.round(ms / 1000);
  if (s < 90) return s + ' s';
  if (s < 5400) return Math.round(s / 60) + ' min';
  if (s < 129600) return Math.round(s / 3600) + ' h';
  return Math.round(s / 86400) + ' days';
}

// showSource says where the catalog's answer came from: the registry now,
// the daemon's cache (with its age), or the cache because the registry
// cannot be reached.
function showSource(src) {
  let t = 'From ' + src.registry;
  if (src.offline) t = 'Offline: ' + src.reason + ' — showing the answer of ' + ago(src.ageMs) + ' ago.';
  else if (src.cached) t += ' (as it answered ' + ago(src.ageMs) + ' ago)';
  $('catalog-source').textContent = t;
  $('catalog-source').classList.toggle('attention', !!src.offline);
}

async function searchCatalog(more) {
  $('catalog-error').textContent = '';
  if (!more) {
    catalog.q = $('catalog-q').value.trim();
    catalog.cursor = '';
    $('catalog-results').replaceChildren();
  }
  const q = new URLSearchParams();
  if (catalog.q) q.set('search', catalog.q);
  if (catalog.cursor) q.set('cursor', catalog.cursor);
  $('catalog-search').disabled = true;
  try {
    const res = await api('GET', '/registry/servers' + (q.toString() ? '?' + q : ''));
    showSource(res.source);
    catalog.cursor = res.nextCursor || '';
    $('catalog-more').hidden = !catalog.cursor;
    $('catalog-results').append(...res.servers.map(renderEntry));
    if (!$('catalog-results').children.length) {
      $('catalog-results').append(el('li', {}, 'No server of the registry has “' + catalog.q + '” in its name.'));
    }
  } catch (e) {
    $('catalog-error').textContent = describe(e);
  } finally {
    $('catalog-search').disabled = false;
  }
}

// renderEntry is one registry server: what it is, the ways it runs (those
// Plexus cannot, with the reason), and the button that adds it.
function renderEntry(s) {
  const li = el('li', { class: 'entry', 'data-name': s.name });
  const head = el('h3', {}, el('span', { class: 'name' }, s.title || s.name), el('span', { class: 'hint' }, (s.title ? s.name + ' ' : '') + s.version));
  if (s.status === 'deprecated' || s.status === 'deleted') head.append(el('span', { class: 'badge off' }, s.status));
  li.append(head, el('p', {}, s.description));
  if (s.statusMessage) li.append(el('p', { class: 'hint' }, s.statusMessage));
  const ways = el('ul', { class: 'ways' });
  for (const o of s.options) {
    ways.append(el('li', { class: o.runnable ? 'can' : 'cannot' }, o.kind + ' ' + o.label + (o.runnable ? '' : ' — not here: ' + o.reason)));
  }
  li.append(ways);
  const runnable = s.options.some((o) => o.runnable);
  const links = el('p', { class: 'hint' });
  for (const [label, href] of [['website', s.websiteUrl], ['source', s.repository]]) {
    if (href && /^https?:\/\//i.test(href)) links.append(el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, label), ' ');
  }
  if (links.children.length) li.append(links);
  li.append(el('button', { type: 'button', disabled: !runnable, onclick: () => openEntry(s) },
    runnable ? 'Add ' + (s.title || s.name.split('/').pop()) + '…' : 'Plexus cannot run it'));
  return li;
}

// openEntry asks the daemon for the entry's plan and shows the inputs it
// takes that are not secrets; the secrets are typed in the add form.
async function openEntry(s, option) {
  catalog.entry = s;
  $('reg-error').textContent = '';
  $('reg-h').textContent = 'Add ' + (s.title || s.name);
  $('reg-desc').textContent = s.name + ' ' + s.version;
  const sel = $('reg-option');
  const runnable = s.options.filter((o) => o.runnable);
  sel.replaceChildren(...runnable.map((o) => el('option', { value: String(o.index) }, o.kind + ' ' + o.label)));
  if (option) sel.value = String(option);
  $('reg-option-field').hidden = runnable.length < 2;
  $('reg-panel').hidden = false;
  $('reg-panel').scrollIntoView({ block: 'nearest' });
  await planEntry({});
}

// planEntry asks for the plan with the values typed so far and draws its
// inputs (keeping what was typed).
async function planEntry(values) {
  const s = catalog.entry;
  try {
    const plan = await api('POST', '/registry/plan', { name: s.name, version: s.version, option: parseInt($('reg-option').value || '0', 10), values });
    catalog.plan = plan;
    drawFields(plan, values);
    return plan;
  } catch (e) {
    $('reg-error').textContent = describe(e);
    return null;
  }
}

function drawFields(plan, typed) {
  const box = $('reg-fields');
  box.replaceChildren();
  let i = 0;
  for (const f of plan.fields) {
    if (f.secret || f.omitted) continue;
    const id = 'reg-f-' + (i++);
    const label = f.label + (f.required ? ' (required)' : ' (optional)');
    const value = (typed[f.key] || f.value || [])[0] || '';
    let input;
    if (f.choices && f.choices.length) {
      input = el('select', { id, 'data-key': f.key }, el('option', { value: '' }, f.required ? 'choose one' : '(leave out)'),
        ...f.choices.map((c) => el('option', { value: c }, c)));
      input.value = value;
    } else {
      input = el('input', { id, 'data-key': f.key, value, autocomplete: 'off', spellcheck: 'false',
        placeholder: f.placeholder || (f.default ? 'default ' + f.default : (f.format === 'filepath' ? '/a/whole/path or ~/path' : '')) });
    }
    box.append(el('div', { class: 'field' }, el('label', { for: id }, label), input,
      f.description ? el('span', { class: 'hint' }, f.description) : null));
  }
  const secrets = plan.fields.filter((f) => f.secret && !f.omitted);
  if (secrets.length) {
    box.append(el('p', { class: 'hint' }, 'Secrets, typed in the add form and kept as managed secrets: ' +
      secrets.map((f) => f.label + (f.stored ? ' (stored)' : f.required ? ' (required)' : ' (optional)')).join(', ')));
  }
  $('reg-notes').replaceChildren(...(plan.notes || []).map((n) => el('li', {}, n)));
  $('reg-error').textContent = plan.missing.length ? 'Still needed: ' + plan.missing.join(', ') : '';
}

// fillForm plans with the values typed and, when nothing is missing, opens
// the add form filled from the plan.
async function fillForm() {
  const values = {};
  for (const input of $('reg-fields').querySelectorAll('[data-key]')) {
    if (input.value.trim()) values[input.dataset.key] = [input.value.trim()];
  }
  const plan = await planEntry(values);
  if (!plan) return;
  if (plan.missing.length) {
    $('reg-error').textContent = 'Give ' + plan.missing.join(', ') + ' first.';
    return;
  }
  $('reg-panel').hidden = true;
  openEditorWith(plan);
}

// ---- the person's MCP clients: import and connect ----

let clientAction = null; // {client, kind: 'import'|'connect', base}

async function loadClients() {
  try {
    const res = await api('GET', '/clients');
    $('clients-reason').hidden = res.available;
    $('clients-reason').textContent = res.reason || '';
    $('client-list').replaceChildren(...res.clients.filter((c) => c.exists || c.error).map(renderClient));
    if (res.available && !$('client-list').children.length) {
      $('client-list').append(el('li', {}, 'No MCP client settings found in your home. Connect one anyway: ',
        ...res.clients.map((c) => el('button', { type: 'button', onclick: () => startConnect(c) }, c.title))));
    }
  } catch (e) {
    $('clients-reason').hidden = false;
    $('clients-reason').textContent = describe(e);
  }
}

function renderClient(c) {
  const li = el('li', { class: 'client', 'data-client': c.client },
    el('strong', {}, c.title), ' ', el('code', {}, c.path), ' ');
  if (c.error) {
    li.append(el('span', { class: 'err' }, c.error));
    return li;
  }
  li.append(el('span', { class: 'hint' }, c.servers.length ? plural(c.servers.length, 'server') + ': ' + c.servers.join(', ') : 'no servers of its own'), ' ');
  if (c.connected) li.append(el('span', { class: 'badge ok', 'data-testid': 'connected' }, 'connected to Plexus'), ' ');
  if (c.servers.length) li.append(el('button', { type: 'button', onclick: () => startImport(c) }, 'Import its servers…'), ' ');
  if (!c.connected) li.append(el('button', { type: 'button', onclick: () => startConnect(c) }, 'Connect to Plexus…'));
  return li;
}

function openClientPanel(title) {
  $('client-h').textContent = title;
  $('client-diff').textContent = '';
  $('client-diff').hidden = true;
  $('client-report').replaceChildren();
  $('client-msg').textContent = '';
  $('client-go').hidden = false;
  $('client-go').disabled = false;
  $('client-panel').hidden = false;
  $('client-panel').scrollIntoView({ block: 'nearest' });
}

// startImport shows what importing the client's file would do.
async function startImport(c) {
  openClientPanel('Import the servers of ' + c.title);
  try {
    const res = await api('POST', '/clients/' + enc(c.client) + '/import', { dryRun: true });
    showImport(res);
    clientAction = { client: c.client, kind: 'import' };
    $('client-go').textContent = 'Import';
    $('client-go').hidden = !res.entries.some((e) => e.action !== 'skipped' && e.result !== 'unchanged' && e.result !== 'conflict');
    $('client-msg').textContent = $('client-go').hidden ? 'Nothing to import: Plexus has these already.' : 'Nothing is imported until you confirm.';
  } catch (e) { $('client-msg').textContent = describe(e); $('client-go').hidden = true; }
}

function showImport(res) {
  $('client-report').replaceChildren(...res.entries.map((e) => el('li', {},
    (e.name || e.original) + ': ' + (e.result || e.action) + (e.reason ? ' — ' + e.reason : '') +
    (e.secrets && e.secrets.length ? ' (secrets kept as ' + e.secrets.join(', ') + ')' : ''))));
}

// startConnect shows the change connecting would make to the client's file.
async function startConnect(c) {
  openClientPanel('Connect ' + c.title + ' to Plexus');
  try {
    const res = await api('POST', '/clients/' + enc(c.client) + '/connect', { dryRun: true });
    clientAction = { client: c.client, kind: 'connect', base: res.base };
    if (!res.changed) {
      $('client-msg').textContent = c.title + ' already runs Plexus: ' + res.path + ' is as it should be.';
      $('client-go').hidden = true;
      return;
    }
    $('client-diff').textContent = res.diff;
    $('client-diff').hidden = false;
    $('client-go').textContent = 'Write this change';
    $('client-msg').textContent = 'This is the change to ' + res.path + ' (the values of your other entries hidden). Nothing is written until you confirm; the file before is kept beside it.';
  } catch (e) { $('client-msg').textContent = describe(e); $('client-go').hidden = true; }
}

async function confirmClient() {
  const act = clientAction;
  if (!act) return;
  $('client-go').disabled = true;
  try {
    if (act.kind === 'import') {
      const res = await api('POST', '/clients/' + enc(act.client) + '/import', {});
      showImport(res);
      $('client-msg').textContent = 'Imported: ' + (res.added.length ? res.added.join(', ') : 'nothing new') + '.';
      await refresh();
      loadSecrets();
    } else {
      const res = await api('POST', '/clients/' + enc(act.client) + '/connect', { base: act.base });
      let msg = 'Connected: ' + res.path + ' now runs Plexus' + (res.backup ? ' (the file before is kept as ' + res.backup + ')' : '') +
        '. Restart ' + res.title + ', or reload its MCP servers, to see Plexus.';
      if (!res.allowExternalCall) msg += ' External calls are off: switch them on (at the top) so that it sees your servers\u2019 tools.';
      $('client-msg').textContent = msg;
    }
    $('client-go').hidden = true;
    clientAction = null;
    loadClients();
  } catch (e) {
    $('client-msg').textContent = describe(e);
    $('client-go').disabled = false;
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('catalog-form').addEventListener('submit', (ev) => { ev.preventDefault(); searchCatalog(false); });
  $('catalog-more').addEventListener('click', () => searchCatalog(true));
  $('reg-fill').addEventListener('click', fillForm);
  $('reg-cancel').addEventListener('click', () => { $('reg-panel').hidden = true; });
  $('reg-option').addEventListener('change', () => planEntry({}));
  $('client-go').addEventListener('click', confirmClient);
  $('client-cancel').addEventListener('click', () => { $('client-panel').hidden = true; clientAction = null; });
  $('empty-catalog').addEventListener('click', () => { $('catalog').scrollIntoView(); $('catalog-q').focus(); searchCatalog(false); });
  $('empty-import').addEventListener('click', () => { $('clients').scrollIntoView(); loadClients(); });
  // The app shows itself once logged in; then the clients are read.
  new MutationObserver(() => { if (!$('app').hidden && !catalog.started) { catalog.started = true; loadClients(); } })
    .observe($('app'), { attributes: true, attributeFilter: ['hidden'] });
});
