// Package teamauth makes the MCP face an OAuth 2.1 protected resource in
// team mode (R-TEAM-2), as the MCP authorization specification asks of an
// HTTP server: it publishes RFC 9728 protected resource metadata naming the
// team's authorization servers, answers a request without a usable token
// with 401 and a WWW-Authenticate challenge that points at that metadata,
// and takes JWT access tokens only when they are signed by a key of a
// configured issuer (read from the jwks_uri of the issuer's metadata,
// cached, read again on an unknown key id at a bounded rate), issued by
// that issuer, bound to this resource by their audience (RFC 8707), within
// their lifetime, and carrying the required scopes (403 insufficient_scope
// otherwise). The algorithm must fit the key: none and HMAC are never
// accepted.
//
// A request that passes goes on with its caller (package caller) in its
// context, where the face's profile gates and the host's call log read it;
// the token itself goes no further.
package teamauth
