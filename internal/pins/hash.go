package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

// The hash inputs below are a compatibility promise like the tool names of
// catalog: changing what goes into Trust.Key or Definition.Hash, or how it is
// encoded, makes every server need approval again and holds every tool back
// after an upgrade. The golden values in hash_test.go guard them.
const (
	trustDomain = "plexus-trust-v1\n"
	toolDomain  = "plexus-tool-v1\n"
	hashPrefix  = "sha256:"
)

// Trust is what trust in a server is bound to (R-CAT-6): what runs, where,
// and where its secrets go. It is keyed by content, never by the server's
// name, so that swapping the command under a trusted name ("MCPoison",
// CVE-2025-54136) needs approval again. It holds names, references and
// templates, never a resolved value.
//
// Settings that change neither the code that runs nor where a secret is sent
// (timeouts, tool filters, enabled) are left out: changing them needs no
// approval.
type Trust struct {
	Type    string   `json:"type"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	// Env maps each variable the server gets to the variable its value is
	// read from: pointing DOCS_TOKEN at GITHUB_TOKEN hands the server
	// another secret. A plain value is kept as "value:TEXT".
	Env map[string]string `json:"env,omitempty"`
	// URL is as configured, with its placeholders.
	URL string `json:"url,omitempty"`
	// Headers maps each header to "env:VAR" or "text:TEMPLATE".
	Headers           map[string]string `json:"headers,omitempty"`
	BearerTokenEnvVar string            `json:"bearerTokenEnvVar,omitempty"`
	OAuth             *OAuthTrust       `json:"oauth,omitempty"`
}

// OAuthTrust is the part of a server's manual OAuth settings that decides
// where its authorization goes.
type OAuthTrust struct {
	ClientID        string   `json:"clientId,omitempty"`
	ClientSecretEnv string   `json:"clientSecretEnv,omitempty"`
	AuthURL         string   `json:"authUrl,omitempty"`
	TokenURL        string   `json:"tokenUrl,omitempty"`
	Scopes          []string `json:"scopes,omitempty"`
}

// TrustOf returns the Trust of a server's configuration. It copies field by
// field rather than hashing config.Server whole, so that a setting added to
// the configuration later does not change every key.
func TrustOf(sc config.Server) Trust {
	t := Trust{
		Type:              sc.Type,
		Command:           sc.Command,
		Args:              slices.Clone(sc.Args),
		Cwd:               sc.Cwd,
		URL:               sc.URL,
		BearerTokenEnvVar: sc.BearerTokenEnvVar,
	}
	if len(sc.Env) > 0 {
		t.Env = make(map[string]string, len(sc.Env))
		for k, ref := range sc.Env {
			t.Env[k] = ref.Env
			if ref.Value != nil {
				// A plain value is part of what the server runs with.
				t.Env[k] = "value:" + *ref.Value
			}
		}
	}
	if len(sc.Headers) > 0 {
		t.Headers = make(map[string]string, len(sc.Headers))
		for k, v := range sc.Headers {
			if v.Env != "" {
				t.Headers[k] = "env:" + v.Env
			} else {
				t.Headers[k] = "text:" + v.Text
			}
		}
	}
	if o := sc.OAuth; o != nil {
		t.OAuth = &OAuthTrust{ClientID: o.ClientID, AuthURL: o.AuthURL, TokenURL: o.TokenURL, Scopes: slices.Clone(o.Scopes)}
		if o.ClientSecret != nil {
			t.OAuth.ClientSecretEnv = o.ClientSecret.Env
		}
	}
	return t
}

// Key returns the trust key: "sha256:" and the hex SHA-256 of t's canonical
// JSON (struct fields in order, map keys sorted, empty fields left out).
func (t Trust) Key() string {
	b, err := json.Marshal(t)
	if err != nil {
		// Strings, string slices and string maps always encode.
		panic(fmt.Sprintf("pins: encoding a trust definition: %v", err))
	}
	return digest(trustDomain, b)
}

// changes names the parts of t that differ from approved, for people.
func (t Trust) changes(approved Trust) []string {
	var out []string
	add := func(changed bool, what string) {
		if changed {
			out = append(out, what)
		}
	}
	add(t.Type != approved.Type, "type")
	add(t.Command != approved.Command, "command")
	add(!slices.Equal(t.Args, approved.Args), "args")
	add(t.Cwd != approved.Cwd, "working directory")
	add(!maps.Equal(t.Env, approved.Env), "environment")
	add(t.URL != approved.URL, "URL")
	add(!maps.Equal(t.Headers, approved.Headers) || t.BearerTokenEnvVar != approved.BearerTokenEnvVar, "headers")
	add(!oauthEqual(t.OAuth, approved.OAuth), "OAuth settings")
	return out
}

func oauthEqual(a, b *OAuthTrust) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ClientID == b.ClientID && a.ClientSecretEnv == b.ClientSecretEnv && a.AuthURL == b.AuthURL &&
		a.TokenURL == b.TokenURL && slices.Equal(a.Scopes, b.Scopes)
}

// Definition is a tool's definition as it reaches models: already cleaned
// of invisible characters and HTML comments by catalog.Clean (R-CAT-7) and
// bounded by catalog.Build (R-CAT-4), so that what is pinned is exactly what
// a model would read. The schemas and annotations are canonical JSON.
//
// Annotations are part of it although clients are told not to trust them:
// some decide from readOnlyHint whether to ask before a call, so a tool that
// starts calling itself read-only has changed (docs/security.md T30).
type Definition struct {
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Extra is what else of the tool's definition reaches clients, which
	// Plexus passes on as the server wrote it (catalog.Entry.Raw): every
	// member the fields above do not hold — _meta (an MCP Apps view, say),
	// execution, icons — and annotations the SDK's struct does not model,
	// as one canonical JSON object; {} when there are none. Nil in a pin
	// made before Plexus passed definitions on: such a pin is brought up
	// to date on first sight (decideLocked), not held back.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// DefinitionOf returns the definition of a catalog entry, with its JSON made
// canonical. Entries hold JSON that catalog produced, so this cannot fail;
// JSON that is not valid is kept as it is, and still hashes by its bytes.
func DefinitionOf(e catalog.Entry) Definition {
	d := Definition{Title: e.Title, Description: e.Description}
	d.InputSchema = canonicalOrRaw(e.InputSchema)
	d.OutputSchema = canonicalOrRaw(e.OutputSchema)
	d.Annotations = canonicalOrRaw(e.Annotations)
	d.Extra = extraOf(e.Raw)
	return d
}

// modelled are the members of a tool's definition that Definition holds
// in fields of its own, and of its annotations those of the SDK's struct
// (catalog's prepareAnnotations).
var (
	modelled            = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
	modelledAnnotations = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
)

// noExtra is the Extra of a definition that has nothing else.
var noExtra = json.RawMessage(`{}`)

// extraOf is Definition.Extra of a tool passed on as raw: raw less what
// the other fields hold.
func extraOf(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return noExtra
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return canonicalOrRaw(raw) // not an object: it all counts
	}
	var ann map[string]json.RawMessage
	if a, ok := members["annotations"]; ok && json.Unmarshal(a, &ann) == nil {
		for _, k := range modelledAnnotations {
			delete(ann, k)
		}
	}
	for _, k := range modelled {
		delete(members, k)
	}
	if len(ann) > 0 {
		b, _ := json.Marshal(ann)
		members["annotations"] = b
	}
	if len(members) == 0 {
		return noExtra
	}
	b, err := json.Marshal(members)
	if err != nil {
		return canonicalOrRaw(raw)
	}
	return canonicalOrRaw(b)
}

func canonicalOrRaw(raw json.RawMessage) json.RawMessage {
	c, err := canonical(raw)
	switch {
	case err != nil:
		return bytes.Clone(raw)
	case bytes.Equal(c, raw):
		// Catalog's schemas are canonical already: the pin shares the
		// entry's bytes (neither is ever changed) rather than a copy.
		return raw
	}
	return c
}

// Hash returns the pin of the tool named tool with definition d: "sha256:"
// and the hex SHA-256 of its canonical JSON, name included.
//
// A definition with nothing Extra hashes as it did before Extra was
// pinned, so that those pins still match.
func (d Definition) Hash(tool string) string {
	if bytes.Equal(d.Extra, noExtra) {
		d.Extra = nil
	}
	b, err := json.Marshal(struct {
		Name string `json:"name"`
		Definition
	}{tool, d})
	if err != nil {
		// d's JSON fields are canonical, or were refused by Decode.
		panic(fmt.Sprintf("pins: encoding the definition of %q: %v", tool, err))
	}
	return digest(toolDomain, b)
}

// changes names the fields of d that differ from old, in the words of the
// API: title, description, inputSchema, outputSchema, annotations.
func (d Definition) changes(old Definition) []string {
	var out []string
	add := func(changed bool, what string) {
		if changed {
			out = append(out, what)
		}
	}
	add(d.Title != old.Title, FieldTitle)
	add(d.Description != old.Description, FieldDescription)
	add(!bytes.Equal(d.InputSchema, old.InputSchema), FieldInputSchema)
	add(!bytes.Equal(d.OutputSchema, old.OutputSchema), FieldOutputSchema)
	add(!bytes.Equal(d.Annotations, old.Annotations), FieldAnnotations)
	add(old.Extra != nil && !bytes.Equal(d.Extra, old.Extra), FieldExtra)
	return out
}

// Fields of a Definition, as Held.Changed names them.
const (
	FieldTitle        = "title"
	FieldDescription  = "description"
	FieldInputSchema  = "inputSchema"
	FieldOutputSchema = "outputSchema"
	FieldAnnotations  = "annotations"
	// FieldExtra is the rest of the definition: _meta, execution, icons…
	FieldExtra = "extra"
)

func digest(domain string, b []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write(b)
	return hashPrefix + hex.EncodeToString(h.Sum(nil))
}

// canonical re-encodes JSON with object keys sorted, no insignificant white
// space, numbers exactly as written and no HTML escaping; empty and null
// become nil.
func canonical(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	if v == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// A copy of its length: the buffer has grown past it, and pins are kept.
	return json.RawMessage(bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n"))), nil
}
