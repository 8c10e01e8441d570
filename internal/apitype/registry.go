package apitype

import (
	"encoding/json"
	"time"
)

// RegistrySettings is the MCP registry the daemon searches
// (mcp.registry in extensions.json).
type RegistrySettings struct {
	// URL is the registry's base URL. In an answer it is the one in use
	// (the official registry's when none is set); in a PUT, "" or the
	// official one's restores the default.
	URL string `json:"url"`
}

// RegistrySource says where a registry answer came from and how old it is.
type RegistrySource struct {
	// Registry is the registry's base URL.
	Registry string `json:"registry"`
	// FetchedAt is when the registry sent the answer; AgeMs how long ago.
	FetchedAt time.Time `json:"fetchedAt"`
	AgeMs     int64     `json:"ageMs"`
	// Cached: the answer was read from the daemon's cache rather than
	// asked for now.
	Cached bool `json:"cached,omitempty"`
	// Offline: the registry could not be asked (Reason says why) and the
	// cached answer is shown instead.
	Offline bool   `json:"offline,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// RegistryServer is one server of a registry, as people see it.
type RegistryServer struct {
	// Name is its registry name (io.github.github/github-mcp-server).
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	Version     string `json:"version"`
	// Status is active, deprecated or deleted, StatusMessage why.
	Status        string     `json:"status,omitempty"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	WebsiteURL    string     `json:"websiteUrl,omitempty"`
	Repository    string     `json:"repository,omitempty"`
	PublishedAt   *time.Time `json:"publishedAt,omitempty"`
	UpdatedAt     *time.Time `json:"updatedAt,omitempty"`
	IsLatest      bool       `json:"isLatest,omitempty"`
	// Options are the ways to run it, and whether Plexus can.
	Options []RegistryOption `json:"options"`
	// ServerJSON is the server.json as the registry sent it (in
	// RegistryShow only).
	ServerJSON json.RawMessage `json:"serverJson,omitempty"`
}

// RegistryOption is one way to run a registry server: a package (npm,
// pypi, nuget, oci, mcpb…) or a remote.
type RegistryOption struct {
	// Index counts from 1 (RegistryPlanRequest.Option).
	Index     int    `json:"index"`
	Kind      string `json:"kind"`
	Label     string `json:"label"`
	Transport string `json:"transport"`
	Runnable  bool   `json:"runnable"`
	// Reason says why Plexus cannot run it.
	Reason string `json:"reason,omitempty"`
}

// RegistryList is GET /v1/registry/servers?search=TEXT&cursor=C&limit=N:
// one page of the registry's servers, the latest version of each.
type RegistryList struct {
	Servers []RegistryServer `json:"servers"`
	// NextCursor asks for the next page; "" on the last.
	NextCursor string `json:"nextCursor,omitempty"`
	// Skipped counts entries of the registry's answer that were not
	// valid and are left out.
	Skipped int            `json:"skipped,omitempty"`
	Source  RegistrySource `json:"source"`
}

// RegistryShow is GET /v1/registry/servers/{name}?version=V: one version
// of a server (the latest by default) and the versions there are.
type RegistryShow struct {
	Server RegistryServer `json:"server"`
	// Versions lists its versions, newest first; empty if the registry
	// could not say.
	Versions []string       `json:"versions,omitempty"`
	Source   RegistrySource `json:"source"`
}

// RegistryPlanRequest is POST /v1/registry/plan: what adding a registry
// server would save. Nothing is saved: the plan's Config goes to POST
// /v1/servers like any added server's, with its secrets.
type RegistryPlanRequest struct {
	// Name is the registry name; Version "" is the latest.
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Server is the Plexus name to add it under; "" suggests one.
	Server string `json:"server,omitempty"`
	// Option picks RegistryOption.Index; 0 is the first Plexus can run.
	Option int `json:"option,omitempty"`
	// Values are the inputs given, by RegistryField.Key (or its part
	// after the colon): several for a repeated argument. Never secrets.
	Values map[string][]string `json:"values,omitempty"`
	// Secrets are the keys of optional secret inputs the person gives
	// with the save; the configuration refers to them (a required secret,
	// or one stored already, always is).
	Secrets []string `json:"secrets,omitempty"`
}

// RegistryPlan answers RegistryPlanRequest.
type RegistryPlan struct {
	// Name and Version are the registry server's.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Server is the Plexus name; NameTaken is set when a server has it
	// already (the add would be refused).
	Server    string           `json:"server"`
	NameTaken bool             `json:"nameTaken,omitempty"`
	Option    RegistryOption   `json:"option"`
	Options   []RegistryOption `json:"options"`
	// Config is the server's settings as they would be saved (as in
	// extensions.json): secrets by name, never values.
	Config json.RawMessage `json:"config"`
	// Fields are the inputs a person may give, in the server.json's order.
	Fields []RegistryField `json:"fields"`
	// Missing are the keys of required inputs without a value: the add
	// cannot start the server until they are given.
	Missing []string `json:"missing"`
	// Notes say what was chosen or left out (an optional input, a secret
	// argument, an unpinned version, a deprecation).
	Notes  []string       `json:"notes"`
	Status string         `json:"status,omitempty"`
	Source RegistrySource `json:"source"`
}

// RegistryField is one input of a registry server: an environment
// variable, a header, an argument or a variable of a fixed value.
type RegistryField struct {
	// Key is env:NAME, header:NAME, arg:HINT, arg:--flag or var:NAME.
	Key         string   `json:"key"`
	Label       string   `json:"label"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Secret      bool     `json:"secret,omitempty"`
	Repeated    bool     `json:"repeated,omitempty"`
	Format      string   `json:"format,omitempty"`
	Default     string   `json:"default,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	// Value is what the plan uses (given, or a required one's default);
	// never set for a secret.
	Value []string `json:"value,omitempty"`
	// Var is the managed variable a secret is kept in; Stored says it
	// holds a value already (a blank input keeps it).
	Var    string `json:"var,omitempty"`
	Stored bool   `json:"stored,omitempty"`
	// Omitted says why a secret argument is left out.
	Omitted string `json:"omitted,omitempty"`
}
