// Package catalog turns what one upstream MCP server offers — its tools,
// resources, resource templates and prompts — into the entries Plexus
// advertises to agents: named collision-free and stably (R-CAT-1, R-CAT-2),
// filtered by the server's enabledTools/disabledTools (R-CAT-3), cleaned of
// invisible text (R-CAT-7) and bounded in size (R-CAT-4), and rendered for
// MCP, OpenAI or Anthropic tool lists (R-CAT-5).
//
// Everything an upstream server says is untrusted data. This package copies,
// cleans, measures and truncates it, and never interprets it: a description
// that reads like an instruction is still just a string.
//
// The package is pure: no I/O, no goroutines, no global state. It imports the
// MCP SDK only for its protocol types.
package catalog
