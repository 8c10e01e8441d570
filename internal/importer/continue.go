package importer

// ---- Continue (~/.continue/config.yaml, .continue/mcpServers/*.yaml) ----

// Continue lists its servers as blocks under mcpServers, each with its
// name, and refers to its own secrets as ${{ secrets.NAME }}.
func continueServers(root *node) (*found, error) {
	if err := rootObject(root, "a YAML mapping"); err != nil {
		return nil, err
	}
	var list *node
	for _, m := range root.members {
		if m.key == "mcpServers" && !m.dup {
			list = m.val
		}
	}
	switch {
	case list == nil:
		return nil, &Error{Msg: "no mcpServers list" + elsewhere(root)}
	case list.kind == nullKind:
		return &found{}, nil
	case list.kind != arrayKind:
		return nil, &Error{Path: "mcpServers", Line: list.line, Msg: "want a list of server blocks, not " + article(list.kind.String())}
	}
	return &found{entries: listEntries(list, "mcpServers", "name", continueEntry)}, nil
}

func continueEntry(o *obj) rawServer {
	r := commandEntry(o)
	r.url = o.str("url")
	if ro := o.object("requestOptions"); ro != nil {
		r.headers = ro.strMap("headers")
		for _, k := range ro.rest() {
			r.note("skipped field requestOptions.%s: Plexus has no such setting", k)
		}
		o.bad = append(o.bad, ro.bad...)
	}
	if sec, ok := o.number("connectionTimeout"); ok {
		r.startupMs = r.seconds("connectionTimeout", sec/1000, true)
	}
	o.skipFields(&r, nil, cosmetic...)
	r.bad = o.bad
	return r
}
