package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
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
	tr     *peer.Transport
	db     *pgstore.Store
	calls  *channelCalls
	log    *slog.Logger
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

// AlivePath answers, on the channel, a replica asking whether this one
// runs (Owners, before it takes a lease whose renewals stopped).
const alivePath = "/peer/alive"

// peerChannel opens the internal channel of po on the database store db:
// it listens (TLS, under a certificate made now, whose SHA-256 goes in
// this replica's sealed row), names this replica in the face's session
// ids, and puts the router in front of the face, so that a session
// another replica holds is served there. Every request on it carries a
// MAC of its own (peer.Guard). Without po.Listen it does nothing:
// one-machine mode, and a store without the channel, are as they were.
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
	cert, fp, err := peer.NewCertificate()
	if err != nil {
		return nil, fmt.Errorf("the internal channel's certificate: %w", err)
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
	keys := peer.NewKeys(db.Derive(peer.KeyLabel))
	self := peer.NewReplicaID()
	reg := peer.NewRegistry(replicaTable{db}, self, adv, fp, log)
	tr := peer.NewTransport(keys, self, peer.DirectTransport(reg.Find))
	owners := peer.NewOwners(leaseTable{db}, reg, self, p.stdioServers, prober(tr), log)
	p.h.SetPlacement(placement{owners, tr})
	p.fc.NameSessions(func() string { return peer.NewSessionID(self) })
	p.h.NameResults(func() string { return peer.NewSessionID(self) })
	router := peer.NewRouter(reg, tr, p.fc, log)
	router.ResultsURI = host.ResultsURI
	p.mcp = router
	p.team.route = p.mcp
	mux := http.NewServeMux()
	routed := http.HandlerFunc(p.team.serveRouted)
	mux.Handle(face.Path, routed)
	mux.Handle(face.Path+"/", routed)
	calls := &channelCalls{}
	mux.Handle(peer.ServerPath+"{server}", calls.serve(owners.ServeOwned(p.h.RunsHere, p.serveServer)))
	mux.HandleFunc("GET "+alivePath, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	// What the channel's credential admits is proven (connlimit): the
	// rest of the channel's connections are bounded as the other
	// listeners' are (limits.go), the TLS handshake within the header
	// timeout.
	l := limitTCP(ln, "the internal channel", log)
	srv := l.Server(peer.NewGuard(keys, self, log, connlimit.Proven(mux)), slog.NewLogLogger(log.Handler(), slog.LevelWarn), nil)
	srv.TLSConfig = peer.ServerTLS(cert)
	return &peerServer{srv: srv, ln: tls.NewListener(l, srv.TLSConfig), reg: reg, owners: owners, tr: tr, db: db, calls: calls, log: log}, nil
}

// serveServer serves a stdio server this replica runs to another replica,
// as a bare profile: when the request names a member, only one of the
// profiles that list the server admits (as the replica that forwarded it
// checked already). Its results go back whole: the replica the client
// called caps them and keeps them where its client reads.
func (p *parts) serveServer(w http.ResponseWriter, r *http.Request, server string) {
	if id, ok := caller.From(r.Context()); ok && !p.h.Admitted(id, server) {
		http.Error(w, "plexus: no profile that has this server is open to you", http.StatusForbidden)
		return
	}
	p.fc.ServeServer(w, r.WithContext(host.CappedByCaller(r.Context())), server)
}

// prober asks a lease's owner on the channel whether it runs: an answer
// within a second says it does.
func prober(tr *peer.Transport) func(context.Context, peer.Lease) bool {
	hc := &http.Client{Timeout: time.Second}
	return func(ctx context.Context, l peer.Lease) bool {
		if l.Addr == "" {
			return false
		}
		req, err := http.NewRequestWithContext(ctx, "GET", "https://"+l.Addr+alivePath, nil)
		if err != nil {
			return false
		}
		hc.Transport = tr.ForReplica(l.Owner)
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// start records this replica and claims the leases it can before the
// servers start, so that each starts where it runs.
func (pc *peerServer) start(ctx context.Context) {
	pc.reg.Beat(ctx)
	pc.owners.Claim(ctx)
}

// drain marks this replica as being stopped and hands its stdio servers
// over to the others, serving them until they run them (drainWait at
// most), so that a clean stop moves them without a gap.
func (pc *peerServer) drain(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, drainWait)
	defer cancel()
	pc.reg.Drain(ctx)
	pc.owners.Drain(ctx, pc.serving)
}

// drainWait bounds how long a clean stop waits for the others to take its
// servers and run them.
const drainWait = 10 * time.Second

// serving reports whether l's owner serves its server now: a request
// there is not refused (it runs the process itself).
func (pc *peerServer) serving(ctx context.Context, l peer.Lease) bool {
	if l.Addr == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "https://"+l.Addr+peer.ServerPath+l.Server, nil)
	if err != nil {
		return false
	}
	req.Header.Set(peer.TokenHeader, strconv.FormatInt(l.Token, 10))
	resp, err := pc.tr.ForReplica(l.Owner).RoundTrip(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
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
// replicas go by the channel's transport.
type placement struct {
	o  *peer.Owners
	tr *peer.Transport
}

func (pl placement) Place(server string) (*host.Remote, error) {
	at, err := pl.o.Place(server)
	if err != nil || at.Here {
		return nil, err
	}
	h := http.Header{}
	h.Set(peer.TokenHeader, strconv.FormatInt(at.Token, 10))
	return &host.Remote{Replica: at.Owner, URL: "https://" + at.Addr + peer.ServerPath + server, Headers: h,
		Transport: pl.tr.ForReplica(at.Owner)}, nil
}

// leaseTable is peer.LeaseTable on the database store.
type leaseTable struct{ db *pgstore.Store }

func (t leaseTable) Claim(ctx context.Context, self string, servers []string, ttl time.Duration, take func(peer.Lease) bool) (map[string]peer.Lease, error) {
	got, err := t.db.Claim(ctx, self, servers, ttl, func(l pgstore.Lease) bool { return take(peer.Lease(l)) })
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

// replicaTable is peer.Table on the database store.
type replicaTable struct{ db *pgstore.Store }

func (t replicaTable) Beat(ctx context.Context, r peer.Replica) error {
	return t.db.Beat(ctx, pgstore.Replica(r))
}

func (t replicaTable) Replicas(ctx context.Context, within time.Duration) (map[string]peer.Replica, error) {
	got, err := t.db.Replicas(ctx, within)
	if err != nil {
		return nil, err
	}
	out := make(map[string]peer.Replica, len(got))
	for id, r := range got {
		out[id] = peer.Replica(r)
	}
	return out, nil
}

func (t replicaTable) Leave(ctx context.Context, id string) error { return t.db.Leave(ctx, id) }

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
