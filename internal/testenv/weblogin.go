package testenv

import (
	"net/http"
	"strings"
)

// WebLogin logs in to the daemon's web page as `plexus ui` would, with a
// one-time link from `plexus ui --no-browser`, and returns the page's base
// URL and the session cookie.
func (e *Env) WebLogin() (string, *http.Cookie) {
	e.t.Helper()
	link := strings.TrimSpace(e.MustRun("ui", "--no-browser"))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(link)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		cookie = ck
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil {
		e.t.Fatalf("web login: %d, cookie %v", resp.StatusCode, cookie != nil)
	}
	return strings.SplitN(link, "/login", 2)[0], cookie
}
