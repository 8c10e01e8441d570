package testenv

import (
	"net/http"
	"strings"
)

// WebLogin logs in to the daemon's web page as `plexus ui` would, with a
// one-time link from `plexus ui --no-browser`, and returns the page's base
// URL and the session cookie. The cookie alone opens no API call: see
// WebLoginToken.
func (e *Env) WebLogin() (string, *http.Cookie) {
	e.t.Helper()
	base, cookie, _ := e.WebLoginToken()
	return base, cookie
}

// WebLoginToken is WebLogin that also returns the session's page token,
// which the page sends as X-Plexus-Page-Token on every API call (and the
// event stream as ?page_token=). The login redirect carries it in the
// fragment of its Location.
func (e *Env) WebLoginToken() (base string, cookie *http.Cookie, token string) {
	e.t.Helper()
	link := strings.TrimSpace(e.MustRun("ui", "--no-browser"))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(link)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		cookie = ck
	}
	token, ok := strings.CutPrefix(resp.Header.Get("Location"), "/#page_token=")
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || !ok {
		e.t.Fatalf("web login: %d, cookie %v, redirect %q", resp.StatusCode, cookie != nil, resp.Header.Get("Location"))
	}
	return strings.SplitN(link, "/login", 2)[0], cookie, token
}
