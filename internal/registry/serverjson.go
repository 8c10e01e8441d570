package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Server is a server.json document (the registry's ServerDetail): what a
// server is and the ways it can be run — packages to run on this machine,
// or remotes to connect to. Fields Plexus does not use are not decoded; the
// document itself is kept as the registry sent it (Entry.Raw).
type Server struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run the server on this machine.
type Package struct {
	// RegistryType is npm, pypi, nuget, oci, mcpb (or another).
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl,omitempty"`
	Identifier      string `json:"identifier"`
	Version         string `json:"version,omitempty"`
	FileSHA256      string `json:"fileSha256,omitempty"`
	RuntimeHint     string `json:"runtimeHint,omitempty"`
	// Transport is how the running package speaks MCP: stdio, or HTTP on
	// a port of its own.
	Transport            Transport  `json:"transport"`
	RuntimeArguments     []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValue `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport, or a remote: type stdio,
// streamable-http or sse; a URL template ({name} variables), headers.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValue       `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value a person may have to give: a fixed Value (with {name}
// variables), or one asked for, with a default, choices, and whether it is
// required or secret.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"`
	Value       string   `json:"value,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// Argument is a command-line argument: positional (a value) or named (a
// flag and its value).
type Argument struct {
	Input
	Type       string           `json:"type"`
	Name       string           `json:"name,omitempty"`
	ValueHint  string           `json:"valueHint,omitempty"`
	IsRepeated bool             `json:"isRepeated,omitempty"`
	Variables  map[string]Input `json:"variables,omitempty"`
}

// KeyValue is an environment variable or a header.
type KeyValue struct {
	Input
	Name      string           `json:"name"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Entry is one server of a registry's answer: the document, the
// registry's own facts about it, and the document's bytes as sent.
type Entry struct {
	Server Server
	// Status is active, deprecated or deleted ("" when the registry says
	// nothing); StatusMessage why.
	Status        string
	StatusMessage string
	PublishedAt   time.Time
	UpdatedAt     time.Time
	IsLatest      bool
	// Raw is the server.json as the registry sent it.
	Raw json.RawMessage
}

// wireEntry is a ServerResponse on the wire; the registry's own facts
// about an entry are under its key io.modelcontextprotocol.registry/official
// in _meta.
type wireEntry struct {
	Server json.RawMessage `json:"server"`
	Meta   struct {
		Official *struct {
			Status        string    `json:"status"`
			StatusMessage string    `json:"statusMessage"`
			PublishedAt   time.Time `json:"publishedAt"`
			UpdatedAt     time.Time `json:"updatedAt"`
			IsLatest      bool      `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

// wireList is a ServerList on the wire.
type wireList struct {
	Servers  []json.RawMessage `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

// Bounds on what one answer may hold: far above real entries (the
// largest of the official registry's 2,354 entries of January 2026 has 47
// environment variables), low enough that a hostile registry cannot make
// the daemon or a page hold much.
const (
	maxListEntries = 200
	maxOptions     = 32
	maxInputs      = 128
	maxChoices     = 64
	maxVariables   = 32
	maxTextLen     = 2048
	maxCursorLen   = 1024
)

// nameRe is the registry's rule for a server's name: reverse-DNS
// namespace, one slash, the server's own name.
var nameRe = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// ValidName reports whether s can name a registry server.
func ValidName(s string) bool { return len(s) >= 3 && len(s) <= 200 && nameRe.MatchString(s) }

// validVersion is what Plexus accepts as a version in a path or on a
// command line: no spaces, slashes or leading dash.
var versionRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_~-]{0,127}$`)

// ValidVersion reports whether s can name a version of a registry server.
func ValidVersion(s string) bool { return versionRe.MatchString(s) }

// DecodeEntry decodes and checks one ServerResponse.
func DecodeEntry(b []byte) (Entry, error) {
	var w wireEntry
	if err := json.Unmarshal(b, &w); err != nil {
		return Entry{}, describeJSON(err)
	}
	return entryOf(w)
}

func entryOf(w wireEntry) (Entry, error) {
	if len(w.Server) == 0 || string(w.Server) == "null" {
		return Entry{}, errors.New("an entry has no server")
	}
	var e Entry
	if err := json.Unmarshal(w.Server, &e.Server); err != nil {
		return Entry{}, describeJSON(err)
	}
	if err := e.Server.check(); err != nil {
		return Entry{}, err
	}
	e.Raw = w.Server
	if o := w.Meta.Official; o != nil {
		e.Status, e.StatusMessage = clean(o.Status, 20), clean(o.StatusMessage, 500)
		e.PublishedAt, e.UpdatedAt, e.IsLatest = o.PublishedAt, o.UpdatedAt, o.IsLatest
	}
	return e, nil
}

// Page is one page of a server list.
type Page struct {
	Entries    []Entry
	NextCursor string
	// Skipped counts entries left out because they are not valid.
	Skipped int
}

// DecodePage decodes and checks a ServerList. An entry that is not valid
// is left out and counted; an answer that is not a server list is an error.
func DecodePage(b []byte) (Page, error) {
	var w wireList
	if err := json.Unmarshal(b, &w); err != nil {
		return Page{}, describeJSON(err)
	}
	if w.Servers == nil {
		return Page{}, errors.New(`it has no "servers" list`)
	}
	if len(w.Servers) > maxListEntries {
		return Page{}, fmt.Errorf("it lists %d servers in one page, more than the %d a page may hold", len(w.Servers), maxListEntries)
	}
	if len(w.Metadata.NextCursor) > maxCursorLen || strings.ContainsFunc(w.Metadata.NextCursor, unicode.IsControl) {
		return Page{}, errors.New("its next cursor is not a short line of text")
	}
	p := Page{NextCursor: w.Metadata.NextCursor}
	for _, raw := range w.Servers {
		var we wireEntry
		if json.Unmarshal(raw, &we) != nil {
			p.Skipped++
			continue
		}
		e, err := entryOf(we)
		if err != nil {
			p.Skipped++
			continue
		}
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

// check holds a document to what Plexus shows and runs: a valid name and
// version, text without control characters (a terminal would obey them),
// and bounded lists. What a package or remote needs to run is checked when
// it is translated (translate.go).
func (s *Server) check() error {
	if !ValidName(s.Name) {
		return fmt.Errorf("a server's name %q is not reverse-DNS/name", clean(s.Name, 60))
	}
	if !ValidVersion(s.Version) {
		return fmt.Errorf("server %s has no valid version", s.Name)
	}
	s.Title = clean(s.Title, 200)
	s.Description = clean(s.Description, maxTextLen)
	s.WebsiteURL = cleanURL(s.WebsiteURL)
	if s.Repository != nil {
		s.Repository.URL = cleanURL(s.Repository.URL)
		s.Repository.Source = clean(s.Repository.Source, 40)
		s.Repository.Subfolder = clean(s.Repository.Subfolder, 200)
	}
	if len(s.Packages)+len(s.Remotes) > maxOptions {
		return fmt.Errorf("server %s offers %d packages and remotes, more than %d", s.Name, len(s.Packages)+len(s.Remotes), maxOptions)
	}
	inputs := 0
	for i := range s.Packages {
		p := &s.Packages[i]
		inputs += len(p.RuntimeArguments) + len(p.PackageArguments) + len(p.EnvironmentVariables) + len(p.Transport.Headers)
		for _, a := range append(append([]Argument(nil), p.RuntimeArguments...), p.PackageArguments...) {
			inputs += len(a.Variables)
		}
	}
	for _, r := range s.Remotes {
		inputs += len(r.Headers) + len(r.Variables)
	}
	if inputs > maxInputs {
		return fmt.Errorf("server %s declares %d inputs, more than %d", s.Name, inputs, maxInputs)
	}
	return nil
}

// clean makes s safe to show: control characters become spaces (a
// terminal would obey an escape sequence), invalid UTF-8 is replaced, and
// it is cut to n runes.
func clean(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return strings.TrimSpace(s)
}

// cleanURL keeps an http(s) URL to show as a link, or "".
func cleanURL(s string) string {
	if len(s) > 500 || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return ""
	}
	if l := strings.ToLower(s); !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://") {
		return ""
	}
	return s
}

// describeJSON says what is wrong with a JSON answer without quoting it.
func describeJSON(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("it is not JSON (a syntax error at byte %d)", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Errorf("its %s is a JSON %s where %s was expected", te.Field, te.Value, kindOf(te))
		}
		return fmt.Errorf("it is a JSON %s, not an object", te.Value)
	}
	return errors.New("it is not JSON")
}

func kindOf(te *json.UnmarshalTypeError) string {
	if te.Type == nil {
		return "another type"
	}
	switch te.Type.Kind().String() {
	case "string":
		return "text"
	case "slice":
		return "a list"
	case "struct", "map":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a " + te.Type.Kind().String()
}
