package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// Setting keys of `plexus settings`, in the order show lists them.
const (
	setCallTimeout   = "callTimeoutMs"
	setRetry         = "retryMs"
	setClientDoc     = "oauthClientMetadataUrl"
	setExternalCall  = "face.allowExternalCall"
	setWrite         = "face.allowWrite"
	setSessionIdle   = "face.sessionIdleMs"
	setMaxSessions   = "face.maxSessions"
	setRegistryURL   = "registry.url"
	setNames         = "names"
	setTracing       = "tracing.enabled"
	setTracingProto  = "tracing.protocol"
	setPolicyRules   = "policy.rules"
	setPolicyLimits  = "policy.limits"
	setAudit         = "audit.enabled"
	setAuditOTLP     = "audit.otlp"
	setProfilePrefix = "profiles."
)

func (a *app) settingsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show or change the daemon's section-wide settings",
		Long: `Show or change the settings of the mcp section that are not a server's:

  callTimeoutMs           a tool call's timeout in ms, unless the server sets its own (default 60000)
  retryMs                 the first retry interval of a failed server in ms (default 30000)
  oauthClientMetadataUrl  the https URL where you host Plexus's OAuth client ID metadata document:
                          its client_id at authorization servers that support such documents
                          (docs/oauth.md shows the document); unset: dynamic registration
  face.allowExternalCall  offer your servers' tools, resources and prompts to clients of
                          ` + "`plexus mcp`" + ` and /mcp (default false: only plexus_status and plexus_snapshot)
  face.allowWrite         also offer plexus_restart, plexus_set_enabled and plexus_add_server
  face.sessionIdleMs      a client session ends after this long without a request (default 1800000)
  face.maxSessions        the live sessions one profile holds at most (default 1000)
  registry.url            the MCP registry ` + "`plexus search`" + ` and the catalog use (default
                          https://registry.modelcontextprotocol.io; a company's own serves the same API)
  names                   how clients see your tools: readable (github_create_issue; a short suffix only
                          on a collision or past 64 characters; a tool keeps the name it got first; the
                          default) or hashed (mcp_github_create_issue_mkkst2dq, the names before readable)
  tracing.enabled         export OpenTelemetry traces over OTLP (default false); where to is set by the
                          OTEL_EXPORTER_OTLP_* variables (docs/tracing.md); applied at once
  tracing.protocol        the OTLP transport: http/protobuf (the default) or grpc
  policy.rules            the rules that allow, deny or hold a tool call for your approval, as a JSON
                          list tried in order (the first match decides; no match: allowed):
                          [{"tool": "fs_write_*", "client": "claude-*", "profile": "work",
                            "destructive": true, "action": "allow"|"deny"|"askOncePerSession"|"askEveryCall"}]
                          (globs over the tool's Plexus name, the client's name and the profile; empty: any)
  policy.limits           rate limits per client, as a JSON list: [{"tool": "github_*", "client": "*",
                          "calls": 30, "windowMs": 60000}] (a refused call says when to try again)
  audit.enabled           record every call, read, login and settings change in audit.jsonl (default
                          true; ` + "`plexus audit`" + ` reads it; docs/audit.md); applies at once
  audit.otlp              also export each record as an OTLP log, as tracing.protocol and the
                          OTEL_EXPORTER_OTLP_* variables say (default false); applies at once
  profiles.NAME           a profile, as JSON: {"servers": [...], "naming": "plexus"|"bare", "metaTools": bool,
                          "controlTools": bool}

Every change goes through the daemon, which checks it and saves it only if it
is valid and nothing changed meanwhile. Durations also take Go's form (30s, 2m).`,
		Example: `  plexus settings show
  plexus settings set face.allowExternalCall true
  plexus settings set callTimeoutMs 30s
  plexus settings set profiles.fs '{"servers": ["fs"], "naming": "bare"}'
  plexus settings unset profiles.fs
  plexus settings get retryMs --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("give a subcommand: show, get, set or unset")
		},
	}
	cmd.AddCommand(a.settingsShowCommand(), a.settingsGetCommand(), a.settingsSetCommand(true), a.settingsSetCommand(false))
	return cmd
}

func (a *app) settingsShowCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show every setting",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			s, err := c.Settings(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout(), s)
			}
			t := &table{header: []string{"KEY", "VALUE"}}
			for _, k := range []string{setCallTimeout, setRetry, setClientDoc, setExternalCall, setWrite, setRegistryURL, setNames, setTracing, setTracingProto, setAudit, setAuditOTLP} {
				v, _ := settingValue(s, k)
				t.add(k, v)
			}
			addPolicyRows(t, s.Policy)
			for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
				v, _ := settingValue(s, setProfilePrefix+name)
				t.add(setProfilePrefix+name, v)
			}
			if err := t.write(a.stdout(), a.outputWidth()); err != nil {
				return err
			}
			if s.Face == nil || !s.Face.AllowExternalCall {
				a.warnf("%s", apitype.ExternalCallOff)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the settings as JSON")
	return cmd
}

func (a *app) settingsGetCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Print one setting",
		Args:  exactArgs("KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, s, err := a.settingsFor(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			v, raw := settingValue(s, args[0])
			if raw == nil {
				return fmt.Errorf("there is no profile %q: `plexus settings show` lists them", strings.TrimPrefix(args[0], setProfilePrefix))
			}
			if asJSON {
				return printJSON(a.stdout(), map[string]any{"key": args[0], "value": raw})
			}
			fmt.Fprintln(a.stdout(), v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {\"key\", \"value\"} as JSON")
	return cmd
}

// settingsSetCommand is `set KEY VALUE`, or `unset KEY` (set is false),
// which restores the default or removes a profile.
func (a *app) settingsSetCommand(set bool) *cobra.Command {
	var asJSON bool
	use, short, names := "unset KEY", "Restore a setting's default, or remove a profile", []string{"KEY"}
	if set {
		use, short, names = "set KEY VALUE", "Change one setting", []string{"KEY", "VALUE"}
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(names...),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := args[0]
			c, s, err := a.settingsFor(cmd.Context(), key)
			if err != nil {
				return err
			}
			value := ""
			if set {
				value = args[1]
			}
			if err := applySetting(s, key, value, set); err != nil {
				return err
			}
			saved, err := c.SetSettings(cmd.Context(), *s, s.Revision)
			if err != nil {
				return fmt.Errorf("saving %s: %w", key, err)
			}
			if asJSON {
				return printJSON(a.stdout(), saved)
			}
			v, _ := settingValue(saved, key)
			if v == "" {
				v = "(none)"
			}
			fmt.Fprintf(a.stdout(), "%s = %s (revision %d)\n", key, v, saved.Revision)
			if key == setExternalCall && saved.Face != nil && saved.Face.AllowExternalCall {
				a.progressf("clients of Plexus now see your servers' tools; clients connected before reconnect")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the saved settings as JSON")
	return cmd
}

// settingsFor checks key and reads the settings it is one of.
func (a *app) settingsFor(ctx context.Context, key string) (*client.Client, *apitype.Settings, error) {
	if err := checkSettingKey(key); err != nil {
		return nil, nil, err
	}
	c, err := a.client()
	if err != nil {
		return nil, nil, err
	}
	s, err := c.Settings(ctx)
	return c, s, err
}

// checkSettingKey refuses a key `plexus settings` does not know.
func checkSettingKey(key string) error {
	if slices.Contains(settingKeys, key) && !strings.HasSuffix(key, ".NAME") {
		return nil
	}
	if name, ok := strings.CutPrefix(key, setProfilePrefix); ok && name != "" {
		return nil
	}
	return usagef("unknown setting %q: want one of %s", truncate(key, 40), strings.Join(settingKeys, ", "))
}

// settingValue is key's value as show prints it, and as JSON (nil for a
// profile that does not exist).
func settingValue(s *apitype.Settings, key string) (string, any) {
	face := apitype.FaceSettings{}
	if s.Face != nil {
		face = *s.Face
	}
	switch key {
	case setCallTimeout:
		return msValue(s.CallTimeoutMs, 60000), s.CallTimeoutMs
	case setRetry:
		return msValue(s.RetryMs, 30000), s.RetryMs
	case setClientDoc:
		if s.OAuthClientMetadataURL == nil || *s.OAuthClientMetadataURL == "" {
			return "(none: dynamic registration)", ""
		}
		return *s.OAuthClientMetadataURL, *s.OAuthClientMetadataURL
	case setExternalCall:
		return strconv.FormatBool(face.AllowExternalCall), face.AllowExternalCall
	case setWrite:
		return strconv.FormatBool(face.AllowWrite), face.AllowWrite
	case setSessionIdle:
		return msValue(face.SessionIdleMs, 1800000), face.SessionIdleMs
	case setMaxSessions:
		if face.MaxSessions == 0 {
			return "1000 (default)", 0
		}
		return strconv.Itoa(face.MaxSessions), face.MaxSessions
	case setRegistryURL:
		if s.Registry == nil {
			return "", ""
		}
		return s.Registry.URL, s.Registry.URL
	case setNames:
		return s.Names, s.Names
	case setTracing, setTracingProto:
		t := apitype.TracingSettings{}
		if s.Tracing != nil {
			t = *s.Tracing
		}
		if key == setTracing {
			return strconv.FormatBool(t.Enabled), t.Enabled
		}
		if t.Protocol == "" {
			return "http/protobuf (default)", ""
		}
		return t.Protocol, t.Protocol
	case setPolicyRules, setPolicyLimits:
		pol := apitype.PolicySettings{Rules: []apitype.PolicyRule{}, Limits: []apitype.RateLimit{}}
		if s.Policy != nil {
			pol = *s.Policy
		}
		var v any = pol.Rules
		if key == setPolicyLimits {
			v = pol.Limits
		}
		b, _ := json.Marshal(v)
		return string(b), v
	case setAudit, setAuditOTLP:
		a := apitype.AuditSettings{Enabled: true}
		if s.Audit != nil {
			a = *s.Audit
		}
		if key == setAudit {
			return strconv.FormatBool(a.Enabled), a.Enabled
		}
		return strconv.FormatBool(a.OTLP), a.OTLP
	}
	p, ok := s.Profiles[strings.TrimPrefix(key, setProfilePrefix)]
	if !ok {
		return "", nil
	}
	b, _ := json.Marshal(p)
	return string(b), p
}

// msValue shows a duration setting; 0 is the default.
func msValue(ms, def int) string {
	if ms == 0 {
		return fmt.Sprintf("%d (default)", def)
	}
	return strconv.Itoa(ms)
}

// applySetting changes key in s to value (set), or back to its default.
func applySetting(s *apitype.Settings, key, value string, set bool) error {
	if s.Face == nil {
		s.Face = &apitype.FaceSettings{}
	}
	switch key {
	case setCallTimeout, setRetry, setSessionIdle:
		ms := 0
		if set {
			var err error
			if ms, err = parseMillis(value); err != nil {
				return usagef("%s: %v", key, err)
			}
		}
		switch key {
		case setCallTimeout:
			s.CallTimeoutMs = ms
		case setRetry:
			s.RetryMs = ms
		default:
			s.Face.SessionIdleMs = ms
		}
	case setClientDoc:
		v := ""
		if set {
			v = value
		}
		s.OAuthClientMetadataURL = &v
	case setMaxSessions:
		n := 0
		if set {
			var err error
			if n, err = strconv.Atoi(value); err != nil || n < 0 {
				return usagef("%s takes a number of sessions, not %q", key, truncate(value, 40))
			}
		}
		s.Face.MaxSessions = n
	case setExternalCall, setWrite:
		on := false
		if set {
			var err error
			if on, err = strconv.ParseBool(value); err != nil {
				return usagef("%s takes true or false, not %q", key, truncate(value, 40))
			}
		}
		if key == setExternalCall {
			s.Face.AllowExternalCall = on
		} else {
			s.Face.AllowWrite = on
		}
	case setRegistryURL:
		// "" is the official registry; the daemon checks the URL.
		if !set {
			value = ""
		}
		s.Registry = &apitype.RegistrySettings{URL: value}
	case setTracing, setTracingProto:
		t := apitype.TracingSettings{}
		if s.Tracing != nil {
			t = *s.Tracing
		}
		switch {
		case key == setTracingProto:
			t.Protocol = "" // the daemon checks the value and names what it takes
			if set {
				t.Protocol = value
			}
		case set:
			on, err := strconv.ParseBool(value)
			if err != nil {
				return usagef("%s takes true or false, not %q", key, truncate(value, 40))
			}
			t.Enabled = on
		default:
			t.Enabled = false
		}
		s.Tracing = &t
	case setPolicyRules, setPolicyLimits:
		pol := apitype.PolicySettings{}
		if s.Policy != nil {
			pol = *s.Policy
		}
		if !set {
			value = "[]"
		}
		var err error
		if key == setPolicyRules {
			pol.Rules, err = strictList[apitype.PolicyRule](value)
		} else {
			pol.Limits, err = strictList[apitype.RateLimit](value)
		}
		if err != nil {
			return usagef(`%s takes a JSON list (see plexus settings --help): %v`, key, err)
		}
		s.Policy = &pol // the daemon checks each rule and limit and names what is wrong
	case setAudit, setAuditOTLP:
		a := apitype.AuditSettings{Enabled: true}
		if s.Audit != nil {
			a = *s.Audit
		}
		on := key == setAudit // unset: the default, on for the log, off for OTLP
		if set {
			var err error
			if on, err = strconv.ParseBool(value); err != nil {
				return usagef("%s takes true or false, not %q", key, truncate(value, 40))
			}
		}
		if key == setAudit {
			a.Enabled = on
		} else {
			a.OTLP = on
		}
		s.Audit = &a
	case setNames:
		// The daemon checks the value and names what it takes.
		if !set {
			value = "readable"
		}
		s.Names = value
	default:
		name := strings.TrimPrefix(key, setProfilePrefix)
		if s.Profiles == nil {
			s.Profiles = map[string]apitype.Profile{}
		}
		if !set {
			if _, ok := s.Profiles[name]; !ok {
				return fmt.Errorf("there is no profile %q: `plexus settings show` lists them", name)
			}
			delete(s.Profiles, name)
			return nil
		}
		var p apitype.Profile
		dec := json.NewDecoder(strings.NewReader(value))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil || dec.More() {
			return usagef(`%s takes a JSON object like {"servers": ["fs"], "naming": "bare", "metaTools": false}: %v`, key, err)
		}
		s.Profiles[name] = p
	}
	return nil
}

// strictList decodes a JSON list of T, refusing unknown keys.
func strictList[T any](value string) ([]T, error) {
	out := []T{}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more after the list")
	}
	return out, nil
}

// addPolicyRows shows mcp.policy in `settings show`: a row per rule and
// per limit, in order, or one saying there are none.
func addPolicyRows(t *table, p *apitype.PolicySettings) {
	if p == nil || len(p.Rules) == 0 {
		t.add(setPolicyRules, "(none: every call allowed)")
	}
	if p == nil || len(p.Limits) == 0 {
		t.add(setPolicyLimits, "(none)")
	}
	if p == nil {
		return
	}
	for i, r := range p.Rules {
		b, _ := json.Marshal(r)
		t.add(fmt.Sprintf("%s[%d]", setPolicyRules, i), string(b))
	}
	for i, l := range p.Limits {
		b, _ := json.Marshal(l)
		t.add(fmt.Sprintf("%s[%d]", setPolicyLimits, i), string(b))
	}
}

// parseMillis reads a duration setting: milliseconds, or a Go duration.
func parseMillis(v string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("%d is negative", n)
		}
		return n, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want milliseconds or a duration like 30s, not %q", truncate(v, 40))
	}
	return int(d.Milliseconds()), nil
}

// noteExternalCallOff tells on stderr that clients see none of the
// servers' tools while external calls are off. A daemon that cannot say
// gets no note: the listing itself has already been printed.
func (a *app) noteExternalCallOff(ctx context.Context, c *client.Client) {
	s, err := c.Settings(ctx)
	if err == nil && (s.Face == nil || !s.Face.AllowExternalCall) {
		a.warnf("%s", apitype.ExternalCallOff)
	}
}
