package config

import (
	"bytes"
	"fmt"

	"github.com/plexus-mcp/plexus/internal/jsontree"
)

// Decode parses extensions.json strictly and validates it. Unknown keys,
// duplicate keys, wrong types, trailing data and every rule of Validate are
// errors; all of them are reported together as an *Error. Empty input is an
// empty configuration.
//
// Empty objects and arrays decode as nil maps and slices, so an empty
// "enabledTools" means the same as none: Encode omits them, and the decoded
// File must survive Encode unchanged.
func Decode(data []byte) (*File, error) {
	// Editors on Windows like to start files with a byte order mark.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if jsontree.IsBlank(data) {
		return &File{}, nil
	}
	root, prob := parse(data)
	if prob != nil {
		return nil, &Error{Problems: []Problem{*prob}}
	}
	var d decoder
	f := d.file(root)

	// A value that failed to decode is left zero, and validating the zero
	// would report it a second time ("type is required" after "want a
	// string"): only validation problems outside bad values are kept.
	var v problems
	validateFile(&v, f)
	for _, p := range v.list {
		if !d.covers(p.Path) {
			d.list = append(d.list, p)
		}
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return f, nil
}

type decoder struct {
	problems
	bad map[string]bool // paths in problems, built by covers
}

// covers reports whether path is at or under a path with a decode problem.
// It must be called only once decoding is complete.
func (d *decoder) covers(path string) bool {
	if d.bad == nil {
		d.bad = make(map[string]bool, len(d.list))
		for _, p := range d.list {
			d.bad[p.Path] = true
		}
	}
	for i := range len(path) {
		if (path[i] == '.' || path[i] == '[') && d.bad[path[:i]] {
			return true
		}
	}
	return d.bad[path]
}

func (d *decoder) file(n *node) *File {
	f := &File{}
	d.object("", n, fileKeys, func(key, p string, v *node) bool {
		switch key {
		case "revision":
			f.Revision = d.integer(p, v, 64)
		case "mcp":
			f.MCP = d.mcp(p, v)
		case "team":
			f.Team = d.team(p, v)
		default:
			return false
		}
		return true
	})
	return f
}

func (d *decoder) mcp(path string, n *node) MCP {
	var m MCP
	d.object(path, n, mcpKeys, func(key, p string, v *node) bool {
		switch key {
		case "enabled":
			m.Enabled = d.boolPtr(p, v)
		case "retryMs":
			m.RetryMs = d.int(p, v)
		case "callTimeoutMs":
			m.CallTimeoutMs = d.int(p, v)
		case "oauthClientMetadataUrl":
			m.OAuthClientMetadataURL = d.str(p, v)
		case "servers":
			m.Servers = decodeMap(d, p, v, d.server)
		case "face":
			m.Face = d.face(p, v)
		case "profiles":
			m.Profiles = decodeMap(d, p, v, d.profile)
		case "registry":
			m.Registry = d.registry(p, v)
		case "names":
			m.Names = d.str(p, v)
		case "tracing":
			m.Tracing = d.tracing(p, v)
		case "policy":
			m.Policy = d.policy(p, v)
		case "audit":
			m.Audit = d.audit(p, v)
		default:
			return false
		}
		return true
	})
	return m
}

