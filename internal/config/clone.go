package config

import (
	"maps"
	"slices"
)

// Clone returns a deep copy: the daemon validates edits on a copy and keeps
// the live configuration untouched until the edit is committed.
func (f *File) Clone() *File {
	if f == nil {
		return nil
	}
	c := *f
	c.MCP.Enabled = clonePtr(f.MCP.Enabled)
	c.MCP.Face = clonePtr(f.MCP.Face)
	c.MCP.Registry = clonePtr(f.MCP.Registry)
	c.MCP.Tracing = clonePtr(f.MCP.Tracing)
	c.MCP.Policy = f.MCP.Policy.Clone()
	if f.MCP.Audit != nil {
		a := *f.MCP.Audit
		a.Enabled = clonePtr(a.Enabled)
		c.MCP.Audit = &a
	}
	c.Team = f.Team.Clone()
	if f.MCP.Servers != nil {
		c.MCP.Servers = make(map[string]Server, len(f.MCP.Servers))
		for name, s := range f.MCP.Servers {
			c.MCP.Servers[name] = s.Clone()
		}
	}
	if f.MCP.Profiles != nil {
		c.MCP.Profiles = make(map[string]Profile, len(f.MCP.Profiles))
		for name, p := range f.MCP.Profiles {
			p.Servers = slices.Clone(p.Servers)
			p.ControlTools = clonePtr(p.ControlTools)
			p.Users = slices.Clone(p.Users)
			p.Groups = slices.Clone(p.Groups)
			c.MCP.Profiles[name] = p
		}
	}
	return &c
}

// Clone returns a deep copy of s.
func (s Server) Clone() Server {
	s.Args = slices.Clone(s.Args)
	s.Env = maps.Clone(s.Env)
	for k, r := range s.Env {
		if r.Value != nil {
			r.Value = clonePtr(r.Value)
			s.Env[k] = r
		}
	}
	s.Headers = maps.Clone(s.Headers)
	s.Enabled = clonePtr(s.Enabled)
	s.NpxDirect = clonePtr(s.NpxDirect)
	s.EnabledTools = slices.Clone(s.EnabledTools)
	s.DisabledTools = slices.Clone(s.DisabledTools)
	s.MaxRestartAttempts = clonePtr(s.MaxRestartAttempts)
	if s.Sandbox != nil {
		s.Sandbox = s.Sandbox.Clone()
	}
	if s.OAuth != nil {
		o := *s.OAuth
		o.ClientSecret = clonePtr(o.ClientSecret)
		o.PrivateKey = clonePtr(o.PrivateKey)
		o.IDPClientSecret = clonePtr(o.IDPClientSecret)
		o.Scopes = slices.Clone(o.Scopes)
		s.OAuth = &o
	}
	return s
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
