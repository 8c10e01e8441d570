package sandbox

import (
	"os"
	"slices"
)

// Command is the hidden subcommand of the plexus binary that runs [Main].
const Command = "__plexus-sandbox"

// LauncherArgs is the argv that runs path with args under p: plexus is the
// plexus binary (or any binary whose main calls [Main] for [Command]).
func LauncherArgs(p *Policy, plexus, path string, args []string) ([]string, error) {
	own := *p
	own.UID, own.GID = os.Getuid(), os.Getgid()
	enc, err := own.encode()
	if err != nil {
		return nil, err
	}
	return slices.Concat([]string{plexus, Command, enc, "--", path}, args), nil
}