func (d *decoder) server(path string, n *node) Server {
	var s Server
	d.object(path, n, serverKeys, func(key, p string, v *node) bool {
		switch key {
		case "type":
			s.Type = d.str(p, v)
		case "command":
			s.Command = d.str(p, v)
		case "args":
			s.Args = d.strs(p, v)
		case "cwd":
			s.Cwd = d.str(p, v)
		case "env":
			s.Env = decodeMap(d, p, v, d.envEntry)
		case "url":
			s.URL = d.str(p, v)
		case "headers":
			s.Headers = decodeMap(d, p, v, d.value)
		case "bearerTokenEnvVar":
			s.BearerTokenEnvVar = d.str(p, v)
		case "enabled":
			s.Enabled = d.boolPtr(p, v)
		case "enabledTools":
			s.EnabledTools = d.strs(p, v)
		case "disabledTools":
			s.DisabledTools = d.strs(p, v)
		case "startupTimeoutMs":
			s.StartupTimeoutMs = d.int(p, v)
		case "callTimeoutMs":
			s.CallTimeoutMs = d.int(p, v)
		case "keepAliveMs":
			s.KeepAliveMs = d.int(p, v)
		case "instance":
			s.Instance = d.str(p, v)
		case "start":
			s.Start = d.str(p, v)
		case "idleStopMs":
			s.IdleStopMs = d.int(p, v)
		case "installTimeoutMs":
			s.InstallTimeoutMs = d.int(p, v)
		case "maxDescriptionChars":
			s.MaxDescriptionChars = d.int(p, v)
		case "maxResultBytes":
			s.MaxResultBytes = d.integer(p, v, 64)
		case "maxRestartAttempts":
			n := d.int(p, v)
			s.MaxRestartAttempts = &n
		case "oauth":
			s.OAuth = d.oauth(p, v)
		case "protocolVersion":
			s.ProtocolVersion = d.str(p, v)
		case "sandbox":
			s.Sandbox = d.sandbox(p, v)
		case "auditPayloads":
			s.AuditPayloads = d.boolean(p, v)
		case "npxDirect":
			s.NpxDirect = d.boolPtr(p, v)
		default:
			return false
		}
		return true
	})
	return s
}

func (d *decoder) oauth(path string, n *node) *OAuth {
	var o OAuth
	d.object(path, n, oauthKeys, func(key, p string, v *node) bool {
		switch key {
		case "clientId":
			o.ClientID = d.str(p, v)
		case "clientSecret":
			r := d.ref(p, v)
			o.ClientSecret = &r
		case "authUrl":
			o.AuthURL = d.str(p, v)
		case "tokenUrl":
			o.TokenURL = d.str(p, v)
		case "scopes":
			o.Scopes = d.strs(p, v)
		case "grant":
			o.Grant = d.str(p, v)
		case "authMethod":
			o.AuthMethod = d.str(p, v)
		case "privateKey":
			r := d.ref(p, v)
			o.PrivateKey = &r
		case "privateKeyFile":
			o.PrivateKeyFile = d.str(p, v)
		case "signingAlg":
			o.SigningAlg = d.str(p, v)
		case "tokenFile":
			o.TokenFile = d.str(p, v)
		case "idpTokenUrl":
			o.IDPTokenURL = d.str(p, v)
		case "idpClientId":
			o.IDPClientID = d.str(p, v)
		case "idpClientSecret":
			r := d.ref(p, v)
			o.IDPClientSecret = &r
		case "idTokenFile":
			o.IDTokenFile = d.str(p, v)
		default:
			return false
		}
		return true
	})
	return &o
}

func (d *decoder) face(path string, n *node) *Face {
	var f Face
	d.object(path, n, faceKeys, func(key, p string, v *node) bool {
		switch key {
		case "allowWrite":
			f.AllowWrite = d.boolean(p, v)
		case "allowExternalCall":
			f.AllowExternalCall = d.boolean(p, v)
		case "sessionIdleMs":
			f.SessionIdleMs = d.int(p, v)
		case "maxSessions":
			f.MaxSessions = d.int(p, v)
		default:
			return false
		}
		return true
	})
	return &f
}

func (d *decoder) registry(path string, n *node) *Registry {
	var r Registry
	d.object(path, n, registryKeys, func(key, p string, v *node) bool {
		if key != "url" {
			return false
		}
		r.URL = d.str(p, v)
		return true
	})
	return &r
}

func (d *decoder) tracing(path string, n *node) *Tracing {
	var t Tracing
	d.object(path, n, tracingKeys, func(key, p string, v *node) bool {
		switch key {
		case "enabled":
			t.Enabled = d.boolean(p, v)
		case "protocol":
			t.Protocol = d.str(p, v)
		default:
			return false
		}
		return true
	})
	return &t
}

