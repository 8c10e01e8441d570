// Package catalog turns what one upstream MCP server offers — its tools,
// resources, resource templates and prompts — into the entries Plexus
// advertises to agents: named collision-free and stably (R-CAT-1, R-CAT-2),
// filtered by the server's enabledTools/disabledTools (R-CAT-3), cleaned of
// invisible text (R-CAT-7) and bounded in size (R-CAT-4), and rendered for
// MCP, OpenAI or Anthropic tool lists (R-CAT-5).
//
// A definition is kept as the bytes the server wrote (Lists, Entry.Raw,
// Resource.Raw…), beside the few members Plexus reads: what Plexus does
// not know of it — a tool's _meta, the tasks extension's execution, an
// annotation of a newer spec — is passed on, not lost in a struct. Plexus
// changes those bytes only where it must: text that hides something
// (WireText) or is over a limit, and, in a profile that gathers several
// servers, the names (WithName) and MCP Apps views (UIURI) its naming
// needs; every other byte stays the server's (WithMember).
//
// Everything an upstream server says is untrusted data. This package copies,
// cleans, measures and truncates it, and never interprets it: a description
// that reads like an instruction is still just a string.
//
// The package is pure: no I/O, no goroutines, no global state. It imports the
// MCP SDK only for its protocol types.
package catalog
