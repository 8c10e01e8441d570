// Package oauth is Plexus's OAuth 2.1 client for remote MCP servers
// (R-AUTH-1..4): discovery of the authorization server (RFC 9728
// protected-resource metadata, then RFC 8414 / OpenID discovery, with the
// 2025-03-26 fallbacks), the client identity (pre-registered, client ID
// metadata document, dynamic registration per RFC 7591), the authorization
// code flow with PKCE S256, state, the RFC 8707 resource parameter and the
// RFC 9207 iss check, and the tokens: stored 0600 in oauth.json, refreshed
// before they expire, one refresh at a time per server.
//
// It builds on the official Go SDK's oauthex and auth packages for fetching
// and checking metadata and for registration; the flow itself is done here,
// because the daemon splits it in two (a person opens the URL, the redirect
// arrives later on a loopback listener or is pasted back) and must persist
// the registration and the tokens itself.
//
// Nothing in this package puts a token or a client secret into an error,
// a log line or a [Status].
package oauth
