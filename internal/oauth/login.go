package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/connlimit"
)

// loginRun is one login in progress: the pending flow and its loopback
// listener. It ends when the redirect arrives (on the listener or pasted
// back), when it expires, or when it is replaced or stopped.
type loginRun struct {
	pd    *Pending
	srv   *http.Server // the loopback listener's; nil for StartLoginAt
	timer *time.Timer
	// verify, if set, is run once the tokens are stored: it reaches the
	// server with them, and the login is done only if that succeeded.
	verify func() error

	mu   sync.Mutex // serialises completion: whichever redirect comes first wins
	done bool       // guarded by mu
}

func (r *loginRun) stop() {
	r.timer.Stop()
	if r.srv != nil {
		r.srv.Close()
	}
}

// StartLogin starts a login for p.Server: discovery and registration, then a
// listener on 127.0.0.1 for the redirect (on the port registered before if
// it is free, else a random one). It returns the URL a person opens. The
// login ends by itself after LoginTTL. verify (may be nil) is called once
// a redirect's tokens are stored, before the browser is answered: it
// reaches the server with them, and its error ends the login as failed
// (Status "checking" meanwhile). Only a redirect that carries the login's
// state reaches the login: anything else gets a page that says nothing,
// and the login waits on.
func (m *Manager) StartLogin(ctx context.Context, p LoginParams, verify func() error) (*Pending, error) {
	ln, err := m.listen(p.Server)
	if err != nil {
		return nil, fmt.Errorf("opening the loopback listener for the login: %w", err)
	}
	p.RedirectURI = "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/callback"
	return m.startRun(ctx, p, ln, verify)
}

// StartLoginAt is StartLogin for a browser that comes back to redirectURI,
// a page the daemon serves itself (CompleteRedirect), not a loopback
// listener: a team member's browser is not on the daemon's machine.
func (m *Manager) StartLoginAt(ctx context.Context, p LoginParams, redirectURI string, verify func() error) (*Pending, error) {
	p.RedirectURI = redirectURI
	return m.startRun(ctx, p, nil, verify)
}

// startRun begins p's login and keeps it as the account's login in
// progress; ln, if not nil, is its redirect listener.
func (m *Manager) startRun(ctx context.Context, p LoginParams, ln net.Listener, verify func() error) (*Pending, error) {
	m.mu.Lock()
	st := m.stateLocked(p.Server)
	if p.Challenge == nil {
		p.Challenge = st.challenge
	}
	want := st.want
	old := st.login
	st.login, st.loginErr, st.checking = nil, "", false
	m.mu.Unlock()
	if old != nil {
		old.stop()
	}
	pd, err := m.begin(ctx, p, want)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		m.mu.Lock()
		m.stateLocked(p.Server).loginErr = err.Error()
		m.mu.Unlock()
		m.changed(p.Server)
		return nil, err
	}
	run := &loginRun{pd: pd, verify: verify}
	if ln != nil {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("state") != run.pd.state {
				notThisLogin(w)
				return
			}
			connlimit.Prove(r.Context())
			m.answerRedirect(w, run, m.complete(context.WithoutCancel(r.Context()), run, "http://"+r.Host+r.URL.RequestURI()))
		})
		// Under connlimit's bounds, as every listener of the daemon: the
		// browser's return is one connection, which the login's state
		// proves; any more a local program opens are bounded, the oldest
		// closed first, each with the header and body deadlines.
		lim := connlimit.New(ln, "the login callback of "+p.Server, connlimit.Default(callbackConns), m.log)
		ln = lim
		run.srv = lim.Server(mux, nil, nil)
		// One request per connection: a kept-alive connection would outlive
		// the login and could reach the next login's listener on the same port.
		run.srv.SetKeepAlivesEnabled(false)
	}
	again := "run `plexus login " + p.Server + "` again"
	if server, user := SplitAccount(p.Server); user != "" {
		again = "call a tool of " + server + " again for a new login link"
	}
	run.timer = time.AfterFunc(m.loginTTL, func() {
		m.endRun(run, errors.New("the login expired before the browser came back: "+again))
	})
	m.mu.Lock()
	m.stateLocked(p.Server).login = run
	m.mu.Unlock()
	if run.srv != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			run.srv.Serve(ln)
		}()
	}
	m.changed(p.Server)
	return pd, nil
}

// answerRedirect tells the browser how the login it came back from ended.
func (m *Manager) answerRedirect(w http.ResponseWriter, run *loginRun, err error) {
	server, user := SplitAccount(run.pd.Server)
	who := server
	if user != "" {
		who = server + " as " + user
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>Plexus</title><p>Plexus could not log in to %s: %s</p>", html.EscapeString(who), html.EscapeString(err.Error()))
	} else {
		fmt.Fprintf(w, "<!doctype html><title>Plexus</title><p>Plexus is logged in to %s. You can close this tab.</p>", html.EscapeString(who))
	}
}

