// Two MCP servers on the official TypeScript SDK (@modelcontextprotocol/sdk),
// protected by tokens of oidc-provider, on one port of 127.0.0.1:
//
//   /bearer/mcp  takes bearer tokens only, as the SDK's requireBearerAuth
//                does: its RFC 9728 metadata (the SDK's own router) says
//                nothing of DPoP, and it refuses the DPoP scheme and a
//                DPoP-bound token with a Bearer challenge.
//   /dpop/mcp    requires DPoP-bound tokens (RFC 9449): its metadata says
//                dpop_bound_access_tokens_required, its challenge is
//                DPoP algs="ES256", and every request needs a fresh proof
//                of the token's key (htm, htu, iat, ath, jti once).
//
// Tokens are JWTs checked against the provider's keys, or (MODE
// "introspect") opaque ones introspected at the provider at every request,
// so that a revocation holds at once. Each server has two tools: whoami
// (the account the token names) and echo.
//
//   node rs.mjs PORT ISSUER RS_SECRET MODE
//
// Prints "ready" once it listens. GET /stats answers what each server
// took: the schemes, the accounts, how many requests came with an expired
// token (the daemon must refresh before a token expires) and how many
// were refused.
import crypto from 'node:crypto';
import express from 'express';
import * as jose from 'jose';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const [port, issuer, rsSecret, mode] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
const bearerURL = new URL(`${base}/bearer/mcp`);
const dpopURL = new URL(`${base}/dpop/mcp`);
const asMeta = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
const jwks = jose.createRemoteJWKSet(new URL(asMeta.jwks_uri));

const stats = {};
for (const kind of ['bearer', 'dpop']) stats[kind] = { schemes: {}, accounts: {}, expired: 0, refused: 0, calls: 0 };

// claims checks an access token and returns what it says: the account, the
// audience, the expiry, the scopes and the DPoP key it is bound to.
async function claims(token) {
  if (mode === 'introspect') {
    const resp = await fetch(asMeta.introspection_endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: 'Basic ' + Buffer.from(`rs:${rsSecret}`).toString('base64'),
      },
      body: new URLSearchParams({ token }),
    });
    const c = await resp.json();
    if (!c.active) throw new InvalidTokenError('the token is not active (revoked or expired)');
    return { sub: c.sub, aud: c.aud, exp: c.exp, scope: c.scope, client: c.client_id, jkt: c.cnf?.jkt };
  }
  let payload;
  try {
    ({ payload } = await jose.jwtVerify(token, jwks, { issuer, clockTolerance: 0 }));
  } catch (err) {
    if (err.code === 'ERR_JWT_EXPIRED') throw Object.assign(new InvalidTokenError('the token has expired'), { expired: true });
    throw new InvalidTokenError('the token does not verify');
  }
  return { sub: payload.sub, aud: payload.aud, exp: payload.exp, scope: payload.scope, client: payload.client_id, jkt: payload.cnf?.jkt };
}

function audienceOf(c, url) {
  const aud = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (!aud.includes(url.href)) throw new InvalidTokenError('the token is for another resource');
}

function note(kind, scheme, sub) {
  const s = stats[kind];
  s.schemes[scheme] = (s.schemes[scheme] ?? 0) + 1;
  s.accounts[sub] = (s.accounts[sub] ?? 0) + 1;
}

// The bearer-only server's verifier, for the SDK's requireBearerAuth.
const bearerVerifier = {
  async verifyAccessToken(token) {
    let c;
    try {
      c = await claims(token);
    } catch (err) {
      stats.bearer.refused++;
      if (err.expired) stats.bearer.expired++;
      throw err;
    }
    audienceOf(c, bearerURL);
    if (c.jkt) {
      stats.bearer.refused++;
      throw new InvalidTokenError('a DPoP-bound token: this server takes bearer tokens only');
    }
    note('bearer', 'Bearer', c.sub);
    return { token, clientId: c.client, scopes: (c.scope ?? '').split(' ').filter(Boolean), expiresAt: c.exp, resource: bearerURL, extra: { sub: c.sub } };
  },
};

const seenJTI = new Map(); // jti → when it may be forgotten

