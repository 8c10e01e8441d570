// The add / edit form's OAuth fields: the grant by which Plexus gets a
// remote server's tokens and what that grant needs, the same settings as
// `plexus add --oauth-grant …` (the server's "oauth" object). Secrets (the
// client secret, the private key, the identity provider's client secret)
// are sent once as managed secrets and the config names them; the page
// never receives them back, so their fields are blank when editing.
'use strict';

// oauthText are the plain settings: field → key of "oauth".
const oauthText = {
  'f-client-id': 'clientId', 'f-auth-method': 'authMethod', 'f-private-key-file': 'privateKeyFile',
  'f-signing-alg': 'signingAlg', 'f-token-file': 'tokenFile', 'f-idp-token-url': 'idpTokenUrl',
  'f-idp-client-id': 'idpClientId', 'f-id-token-file': 'idTokenFile',
};
// oauthSecrets are the secret settings: field → [key, what the variable is
// named for (serverconf.VarFor)].
const oauthSecrets = {
  'f-client-secret': ['clientSecret', 'client_secret'],
  'f-private-key': ['privateKey', 'private_key'],
  'f-idp-client-secret': ['idpClientSecret', 'idp_client_secret'],
};

// oauthShown reports whether a field (or its label) belongs to the grant
// and the client authentication chosen.
function oauthShown(e) {
  const grant = $('f-grant').value || 'login';
  if (e.dataset.grants && !e.dataset.grants.split(' ').includes(grant)) return false;
  const keyAuth = $('f-auth-method').value === 'private_key_jwt';
  if ('keyAuth' in e.dataset && !keyAuth) return false;
  if ('secretAuth' in e.dataset && keyAuth) return false;
  return true;
}

function showOAuth() {
  for (const e of $('oauth-fields').querySelectorAll('[data-grants]')) e.hidden = !oauthShown(e);
}

// fillOAuth shows a stored server's "oauth" object.
function fillOAuth(o) {
  o = o || {};
  $('f-grant').value = o.grant || '';
  for (const [id, key] of Object.entries(oauthText)) $(id).value = o[key] || '';
  $('f-scopes').value = (o.scopes || []).join(' ');
  for (const [id, [key]] of Object.entries(oauthSecrets)) {
    $(id).value = '';
    $(id).placeholder = o[key] ? 'stored: blank keeps it, - removes it' : '';
  }
  showOAuth();
}

// readOAuth writes the fields into c.oauth, keeping the keys the form does
// not show (authUrl, tokenUrl); a setting of a grant not chosen is
// dropped, as the daemon refuses it. Typed secrets go into secrets under
// the server's own variables.
function readOAuth(c, server, secrets) {
  const o = Object.assign({}, c.oauth || {});
  const grant = $('f-grant').value;
  if (grant) o.grant = grant; else delete o.grant;
  for (const [id, key] of Object.entries(oauthText)) {
    const v = $(id).value.trim();
    if (v && oauthShown($(id))) o[key] = v; else delete o[key];
  }
  const scopes = $('f-scopes').value.split(/[\s,]+/).filter(Boolean);
  if (scopes.length) o.scopes = scopes; else delete o.scopes;
  for (const [id, [key, what]] of Object.entries(oauthSecrets)) {
    const v = $(id).value;
    if (!oauthShown($(id)) || v.trim() === '-') { delete o[key]; continue; }
    if (!v.trim()) continue; // blank keeps the stored one
    const ref = varFor(server, what);
    o[key] = { env: ref };
    secrets[ref] = id === 'f-private-key' ? v.trim() + '\n' : v;
  }
  if (Object.keys(o).length) c.oauth = o; else delete c.oauth;
}

document.addEventListener('DOMContentLoaded', () => {
  $('f-grant').addEventListener('change', showOAuth);
  $('f-auth-method').addEventListener('change', showOAuth);
  showOAuth();
});