// notThisLogin answers a request to a login's redirect URI that does not
// carry the state of a login in progress: a stale, forged or mistyped
// redirect. It changes nothing and shows nothing of the request (whose
// error_description an attacker writes).
func notThisLogin(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprint(w, "<!doctype html><title>Plexus</title><p>This is not the return of a Plexus login in progress: nothing was changed. If you are logging in, use the link Plexus gave you.</p>")
}

// CompleteRedirect serves the browser's return to a redirect URI of
// StartLoginAt: the login in progress whose state the redirect carries is
// completed. A state no login holds is refused.
func (m *Manager) CompleteRedirect(w http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	var run *loginRun
	m.mu.Lock()
	for _, st := range m.servers {
		if l := st.login; l != nil && l.srv == nil && state != "" && l.pd.state == state {
			run = l
		}
	}
	m.mu.Unlock()
	if run == nil {
		notThisLogin(w)
		return
	}
	u, _ := url.Parse(run.pd.RedirectURI)
	u.RawQuery = r.URL.RawQuery
	m.answerRedirect(w, run, m.complete(context.WithoutCancel(r.Context()), run, u.String()))
}

// listen opens the redirect listener, preferring the port of the
// registration kept for server: a dynamically registered client names its
// redirect URI, and reusing it spares a new registration.
func (m *Manager) listen(server string) (net.Listener, error) {
	if e := m.entryFor(server); e != nil {
		for _, ru := range e.Client.RedirectURIs {
			if u, err := url.Parse(ru); err == nil && u.Hostname() == "127.0.0.1" && u.Port() != "" {
				if ln, err := net.Listen("tcp", "127.0.0.1:"+u.Port()); err == nil {
					return ln, nil
				}
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// callbackConns bounds the connections of a login's redirect listener:
// a browser's return needs one.
const callbackConns = 32

var errLoginOver = errors.New("this login is over: start a new one with `plexus login NAME`")

// errNotThisLogin refuses a redirect that does not carry the state of the
// login it was given to; the login goes on.
var errNotThisLogin = errors.New("the address does not carry this login's state (a stale, forged or mistyped redirect): nothing was changed; paste the address the browser reached after this login")

// CompleteLogin completes server's login with the URL the browser was
// redirected to, pasted by a person.
func (m *Manager) CompleteLogin(ctx context.Context, server, redirected string) error {
	m.mu.Lock()
	var run *loginRun
	if st := m.servers[server]; st != nil {
		run = st.login
	}
	m.mu.Unlock()
	if run == nil {
		return fmt.Errorf("no login of %s is in progress: start one with `plexus login %s`", server, server)
	}
	return m.complete(ctx, run, redirected)
}

// complete ends run with the redirect the browser reached (or a person
// pasted): the code is exchanged, the tokens stored, and the server
// reached with them (run.verify). A redirect without the login's state
// changes nothing.
func (m *Manager) complete(ctx context.Context, run *loginRun, redirected string) error {
	if u, err := url.Parse(strings.TrimSpace(redirected)); err != nil || u.Query().Get("state") != run.pd.state {
		return errNotThisLogin
	}
	run.mu.Lock()
	if run.done {
		run.mu.Unlock()
		return errLoginOver
	}
	account := run.pd.Server
	e, err := m.finish(ctx, run.pd, redirected)
	if err == nil {
		err = m.store(e)
	}
	run.done = true
	if err == nil && run.verify != nil {
		m.mu.Lock()
		m.stateLocked(account).checking = true
		m.mu.Unlock()
	}
	m.endRunLocked(run, err)
	run.mu.Unlock()
	if err != nil {
		m.auditLogin(ctx, account, "authorization_code", err)
		return err
	}
	if run.verify != nil {
		err = run.verify()
		m.mu.Lock()
		st := m.stateLocked(account)
		st.checking = false
		if err != nil {
			st.loginErr = err.Error()
		}
		m.mu.Unlock()
		m.changed(account)
	}
	m.auditLogin(ctx, account, "authorization_code", err)
	if err != nil {
		m.log.Warn("OAuth login got tokens the server did not take", "server", account, "err", err)
		return err
	}
	m.log.Info("OAuth login completed", "server", account, "issuer", e.Issuer, "refreshToken", e.Token.Refresh != "", "expires", e.Token.Expiry)
	return nil
}

func (m *Manager) endRun(run *loginRun, err error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.done {
		return
	}
	run.done = true
	m.endRunLocked(run, err)
}

// endRunLocked stops run and records its outcome. run.mu is held.
func (m *Manager) endRunLocked(run *loginRun, err error) {
	server := run.pd.Server
	m.mu.Lock()
	if st := m.servers[server]; st != nil && st.login == run {
		st.login = nil
		st.loginErr = ""
		if err != nil {
			st.loginErr = err.Error()
		}
	}
	m.mu.Unlock()
	run.timer.Stop()
	if run.srv == nil {
		m.changed(server)
		return
	}
	// Shut down from another goroutine: this may run inside the listener's
	// handler, whose answer must still reach the browser.
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if run.srv.Shutdown(ctx) != nil {
			run.srv.Close()
		}
	}()
	m.changed(server)
}