func (d *decoder) audit(path string, n *node) *Audit {
	var a Audit
	d.object(path, n, auditKeys, func(key, p string, v *node) bool {
		switch key {
		case "enabled":
			a.Enabled = d.boolPtr(p, v)
		case "maxFileBytes":
			a.MaxFileBytes = d.integer(p, v, 64)
		case "maxFiles":
			a.MaxFiles = d.int(p, v)
		case "otlp":
			a.OTLP = d.boolean(p, v)
		default:
			return false
		}
		return true
	})
	return &a
}

func (d *decoder) profile(path string, n *node) Profile {
	var pr Profile
	d.object(path, n, profileKeys, func(key, p string, v *node) bool {
		switch key {
		case "servers":
			pr.Servers = d.strs(p, v)
		case "naming":
			pr.Naming = d.str(p, v)
		case "metaTools":
			pr.MetaTools = d.boolean(p, v)
		case "controlTools":
			b := d.boolean(p, v)
			pr.ControlTools = &b
		case "users":
			pr.Users = d.strs(p, v)
		case "groups":
			pr.Groups = d.strs(p, v)
		default:
			return false
		}
		return true
	})
	return pr
}

const (
	refForm   = `{"env": "VAR"}`
	plainForm = `{"value": "TEXT"}`
)

// ref decodes { "env": "VAR" }. A plain string is refused without being
// echoed: it is most likely the secret itself.
func (d *decoder) ref(path string, n *node) Ref {
	var r Ref
	switch n.kind {
	case objectKind:
	case stringKind:
		d.add(path, "want "+refForm+", got string: secrets are named, never written into the configuration")
		return r
	default:
		d.wrongType(path, refForm, n)
		return r
	}
	reported := false
	d.object(path, n, []string{"env"}, func(key, p string, v *node) bool {
		if key != "env" {
			return false
		}
		r.Env = d.str(p, v)
		reported = v.kind != stringKind
		return true
	})
	if r.Env == "" && !reported {
		// Reported here as well as by Validate: in a header Value an empty
		// reference would otherwise pass for an empty string.
		d.add(KeyPath(path, "env"), msgVarRequired)
	}
	return r
}

// envEntry decodes an env entry: a reference { "env": "VAR" } or a plain
// value { "value": "TEXT" }, exactly one of the two.
func (d *decoder) envEntry(path string, n *node) Ref {
	switch n.kind {
	case objectKind:
	case stringKind:
		d.add(path, "want "+refForm+", got string: secrets are named, never written into the configuration (a value that is not secret is written "+plainForm+")")
		return Ref{}
	default:
		d.add(path, "want "+refForm+", got "+n.kind.String()+" (a value that is not secret is written "+plainForm+")")
		return Ref{}
	}
	var r Ref
	reported := false
	d.object(path, n, envKeys, func(key, p string, v *node) bool {
		switch key {
		case "env":
			r.Env = d.str(p, v)
			reported = reported || v.kind != stringKind
		case "value":
			s := d.str(p, v)
			r.Value = &s
			reported = reported || v.kind != stringKind
		default:
			return false
		}
		return true
	})
	switch {
	case reported:
	case r.Value != nil && r.Env != "":
		d.add(path, "has both env and value: a secret is named with env, a plain value written with value; keep one")
	case r.Value == nil && r.Env == "":
		d.add(KeyPath(path, "env"), msgVarRequired)
	}
	return r
}

func (d *decoder) value(path string, n *node) Value {
	switch n.kind {
	case stringKind:
		return Value{Text: n.text}
	case objectKind:
		return Value{Env: d.ref(path, n).Env}
	}
	d.add(path, fmt.Sprintf("want a string or %s, got %s", refForm, n.kind))
	return Value{}
}
