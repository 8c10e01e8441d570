package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// removeMark typed into a secret field removes the stored secret.
const removeMark = "-"

// formValues is what a person typed into the form, as plain strings.
type formValues struct {
	transport   string // serverconf.TypeHTTP, TypeSSE or TypeStdio
	url         string
	command     string
	name        string
	bearer      string
	headerName  string
	headerValue string
	env         string
	startup     string // the startup timeout in ms; blank: the default
	// oauth holds the OAuth fields shown for the grant chosen, by their
	// key in the server's "oauth" object; sandbox the sandbox's fields.
	oauth   map[string]string
	sandbox sandboxValues
	// urlSecrets are the keys taken out of the stored URL when the form
	// opened, by the variable the URL field shows instead.
	urlSecrets map[string]string
}

// plan is a save: the request, and the form's own secrets to delete once
// the save succeeded (a secret whose reference the save removed: the daemon
// refuses a secret field for a variable the server no longer references).
type plan struct {
	req    apitype.PutServerRequest
	forget []string
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// buildPlan turns the form into the daemon's request. base is the stored
// configuration of the server edited (nil for a new one): every setting the
// form does not show is kept. Errors name fields, never a secret value.
func buildPlan(v formValues, base map[string]any) (plan, error) {
	var p plan
	name := strings.TrimSpace(v.name)
	if name == "" {
		return p, errors.New("name: give the server a name")
	}
	cfg := map[string]any{}
	if base != nil {
		cfg = maps.Clone(base)
	}
	secrets := map[string]string{}
	// forgetIfOwn queues var for deletion if it is one the form made for
	// this server: a variable set by hand may be shared with others.
	forgetIfOwn := func(ref any, what string) {
		if r := refName(ref); r != "" && r == serverconf.VarFor(name, what) {
			p.forget = append(p.forget, r)
		}
	}
	cfg[serverconf.KeyType] = v.transport
	if v.transport == serverconf.TypeStdio {
		for _, k := range serverconf.RemoteKeys {
			delete(cfg, k)
		}
		line := strings.TrimSpace(v.command)
		if line == "" {
			return p, errors.New("command: give the command that runs the server, as typed in a shell")
		}
		argv, err := cmdline.Split(line)
		if err != nil {
			return p, fmt.Errorf("command: %w", err)
		}
		serverconf.SetArgv(cfg, argv)
		if err := applyEnv(cfg, name, v.env, secrets, forgetIfOwn); err != nil {
			return p, err
		}
		if err := applySandbox(cfg, v.sandbox); err != nil {
			return p, err
		}
	} else {
		for _, k := range serverconf.StdioKeys {
			delete(cfg, k)
		}
		u := strings.TrimSpace(v.url)
		if l := strings.ToLower(u); !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
			return p, errors.New("url: give an http:// or https:// URL; for a command, switch the transport to stdio with ← →")
		}
		u, moved := serverconf.MoveURLSecrets(name, u)
		for _, m := range moved {
			secrets[m.Var] = m.Value
		}
		for ref, val := range v.urlSecrets {
			if _, typed := secrets[ref]; !typed && strings.Contains(u, "${"+ref+"}") {
				secrets[ref] = val
			}
		}
		cfg[serverconf.KeyURL] = u
		switch v.bearer {
		case "":
		case removeMark:
			forgetIfOwn(cfg[serverconf.KeyBearer], "token")
			delete(cfg, serverconf.KeyBearer)
		default:
			ref := serverconf.VarFor(name, "token")
			cfg[serverconf.KeyBearer] = ref
			secrets[ref] = v.bearer
		}
		if err := applyHeader(cfg, name, v, base, secrets, forgetIfOwn); err != nil {
			return p, err
		}
		applyGrant(cfg, name, v.oauth, secrets, forgetIfOwn)
	}
	if err := applyStartup(cfg, v.startup); err != nil {
		return p, err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return p, fmt.Errorf("encoding the server's settings: %w", err)
	}
	p.req = apitype.PutServerRequest{Name: name, Config: raw}
	if len(secrets) > 0 {
		p.req.Secrets = secrets
	}
	return p, nil
}

// applyStartup sets the startup timeout: whole milliseconds, or blank for
// the default. The daemon checks the bounds, as for every front end.
func applyStartup(cfg map[string]any, field string) error {
	ms := strings.TrimSpace(field)
	if ms == "" {
		delete(cfg, serverconf.KeyStartupTimeout)
		return nil
	}
	n, err := strconv.Atoi(ms)
	if err != nil || n <= 0 {
		return fmt.Errorf("startup ms: give a whole number of milliseconds (such as 120000), or leave it blank for the default, not %q", ansi.Truncate(ms, 20, "…"))
	}
	cfg[serverconf.KeyStartupTimeout] = n
	return nil
}

