package serverconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Keys of a server's configuration.
const (
	KeyType           = "type"
	KeyCommand        = "command"
	KeyArgs           = "args"
	KeyCwd            = "cwd"
	KeyEnv            = "env"
	KeyURL            = "url"
	KeyHeaders        = "headers"
	KeyBearer         = "bearerTokenEnvVar"
	KeyEnabled        = "enabled"
	KeyEnabledTools   = "enabledTools"
	KeyDisabledTools  = "disabledTools"
	KeyStartupTimeout = "startupTimeoutMs"
	KeyCallTimeout    = "callTimeoutMs"
	KeyStart          = "start"
	KeyIdleStop       = "idleStopMs"
	KeyInstallTimeout = "installTimeoutMs"
	KeyOAuth          = "oauth"
	KeySandbox        = "sandbox"
)

// Transports.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// StdioKeys and RemoteKeys belong to one kind of server only; a change of
// kind drops the other kind's keys, which the daemon would refuse.
var (
	StdioKeys  = []string{KeyCommand, KeyArgs, KeyCwd, KeyEnv, KeySandbox}
	RemoteKeys = []string{KeyURL, KeyHeaders, KeyBearer, KeyOAuth}
)

// Decode decodes a server's stored settings. Numbers stay json.Number so
// that values a front end does not touch are sent back exactly as read.
func Decode(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var cfg map[string]any
	if err := dec.Decode(&cfg); err != nil || cfg == nil {
		return nil, fmt.Errorf("the daemon sent settings that are not a JSON object (%v): is it the same version as this program?", err)
	}
	return cfg, nil
}

// SetArgv stores an exact argument vector as command and args.
func SetArgv(cfg map[string]any, argv []string) {
	cfg[KeyCommand] = argv[0]
	SetOrDelete(cfg, KeyArgs, argv[1:], len(argv) == 1)
}

// Argv returns the argument vector of a stdio server's settings.
func Argv(cfg map[string]any) []string {
	cmd, _ := cfg[KeyCommand].(string)
	if cmd == "" {
		return nil
	}
	argv := []string{cmd}
	args, _ := cfg[KeyArgs].([]any)
	for _, a := range args {
		if s, ok := a.(string); ok {
			argv = append(argv, s)
		}
	}
	return argv
}

// SetOrDelete sets key to v, or deletes it when zero is true.
func SetOrDelete(m map[string]any, key string, v any, zero bool) {
	if zero {
		delete(m, key)
		return
	}
	m[key] = v
}

// SubMap returns m[key] as a map, creating it when absent.
func SubMap(m map[string]any, key string) map[string]any {
	if sub, ok := m[key].(map[string]any); ok {
		return sub
	}
	sub := map[string]any{}
	m[key] = sub
	return sub
}

// FindFold finds key in m ignoring case.
func FindFold(m map[string]any, key string) (string, bool) {
	for k := range m {
		if strings.EqualFold(k, key) {
			return k, true
		}
	}
	return "", false
}

// EnvRef returns the variable a reference value {"env": "VAR"} names, or "".
func EnvRef(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	s, _ := m["env"].(string)
	return s
}
