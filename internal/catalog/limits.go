package catalog

import "fmt"

// Limits bound what one server may put in front of a model (R-CAT-4). A
// field that is zero or negative takes its default, so Limits{} is the same
// as DefaultLimits(); there is deliberately no "unlimited".
type Limits struct {
	// MaxDescription is the longest description kept, in runes; longer ones
	// are truncated with "…" and a warning. Default 8192: real servers'
	// tools describe themselves at length (2,781 characters seen), and a
	// description cut short misleads the model that reads it.
	MaxDescription int
	// MaxSchemaBytes is the largest input or output schema, as compact JSON.
	// Default 64 KiB.
	MaxSchemaBytes int
	// MaxSchemaDepth is the deepest nesting of subschemas (the root schema
	// is depth 1, each property, item or allOf/anyOf/oneOf branch one more).
	// Default 16.
	MaxSchemaDepth int
	// MaxSchemaProperties is the number of properties declared anywhere in
	// one schema, nested ones included. Default 256.
	MaxSchemaProperties int
	// MaxTools is the number of tools one server may contribute after
	// filtering. Exceeding it fails preparation. Default 500.
	MaxTools int
	// MaxCatalogBytes is the size of one server's entries rendered as MCP
	// tools. Exceeding it fails preparation. Default 4 MiB.
	MaxCatalogBytes int
}

// DefaultLimits returns the limits Plexus applies unless told otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxDescription:      8192,
		MaxSchemaBytes:      64 << 10,
		MaxSchemaDepth:      16,
		MaxSchemaProperties: 256,
		MaxTools:            500,
		MaxCatalogBytes:     4 << 20,
	}
}

// withDefaults fills in every unset field.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxDescription, d.MaxDescription)
	set(&l.MaxSchemaBytes, d.MaxSchemaBytes)
	set(&l.MaxSchemaDepth, d.MaxSchemaDepth)
	set(&l.MaxSchemaProperties, d.MaxSchemaProperties)
	set(&l.MaxTools, d.MaxTools)
	set(&l.MaxCatalogBytes, d.MaxCatalogBytes)
	return l
}

// LimitError reports a server whose catalog is too large to prepare. Unlike a
// single oversized tool, which is left out with a warning, this fails the
// whole server: silently dropping an arbitrary part of a huge catalog would
// leave the user guessing which tools are missing.
type LimitError struct {
	Server string
	// Limit names what was exceeded: "tools" or "bytes".
	Limit string
	Size  int
	Max   int
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "tools":
		return fmt.Sprintf("server %q offers %d tools, over the limit of %d; choose the ones to keep with enabledTools",
			e.Server, e.Size, e.Max)
	default:
		return fmt.Sprintf("server %q has a catalog of %d bytes, over the limit of %d bytes; choose the tools to keep with enabledTools",
			e.Server, e.Size, e.Max)
	}
}