// refName is the variable a config value reads: a bearerTokenEnvVar string
// or an {"env": VAR} reference.
func refName(v any) string {
	if s, ok := v.(string); ok && serverconf.IsVarName(s) {
		return s
	}
	return serverconf.EnvRef(v)
}

// firstHeader is the header the form shows of a stored server: the first
// by name (a server may have more; the others are kept as they are).
func firstHeader(cfg map[string]any) string {
	h, _ := cfg[serverconf.KeyHeaders].(map[string]any)
	if len(h) == 0 {
		return ""
	}
	return slices.Sorted(maps.Keys(h))[0]
}

// applyHeader applies the form's one custom header.
func applyHeader(cfg map[string]any, server string, v formValues, base map[string]any, secrets map[string]string, forget func(any, string)) error {
	orig := firstHeader(base)
	hn, hv := strings.TrimSpace(v.headerName), v.headerValue
	var headers map[string]any
	if h, ok := cfg[serverconf.KeyHeaders].(map[string]any); ok {
		headers = maps.Clone(h)
	} else {
		headers = map[string]any{}
	}
	switch {
	case hv == removeMark || hn == "" && hv == "":
		// "-" removes the header; a name cleared removes it too.
		if orig != "" {
			forget(headers[orig], orig)
			delete(headers, orig)
		}
	case hn == "":
		return errors.New("header: give the header's name (such as X-Api-Key) for its value")
	case !headerName.MatchString(hn):
		return fmt.Errorf("header: %q is not a valid HTTP header name", hn)
	case strings.EqualFold(hn, "Authorization"):
		return errors.New("header: put a bearer token in the bearer field, not in a custom Authorization header")
	case hv != "":
		if orig != "" && orig != hn {
			delete(headers, orig)
		}
		ref := serverconf.VarFor(server, hn)
		headers[hn] = map[string]any{"env": ref}
		secrets[ref] = hv
	case orig == "":
		return fmt.Errorf("header %s: give its value (it is stored as a secret)", hn)
	case orig != hn:
		headers[hn] = headers[orig] // renamed: same stored value
		delete(headers, orig)
	}
	serverconf.SetOrDelete(cfg, serverconf.KeyHeaders, headers, len(headers) == 0)
	return nil
}

// envEntry is one KEY=value of the env field.
type envEntry struct{ key, value string }

// parseEnv reads the env field: KEY=value entries separated by spaces; "-"
// alone removes every entry, KEY=- one. Errors say which entry, never its
// value.
func parseEnv(s string) (entries []envEntry, removeAll bool, err error) {
	fields := strings.Fields(s)
	if len(fields) == 1 && fields[0] == removeMark {
		return nil, true, nil
	}
	seen := map[string]bool{}
	for i, f := range fields {
		k, val, ok := strings.Cut(f, "=")
		switch {
		case !ok:
			return nil, false, fmt.Errorf("env: entry %d is not KEY=value", i+1)
		case !serverconf.IsVarName(k):
			return nil, false, fmt.Errorf("env: entry %d: the name before = must be letters, digits and _", i+1)
		case val == "":
			return nil, false, fmt.Errorf("env: %s= has no value: give one, or - to remove it", k)
		case seen[k]:
			return nil, false, fmt.Errorf("env: %s is given twice", k)
		}
		seen[k] = true
		entries = append(entries, envEntry{k, val})
	}
	return entries, false, nil
}

// applyEnv applies the env field to a stdio server's settings.
func applyEnv(cfg map[string]any, server, field string, secrets map[string]string, forget func(any, string)) error {
	entries, removeAll, err := parseEnv(field)
	if err != nil {
		return err
	}
	var env map[string]any
	if e, ok := cfg[serverconf.KeyEnv].(map[string]any); ok {
		env = maps.Clone(e)
	} else {
		env = map[string]any{}
	}
	if removeAll {
		for k, ref := range env {
			forget(ref, k)
		}
		env = map[string]any{}
	}
	for _, e := range entries {
		if e.value == removeMark {
			if old, ok := env[e.key]; ok {
				forget(old, e.key)
				delete(env, e.key)
			}
			continue
		}
		if old, ok := env[e.key].(map[string]any); ok {
			if _, plain := old["value"]; plain {
				// A plain value (not a secret) stays one.
				env[e.key] = map[string]any{"value": e.value}
				continue
			}
		}
		ref := serverconf.VarFor(server, e.key)
		env[e.key] = map[string]any{"env": ref}
		secrets[ref] = e.value
	}
	serverconf.SetOrDelete(cfg, serverconf.KeyEnv, env, len(env) == 0)
	return nil
}
