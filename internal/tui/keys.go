package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// keyMap is every key of the list screen. The form has its own few, handled
// in form.go and listed in help.
type keyMap struct {
	Up, Down, New, Search, Edit, Delete, Toggle, Enable, Restart, Login, Review, Settings, Help, Quit key.Binding
}

func newKeyMap() keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return keyMap{
		Up:       b([]string{"up", "k"}, "↑/k", "move up"),
		Down:     b([]string{"down", "j"}, "↓/j", "move down"),
		New:      b([]string{"n"}, "n", "new"),
		Search:   b([]string{"/"}, "/", "find in the registry"),
		Edit:     b([]string{"enter"}, "enter", "edit"),
		Delete:   b([]string{"d"}, "d", "delete"),
		Toggle:   b([]string{"space"}, "space", "on/off"),
		Enable:   b([]string{"e"}, "e", "enable"),
		Restart:  b([]string{"r"}, "r", "restart"),
		Login:    b([]string{"l"}, "l", "login"),
		Review:   b([]string{"a"}, "a", "review"),
		Settings: b([]string{"s"}, "s", "settings"),
		Help:     b([]string{"?"}, "?", "help"),
		Quit:     b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// footer renders the keys that matter now, as "n new · d delete".
func footer(bs ...key.Binding) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		h := b.Help()
		parts = append(parts, styleKey.Render(h.Key)+" "+h.Desc)
	}
	return strings.Join(parts, " · ")
}

// footerKeys renders pairs of a key and what it does.
func footerKeys(pairs ...string) string {
	bs := make([]key.Binding, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		bs = append(bs, key.NewBinding(key.WithHelp(pairs[i], pairs[i+1])))
	}
	return footer(bs...)
}

// helpText is the `?` screen.
const helpText = `Keys on the list
  ↑ ↓  k j     move between servers
  n            add a server: opens the form
  /            find a server in the MCP registry, and add it with the form
  enter        edit the selected server in the same form
  d            delete it and its credentials (asks first)
  space  e     switch it on or off; e switches it on
  r            restart it now
  l            log in to a server that needs OAuth: shows the URL to open
  a            review a changed tool or a pending server, then accept
  s            settings: external calls, writes and timeouts
  ?            this help          q  ctrl+c   quit

Keys in the form
  ← →          switch the transport (http or stdio), the OAuth grant and
               client auth of a URL server, the sandbox of a stdio one
  tab ↓ ↑      next and previous field
  ctrl+s       save (or enter on the last field); esc cancels
  Nothing is written until you save, and not if the server cannot start.
  Secrets are masked; editing, a blank secret keeps the stored one and -
  removes it. Env entries are KEY=value, separated by spaces; sandbox
  folders are quoted as in a shell, network is none, all or host:port.

Press any key to close this help.`