// dpopAuth requires a DPoP-bound token in the DPoP scheme, with a proof of
// its key for this request (RFC 9449 §4.3, §7).
async function dpopAuth(req, res, next) {
  const prm = getOAuthProtectedResourceMetadataUrl(dpopURL);
  const refuse = (error, description) => {
    stats.dpop.refused++;
    let ch = 'DPoP algs="ES256"';
    if (error) ch += `, error="${error}", error_description="${description}"`;
    res.set('WWW-Authenticate', `${ch}, resource_metadata="${prm}"`).status(401).json({ error: error ?? 'unauthorized' });
  };
  const h = req.headers.authorization;
  if (!h) return refuse();
  const [scheme, token] = h.split(' ');
  if (scheme !== 'DPoP' || !token) return refuse('invalid_token', 'the DPoP scheme is required');
  const proof = req.headers.dpop;
  if (typeof proof !== 'string' || proof.includes(',')) return refuse('invalid_dpop_proof', 'one DPoP proof is required');
  let c;
  try {
    c = await claims(token);
    audienceOf(c, dpopURL);
  } catch (err) {
    if (err.expired) stats.dpop.expired++;
    return refuse('invalid_token', err.message);
  }
  if (!c.jkt) return refuse('invalid_token', 'the token is not DPoP-bound');
  try {
    const { payload, protectedHeader } = await jose.jwtVerify(proof, jose.EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256'] });
    const now = Math.floor(Date.now() / 1000);
    const ath = crypto.createHash('sha256').update(token).digest('base64url');
    if (payload.htm !== req.method || payload.htu !== dpopURL.href || Math.abs(now - payload.iat) > 60 || payload.ath !== ath) {
      return refuse('invalid_dpop_proof', 'the proof is not for this request');
    }
    if (!payload.jti || seenJTI.has(payload.jti)) return refuse('invalid_dpop_proof', 'a proof used twice');
    seenJTI.set(payload.jti, now + 120);
    for (const [jti, until] of seenJTI) if (until < now) seenJTI.delete(jti);
    if (await jose.calculateJwkThumbprint(protectedHeader.jwk) !== c.jkt) return refuse('invalid_dpop_proof', 'the proof is not by the token\'s key');
  } catch {
    return refuse('invalid_dpop_proof', 'the proof does not verify');
  }
  note('dpop', 'DPoP', c.sub);
  req.auth = { token, clientId: c.client, scopes: (c.scope ?? '').split(' ').filter(Boolean), expiresAt: c.exp, resource: dpopURL, extra: { sub: c.sub } };
  next();
}

// mcp serves one stateless request with a fresh server.
function mcp(kind) {
  return async (req, res) => {
    const server = new McpServer({ name: `oidc-${kind}`, version: '1.0.0' });
    server.registerTool('whoami', { description: 'the account the token names' }, async (extra) => {
      stats[kind].calls++;
      return { content: [{ type: 'text', text: `account ${extra.authInfo?.extra?.sub}` }] };
    });
    server.registerTool('echo', { description: 'echoes text', inputSchema: { text: z.string() } }, async ({ text }) => {
      stats[kind].calls++;
      return { content: [{ type: 'text', text }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}

const notAllowed = (req, res) => res.status(405).set('Allow', 'POST').end();

const app = express();
app.use(mcpAuthMetadataRouter({ oauthMetadata: asMeta, resourceServerUrl: bearerURL, scopesSupported: ['read'], resourceName: 'bearer only' }));
app.get('/.well-known/oauth-protected-resource/dpop/mcp', (req, res) => res.json({
  resource: dpopURL.href,
  authorization_servers: [issuer],
  scopes_supported: ['read'],
  resource_name: 'DPoP required',
  dpop_signing_alg_values_supported: ['ES256'],
  dpop_bound_access_tokens_required: true,
}));
app.post('/bearer/mcp', express.json(), requireBearerAuth({
  verifier: bearerVerifier,
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(bearerURL),
  expectedResource: bearerURL,
}), mcp('bearer'));
app.post('/dpop/mcp', express.json(), dpopAuth, mcp('dpop'));
app.get('/bearer/mcp', notAllowed);
app.get('/dpop/mcp', notAllowed);
app.delete('/bearer/mcp', notAllowed);
app.delete('/dpop/mcp', notAllowed);
app.get('/stats', (req, res) => res.json(stats));
app.listen(Number(port), '127.0.0.1', () => console.log('ready'));
