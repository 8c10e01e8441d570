// A certified OpenID provider (oidc-provider, npm, panva) for Plexus's
// OAuth end-to-end tests, on 127.0.0.1 only, in one of four
// configurations. Each keeps oidc-provider's defaults but for what an MCP
// authorization server needs (dynamic client registration, resource
// indicators so that tokens name the MCP server they are for, revocation
// and introspection for the resource servers) and what the configuration
// is about:
//
//   defaults    oidc-provider's own: DPoP offered (dPoP is on by
//               default), refresh tokens only for offline_access asked
//               with prompt=consent by a client registered for the
//               refresh_token grant, rotation only near a refresh token's
//               end, the developer login and consent pages a person fills in.
//   consent     a consent asked at every login, never taken from an
//               earlier grant, and a refresh token only where offline
//               access was consented to.
//   rotation    every refresh rotates the refresh token; a second use of
//               a spent one is taken for a replay and revokes the grant.
//   revocation  opaque access tokens the resource servers introspect at
//               every request, so that a revocation holds at once.
//
// Access tokens are JWTs the resource servers check against the
// provider's keys, except in revocation (opaque, introspected).
//
//   node provider.mjs CONFIG PORT RESOURCE[,RESOURCE…] ACCESS_TTL_SECONDS RS_SECRET [CIMD]
//
// RS_SECRET is the secret of the resource servers' own client "rs", with
// which they introspect. CIMD "cimd" turns on client ID metadata
// documents (fetched over https; NODE_EXTRA_CA_CERTS names the test's CA).
// Prints "ready ISSUER" on stdout once it listens.
import http from 'node:http';
import Provider from 'oidc-provider';

const [config, port, resourceList, ttl, rsSecret, cimd] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const accessTTL = Number(ttl);
const resources = resourceList.split(',');
const opaque = config === 'revocation';

const configuration = {
  clients: [{
    client_id: 'rs',
    client_secret: rsSecret,
    grant_types: [],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  ttl: {
    AccessToken: accessTTL,
    // The defaults' other lifetimes, but the session's and the grant's long
    // enough for the test.
    RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600,
  },
  features: {
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resources[0],
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (!resources.includes(indicator)) throw new Error('unknown resource');
        return {
          scope: 'read',
          audience: indicator,
          accessTokenTTL: accessTTL,
          accessTokenFormat: opaque ? 'opaque' : 'jwt',
          ...(opaque ? {} : { jwt: { sign: { alg: 'RS256' } } }),
        };
      },
    },
  },
};

if (cimd === 'cimd') {
  configuration.features.clientIdMetadataDocument = {
    enabled: true,
    ack: 'draft-02',
    // The document is on 127.0.0.1: the test's own https server.
    allowFetch: async () => true,
  };
  // oidc-provider refuses to fetch from special-use addresses, loopback
  // among them; the test's document server is on loopback.
  configuration.fetch = (url, options) => {
    delete options.dispatcher;
    return globalThis.fetch(url, options);
  };
}

switch (config) {
  case 'defaults':
  case 'revocation':
    break;
  case 'consent':
    // Never reuse an earlier grant: every login shows the consent page;
    // only the consent given in this login's interaction counts.
    configuration.loadExistingGrant = async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    };
    break;
  case 'rotation':
    configuration.rotateRefreshToken = true;
    break;
  default:
    console.error(`unknown configuration ${config}`);
    process.exit(2);
}

const provider = new Provider(issuer, configuration);
provider.on('server_error', (ctx, err) => console.error('server_error', err));
provider.on('grant.revoked', (ctx, grantId) => console.error('grant revoked', grantId));

http.createServer(provider.callback()).listen(Number(port), '127.0.0.1', () => console.log(`ready ${issuer}`));
