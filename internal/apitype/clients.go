package apitype

// ClientList is GET /v1/clients: the MCP clients whose settings files the
// daemon knows (those `plexus connect` writes), as found on this machine,
// for the web page's import and connect.
type ClientList struct {
	// Available is false when the daemon does not read or write people's
	// client files (Reason says why: a team's daemon, say); Clients is then
	// empty.
	Available bool         `json:"available"`
	Reason    string       `json:"reason,omitempty"`
	Clients   []ClientFile `json:"clients"`
}

// ClientFile is one client's user settings file.
type ClientFile struct {
	// Client is the name connect and import take (claude, cursor, …);
	// Title its name for people.
	Client string `json:"client"`
	Title  string `json:"title"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Connected: the file has Plexus's entry as connect writes it.
	Connected bool `json:"connected"`
	// Servers are the names of the client's own MCP servers in it.
	Servers []string `json:"servers"`
	// Error says why the file cannot be read or edited (malformed, a
	// link leading out of the home).
	Error string `json:"error,omitempty"`
}

// ClientImportRequest is POST /v1/clients/{client}/import: import the
// servers of that client's file, which the daemon reads itself.
type ClientImportRequest struct {
	DryRun  bool `json:"dryRun,omitempty"`
	Sandbox bool `json:"sandbox,omitempty"`
}

// ClientConnectRequest is POST /v1/clients/{client}/connect: register
// Plexus in the client's user settings file, as `plexus connect` does.
type ClientConnectRequest struct {
	// DryRun shows the change and writes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// Base is the ClientConnectResult.Base of the diff a person was shown:
	// a write is refused (409) if the file changed since, so that what is
	// written is what was shown. Required unless DryRun.
	Base string `json:"base,omitempty"`
}

// ClientConnectResult answers ClientConnectRequest.
type ClientConnectResult struct {
	Client string `json:"client"`
	Title  string `json:"title"`
	Path   string `json:"path"`
	// Changed is false when the file already runs Plexus.
	Changed bool `json:"changed"`
	// Diff is the change, the values of the user's other entries masked.
	Diff string `json:"diff,omitempty"`
	// Base identifies the file's content the diff was made of.
	Base string `json:"base"`
	// Written says the file was written; Backup is where the file before
	// is kept ("" for a new file).
	Written bool   `json:"written,omitempty"`
	Backup  string `json:"backup,omitempty"`
	// AllowExternalCall is the face's gate: while it is off the client
	// sees only plexus_status and plexus_snapshot.
	AllowExternalCall bool `json:"allowExternalCall"`
}
