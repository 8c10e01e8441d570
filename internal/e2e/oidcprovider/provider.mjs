// A certified OpenID provider (oidc-provider) for Plexus's OAuth end-to-end
// test, on 127.0.0.1 only. Configured as the MCP authorization spec asks of
// an authorization server: dynamic client registration, PKCE S256, resource
// indicators (RFC 8707, JWT access tokens for the MCP server's audience),
// refresh token rotation, DPoP (RFC 9449, with nonces), client credentials
// and revocation. The person's login and consent are approved at once (the
// /interaction route), as a person who says yes would.
//
//   node provider.mjs PORT MCP_RESOURCE M2M_CLIENT_SECRET ACCESS_TTL_SECONDS
//
// Prints "ready ISSUER" on stdout once it listens.
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

const [port, resource, m2mSecret, ttl] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const accessTTL = Number(ttl);

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'plexus-m2m',
    client_secret: m2mSecret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  scopes: ['openid', 'offline_access', 'read'],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (ctx, client, code) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: accessTTL, ClientCredentials: accessTTL, RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600 },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    revocation: { enabled: true },
    dPoP: { enabled: true, nonceSecret: crypto.randomBytes(32) },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new Error('unknown resource');
        return { scope: 'read', audience: resource, accessTokenTTL: accessTTL, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

// approve logs the person in as alice and grants what the client asked.
async function approve(req, res) {
  const details = await provider.interactionDetails(req, res);
  let result;
  if (details.prompt.name === 'login') {
    result = { login: { accountId: 'alice' } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    const d = details.prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    for (const [ind, scopes] of Object.entries(d.missingResourceScopes ?? {})) grant.addResourceScope(ind, scopes.join(' '));
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const handle = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    approve(req, res).catch((err) => {
      console.error('interaction', err);
      res.statusCode = 500;
      res.end('interaction failed');
    });
    return;
  }
  handle(req, res);
});
server.listen(Number(port), '127.0.0.1', () => console.log(`ready ${issuer}`));
