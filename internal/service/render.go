package service

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// description is every manager's one line about the service.
const description = "Plexus, the daemon that owns your MCP servers"

// checkSpec refuses what no service file can hold: relative paths, and
// line breaks or NULs, which would end a line of a unit or a script.
func checkSpec(s Spec) error {
	for _, f := range []struct{ name, v string }{{"the plexus binary", s.Exe}, {"PLEXUS_HOME", s.Home}} {
		if f.v == "" || !(filepath.IsAbs(f.v) || isWindowsAbs(f.v)) {
			return fmt.Errorf("%s must be an absolute path, not %q", f.name, f.v)
		}
	}
	for _, v := range []string{s.Exe, s.Home, s.User, s.UserHome} {
		if strings.ContainsAny(v, "\r\n\x00") {
			return errors.New("a path or user name holds a line break: no service file can hold it")
		}
	}
	if s.Listen != "" && strings.Trim(s.Listen, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:[]-") != "" {
		return fmt.Errorf("--listen takes HOST:PORT or off, not %q", s.Listen)
	}
	return nil
}

// daemonArgs are the arguments of `plexus daemon` in the service.
func daemonArgs(s Spec) []string {
	if s.Listen == "" {
		return []string{"daemon"}
	}
	return []string{"daemon", "--listen", s.Listen}
}

func isWindowsAbs(p string) bool {
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// SystemdUnit renders the systemd user unit. Output goes to the journal
// (journalctl --user -u plexus); systemd restarts the daemon when it
// fails, not when it is stopped.
func SystemdUnit(s Spec) (string, error) {
	if err := checkSpec(s); err != nil {
		return "", err
	}
	return `[Unit]
Description=` + description + `
Documentation=https://github.com/plexus-mcp/plexus
After=network-online.target

[Service]
Type=simple
ExecStart=` + systemdQuote(s.Exe, true) + ` ` + strings.Join(daemonArgs(s), " ") + `
Environment=` + systemdQuote("PLEXUS_HOME="+s.Home, false) + `
Restart=on-failure
RestartSec=2s
# Let the daemon stop its servers in order before systemd steps in.
KillMode=mixed
TimeoutStopSec=30s

[Install]
WantedBy=default.target
`, nil
}

// systemdQuote quotes v for a unit file: backslash and quote escaped, %
// doubled (specifiers), and $ doubled where the line expands variables.
func systemdQuote(v string, expands bool) string {
	r := []string{`\`, `\\`, `"`, `\"`, "%", "%%"}
	if expands {
		r = append(r, "$", "$$")
	}
	return `"` + strings.NewReplacer(r...).Replace(v) + `"`
}

// LaunchdLogs is where the launchd agent writes the daemon's output:
// ~/Library/Logs, which Console.app shows.
func LaunchdLogs(userHome string) string {
	return filepath.Join(userHome, "Library", "Logs", "Plexus", "plexus.log")
}

// LaunchdPlist renders the launchd agent. launchd starts it at login and
// again whenever it exits unsuccessfully (KeepAlive SuccessfulExit false),
// at most every ThrottleInterval seconds.
func LaunchdPlist(s Spec) (string, error) {
	if err := checkSpec(s); err != nil {
		return "", err
	}
	logs := xmlEscape(LaunchdLogs(s.UserHome))
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + Label + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + xmlEscape(s.Exe) + `</string>` + plistStrings(daemonArgs(s)) + `
	</array>
	<key>EnvironmentVariables</key>
	<dict>
		<key>PLEXUS_HOME</key>
		<string>` + xmlEscape(s.Home) + `</string>
	</dict>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ThrottleInterval</key>
	<integer>5</integer>
	<key>StandardOutPath</key>
	<string>` + logs + `</string>
	<key>StandardErrorPath</key>
	<string>` + logs + `</string>
</dict>
</plist>
`, nil
}

// TaskXML renders the Windows scheduled task: started at the user's logon,
// restarted every minute after a failure, never stopped for running long.
// A task has no environment of its own, so the daemon uses its default
// home unless PLEXUS_HOME is set in the user's environment (Schtasks says
// so). Its logs are the daemon's own, logs.jsonl in the home.
func TaskXML(s Spec) (string, error) {
	if err := checkSpec(s); err != nil {
		return "", err
	}
	return `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>` + description + `</Description>
    <URI>\Plexus</URI>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>` + xmlEscape(s.User) + `</UserId>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>` + xmlEscape(s.User) + `</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <StartWhenAvailable>true</StartWhenAvailable>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>999</Count>
    </RestartOnFailure>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>` + xmlEscape(s.Exe) + `</Command>
      <Arguments>` + strings.Join(daemonArgs(s), " ") + `</Arguments>
    </Exec>
  </Actions>
</Task>
`, nil
}

// RCScript renders the FreeBSD rc.d script. daemon(8) runs plexus as the
// user, restarts it 5 seconds after it exits (-r -R 5) and sends its output
// to syslog (-S), so it lands in /var/log/messages.
func RCScript(s Spec) (string, error) {
	if err := checkSpec(s); err != nil {
		return "", err
	}
	if s.User == "" {
		return "", errors.New("the rc.d script needs the user to run the daemon as")
	}
	return `#!/bin/sh
#
# PROVIDE: plexus
# REQUIRE: LOGIN NETWORKING
# KEYWORD: shutdown
#
# ` + description + `.
# Enable with: sysrc plexus_enable=YES

. /etc/rc.subr

name=plexus
rcvar=plexus_enable

load_rc_config $name

: ${plexus_enable:=NO}
: ${plexus_user:=` + shellQuote(s.User) + `}
: ${plexus_home:=` + shellQuote(s.Home) + `}

pidfile="/var/run/${name}.pid"
procname=/usr/sbin/daemon
command=/usr/sbin/daemon
command_args="-r -R 5 -S -T ${name} -P ${pidfile} -u ${plexus_user} /usr/bin/env PLEXUS_HOME=\"${plexus_home}\" ` + shellQuote(s.Exe) + ` ` + strings.Join(daemonArgs(s), " ") + `"

run_rc_command "$1"
`, nil
}

// shellQuote quotes v for sh, in single quotes unless it is plain.
func shellQuote(v string) string {
	if v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == "" {
		return v
	}
	return `'` + strings.ReplaceAll(v, `'`, `'\''`) + `'`
}

// plistStrings are <string> lines of the arguments, each on its own line.
func plistStrings(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString("\n\t\t<string>" + xmlEscape(a) + "</string>")
	}
	return b.String()
}

func xmlEscape(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(v)
}
