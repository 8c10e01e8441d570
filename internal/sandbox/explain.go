package sandbox

import (
	"regexp"
	"strings"
)

// Denials as programs print them: EACCES or EPERM with the path or address
// they were refused. Node.js: "EACCES: permission denied, open '/x'",
// "connect EACCES 127.0.0.1:5432"; Python: "[Errno 13] Permission denied:
// '/x'"; C tools: "cat: /x: Permission denied".
var (
	deniedPath = regexp.MustCompile(`(?i)(?:EACCES|EPERM|permission denied|operation not permitted)[^/'"]*['"]?(/[^'"\s:,)]*)|(/[^'"\s:,)]+)['"]?: (?:permission denied|operation not permitted)`)
	deniedAddr = regexp.MustCompile(`(?i)connect (?:EACCES|EPERM|ENETUNREACH) ([0-9A-Fa-f.:\[\]]+:[0-9]+)`)
	noDNS      = regexp.MustCompile(`(?i)(?:getaddrinfo )?EAI_AGAIN ([A-Za-z0-9.-]+)`)
)

// Explain returns Plexus's own line about a denial the server printed, ""
// if the line is not one. The kernel does not tell a process that Landlock
// refused it (only EACCES), so this reads what the server printed.
func (p *Policy) Explain(line string) string {
	if strings.HasPrefix(line, "sandbox: ") {
		return ""
	}
	if m := deniedAddr.FindStringSubmatch(line); m != nil {
		return "sandbox: denied connection to " + m[1] + " (" + p.networkWords() + ")"
	}
	if m := noDNS.FindStringSubmatch(line); m != nil && p.Network.Mode == NetworkNone {
		return "sandbox: denied resolving " + m[1] + " (network: none)"
	}
	if m := deniedPath.FindStringSubmatch(line); m != nil {
		path := m[1] + m[2]
		return "sandbox: denied access to " + path + " (not in the sandbox's folders)"
	}
	return ""
}

func (p *Policy) networkWords() string {
	switch p.Network.Mode {
	case NetworkNone:
		return "network: none"
	case NetworkList:
		var s []string
		for _, h := range p.Network.Allow {
			s = append(s, h.String())
		}
		return "allowed: " + strings.Join(s, ", ") + ", only through the sandbox's proxy, $HTTPS_PROXY"
	}
	return "network: all"
}
