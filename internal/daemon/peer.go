package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/connlimit"
	"github.com/plexus-mcp/plexus/internal/face"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/peer"
	"github.com/plexus-mcp/plexus/internal/pgstore"
)

// PeerOptions are the internal channel between the replicas of a team
// (docs/team.md): plexus daemon --peer-listen, --peer-advertise.
type PeerOptions struct {
	// Listen is the channel's listening address; "" for no channel.
	Listen string
	// Advertise is the HOST:PORT the other replicas dial; "" for
	// Listen's address.
	Advertise string
}

// peerServer is the internal channel: its listener, its server, and this
// replica's entry among the replicas. A nil *peerServer is no channel.
type peerServer struct {
	srv    *http.Server
	ln     net.Listener
	reg    *peer.Registry
	owners *peer.Owners
	db     *pgstore.Store
}

func (pc *peerServer) id() string {
	if pc == nil {
		return ""
	}
	return pc.reg.Self
}

func (pc *peerServer) advertised() string {
	if pc == nil {
		return ""
	}
	return pc.reg.Advertised
}

// close closes the listener of a channel that never served.
func (pc *peerServer) close() {
	if pc != nil {
		pc.ln.Close()
	}
}

// peerChannel opens the internal channel of po on the database store db:
// it listens, names this replica in the face's session ids, and puts the
// router in front of the face, so that a session another replica holds
// is served there. Without po.Listen it does nothing: one-machine mode,
// and a store without the channel, are as they were.
func (p *parts) peerChannel(po PeerOptions, db *pgstore.Store) (*peerServer, error) {
	if po.Listen == "" {
		if po.Advertise != "" {
			return nil, errors.New("--peer-advertise needs --peer-listen")
		}
		return nil, nil
	}
	if db == nil {
		return nil, errors.New("--peer-listen needs --store: the replicas find each other in the database store")
	}
	ln, err := net.Listen("tcp", po.Listen)
	if err != nil {
		return nil, fmt.Errorf("--peer-listen %s: %w", po.Listen, err)
	}
	adv, err := advertise(po.Advertise, ln.Addr())
	if err != nil {
		ln.Close()
		return nil, err
	}
	log := p.log.With("component", "peer")
	creds := peer.NewCredentials(db.Derive(peer.CredentialLabel))
	self := peer.NewReplicaID()
	reg := peer.NewRegistry(db, pgstore.ErrNoReplica, self, adv, log)
	owners := peer.NewOwners(leaseTable{db}, creds, self, p.stdioServers, log)
	p.h.SetPlacement(placement{owners, peer.DirectTransport()})
	p.fc.NameSessions(func() string { return peer.NewSessionID(self) })
	p.mcp = peer.NewRouter(reg, creds, p.fc, log)
	p.team.route = p.mcp
	mux := http.NewServeMux()
	// What the channel's credential admits is proven (connlimit): the
	// rest of the channel's connections are bounded as the other
	// listeners' are (limits.go).
	routed := peer.Guard(creds, log, connlimit.Proven(http.HandlerFunc(p.team.serveRouted)))
	mux.Handle(face.Path, routed)
	mux.Handle(face.Path+"/", routed)
	mux.Handle(peer.ServerPath+"{server}", peer.Guard(creds, log, connlimit.Proven(owners.ServeOwned(p.fc.ServeServer))))
	mux.Handle("/", peer.Guard(creds, log, http.NotFoundHandler()))
	l := limitTCP(ln, "the internal channel", log)
	srv := l.Server(mux, slog.NewLogLogger(log.Handler(), slog.LevelWarn), nil)
	return &peerServer{srv: srv, ln: l, reg: reg, owners: owners, db: db}, nil
}

// start records this replica and claims the leases it can before the
// servers start, so that each starts where it runs.
func (pc *peerServer) start(ctx context.Context) {
	pc.reg.Beat(ctx)
	pc.owners.Claim(ctx)
}

// stdioServers are the servers that run on one replica at a time: the
// enabled stdio servers.
func (p *parts) stdioServers() []string {
	var out []string
	cfg := p.h.LiveConfig()
	for name, sc := range cfg.MCP.Servers {
		if sc.Type == config.TypeStdio && sc.IsEnabled() {
			out = append(out, name)
		}
	}
	return out
}

// placement is host.Placement by the leases; the connections to other
// replicas go by tr.
type placement struct {
	o  *peer.Owners
	tr http.RoundTripper
}

func (pl placement) Place(server string) (*host.Remote, error) {
	url, hdr, owner, err := pl.o.Place(server)
	if err != nil || url == "" {
		return nil, err
	}
	return &host.Remote{Replica: owner, URL: url, Headers: hdr, Transport: pl.tr}, nil
}

// leaseTable is peer.LeaseTable on the database store.
type leaseTable struct{ db *pgstore.Store }

func (t leaseTable) Claim(ctx context.Context, servers []string, self string, ttl time.Duration) (map[string]peer.Lease, error) {
	got, err := t.db.Claim(ctx, servers, self, ttl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]peer.Lease, len(got))
	for name, l := range got {
		out[name] = peer.Lease(l)
	}
	return out, nil
}

func (t leaseTable) Release(ctx context.Context, servers []string, self string) error {
	return t.db.Release(ctx, servers, self)
}

// advertise is the address the other replicas dial: flag, or else the
// listener's own, which must then be one they can dial.
func advertise(flag string, ln net.Addr) (string, error) {
	if flag != "" {
		if _, _, err := net.SplitHostPort(flag); err != nil {
			return "", fmt.Errorf("--peer-advertise %q: %w", flag, err)
		}
		return flag, nil
	}
	a, ok := ln.(*net.TCPAddr)
	if !ok || a.IP.IsUnspecified() {
		return "", fmt.Errorf("--peer-listen %s listens on every address: give --peer-advertise HOST:PORT, the address the other replicas dial", ln)
	}
	return a.String(), nil
}
