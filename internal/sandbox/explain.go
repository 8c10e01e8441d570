package sandbox

import (
	"regexp"
	"strings"
)

// Denials as programs print them: EACCES or EPERM with the path or address
// they were refused. Node.js: "EACCES: permission denied, open '/x'",
// "connect EACCES 127.0.0.1:5432", "connect EPERM /run/docker.sock"; Go:
// "dial unix /x: socket: operation not permitted"; Python: "[Errno 13]
// Permission denied: '/x'"; C tools: "cat: /x: Permission denied"; npm and
// uv without a network, and the package not in their cache: "request to
// https://registry.npmjs.org/x failed: cache mode is 'only-if-cached'…",
// "Network connectivity is disabled, but … `https://pypi.org/simple/x/`".
var (
	deniedUnix = regexp.MustCompile(`(?i)connect E(?:PERM|ACCES) (/[^\s'",)]*)|dial unix (\S+): socket: operation not permitted`)
	deniedPath = regexp.MustCompile(`(?i)(?:EACCES|EPERM|permission denied|operation not permitted)[^/'"]*['"]?(/[^'"\s:,)]*)|(/[^'"\s:,)]+)['"]?: (?:permission denied|operation not permitted)`)
	deniedAddr = regexp.MustCompile(`(?i)connect (?:EACCES|EPERM|ENETUNREACH) ([0-9A-Fa-f.:\[\]]+:[0-9]+)`)
	noDNS      = regexp.MustCompile(`(?i)(?:getaddrinfo )?EAI_AGAIN ([A-Za-z0-9.-]+)`)
	noFetch    = regexp.MustCompile("(?i)(?:request to (https?)://([^/\\s'\"`]+)\\S* failed: cache mode is 'only-if-cached'|network connectivity is disabled.*?(https?)://([^/\\s'\"`]+))")
)

// Explain returns Plexus's own line about a denial the server printed, ""
// if the line is not one. The kernel does not tell a process that Landlock
// refused it (only EACCES), so this reads what the server printed. A line
// the user can act on ends in the flag that would allow it (see Remedy).
func (p *Policy) Explain(line string) string {
	if strings.HasPrefix(line, "sandbox: ") {
		return ""
	}
	if m := noFetch.FindStringSubmatch(line); m != nil && p.Network.Mode == NetworkNone {
		hp := hostPort(m[1]+m[3], m[2]+m[4])
		return "sandbox: the package manager cannot fetch from " + hp + " (network: none, so it runs from the user's cache, which does not hold the package; " + allowNet(hp) + ")"
	}
	if m := deniedUnix.FindStringSubmatch(line); m != nil {
		return "sandbox: denied the unix socket " + m[1] + m[2] + " (a sandboxed server reaches no unix socket; " + p.unconfined() + ")"
	}
	if m := deniedAddr.FindStringSubmatch(line); m != nil {
		return "sandbox: denied connection to " + m[1] + " (" + p.networkWords() + "; " + allowNet(m[1]) + ")"
	}
	if m := noDNS.FindStringSubmatch(line); m != nil && p.Network.Mode == NetworkNone {
		return "sandbox: denied resolving " + m[1] + " (network: none; " + allowNet(m[1]+":PORT") + ")"
	}
	if m := deniedPath.FindStringSubmatch(line); m != nil {
		path := m[1] + m[2]
		return "sandbox: denied access to " + path + " (not in the sandbox's folders; " + allowFlag + "read " + path + " allows it)"
	}
	return ""
}

// The endings of Plexus's lines that name what would allow a denial.
const (
	allowFlag = "--allow-"
	noSandbox = "only without --sandbox would it"
	// optOut is noSandbox for a team replica's default sandbox
	// (Policy.Default), which no --sandbox asked for.
	optOut = `only "sandbox": false in its settings would let it, as a team's replica sandboxes every stdio server by default`
)

// unconfined is the ending of a line about what no sandbox allows: how to
// run the server without one.
func (p *Policy) unconfined() string {
	if p.Default {
		return optOut
	}
	return noSandbox
}

// allowNet is the advice that allows hp, through the proxy.
func allowNet(hp string) string {
	return allowFlag + "net " + hp + " allows it, through Plexus's proxy"
}

// deniedConnect is Plexus's line about a destination the proxy refused,
// from the proxy's own ("sandbox: denied connect to HOST:PORT").
func deniedConnect(proxyLine string) string {
	hp, ok := strings.CutPrefix(proxyLine, "sandbox: denied connect to ")
	if !ok {
		return proxyLine
	}
	return proxyLine + " (not on the server's list; " + allowNet(hp) + ")"
}

// hostPort is a URL's host with the scheme's port unless it has one.
func hostPort(scheme, host string) string {
	if strings.Contains(strings.TrimPrefix(host, "["), ":") && !strings.HasSuffix(host, "]") {
		return host
	}
	if strings.EqualFold(scheme, "http") {
		return host + ":80"
	}
	return host + ":443"
}

var remedyFlag = regexp.MustCompile(`--allow-(net|read) (\S+) allows it`)

// Remedy reads Plexus's own sandbox lines among server name's last stderr
// lines (newest last) and returns advice for a server that could not
// start: the flag that would allow what the sandbox refused last, "" if
// none is there.
func Remedy(name string, lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if !strings.HasPrefix(line, "sandbox: ") {
			continue
		}
		if m := remedyFlag.FindStringSubmatch(line); m != nil {
			flag := "--allow-" + m[1] + " " + m[2]
			return "the sandbox refused it (`plexus logs " + name + "` shows the line): give it `" + flag + "`, on `plexus add` or with `plexus edit " + name + " " + flag + "` once saved"
		}
		if strings.Contains(line, noSandbox) {
			return "the sandbox refused a unix socket, which no sandboxed server reaches: add the server without --sandbox if you trust it"
		}
		if strings.Contains(line, optOut) {
			return `the sandbox a team's replica gives every stdio server refused a unix socket, which no sandboxed server reaches: set "sandbox": false in its settings if you trust it (docs/team.md)`
		}
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
