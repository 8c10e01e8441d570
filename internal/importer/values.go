package importer

import (
	"encoding/base64"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
)

// How a builder turns the values of an entry into Plexus values: references
// stay references, literals become managed secrets, and what Plexus cannot
// express is named for the user to set.

func (b *builder) split(v string) []piece { return b.c.syntax.split(v) }

// hasRef reports whether v refers to anything: a command or an argument
// with a placeholder in it, which Plexus passes on as written.
func (b *builder) hasRef(v string) bool {
	for _, p := range b.split(v) {
		if p.kind != litPiece {
			return true
		}
	}
	return false
}

// ref records a variable the server refers to.
func (b *builder) ref(name string) { b.c.refs[name] = true }

// refName is the variable a reference stands for, with the notes it needs.
func (b *builder) refName(field string, p piece) string {
	switch p.kind {
	case inputPiece:
		n := b.c.inputName(p.text)
		b.ref(n)
		b.note("%s: ${input:%s} became the managed secret %s: VS Code asks for its value, which is not in the file; set it with `plexus secret set %s`", field, shorten(p.text), n, n)
		return n
	case envPiece:
		b.ref(p.text)
		if p.hasDefault {
			b.note("%s: the default value of ${%s:-…} is not carried over (Plexus has no defaults): if %s is not set, set it with `plexus secret set %s`", field, p.text, p.text, p.text)
		}
		return p.text
	}
	return ""
}

// whole converts a value that Plexus can hold only as one reference (env
// values, the bearer token, the OAuth client secret) and returns the
// variable's name.
func (b *builder) whole(field, key, v string) string {
	ps := b.split(v)
	if p, ok := single(ps); ok && p.kind != editorPiece {
		return b.refName(field, p)
	}
	if lit, ok := literal(ps); ok {
		return b.secret(field, key, lit)
	}
	n := b.need(key)
	b.note("%s: the value mixes text with placeholders or editor variables, which Plexus cannot compose: set %s to the whole value with `plexus secret set %s`", field, n, n)
	return n
}

// envEntry converts an env value: a plain value when it is a literal that
// does not look like a secret, else one reference (a literal moved to a
// managed secret).
func (b *builder) envEntry(field, key, v string) config.Ref {
	if lit, ok := literal(b.split(v)); ok {
		why := secretWhy(key, lit)
		if why == "" {
			b.note("%s: kept as a plain value (it does not look like a secret)", field)
			return config.PlainValue(lit)
		}
		return config.Ref{Env: b.secretWhy(field, key, lit, why)}
	}
	return config.Ref{Env: b.whole(field, key, v)}
}

// secretWhy is secret, with the reason the value was judged one in its note.
func (b *builder) secretWhy(field, key, value, why string) string {
	n := len(b.notes)
	name := b.secret(field, key, value)
	if len(b.notes) > n {
		b.notes[len(b.notes)-1] += " (" + why + ")"
	}
	return name
}

// cwd resolves a relative working directory against the folder of the
// imported file, where the other client resolved it.
func (b *builder) cwd(dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	if b.c.dir == "" {
		b.note("cwd: kept as written, relative to the daemon's home, since the file's folder is not known: set it with `plexus edit NAME --cwd DIR`")
		return dir
	}
	b.note("cwd: the relative folder resolved against the folder of the file")
	return filepath.Join(b.c.dir, dir)
}

// header converts a header value: one reference, a literal moved to a
// secret, or text around placeholders (kept as text: "Bearer ${TOKEN}").
func (b *builder) header(field, key, v string) config.Value {
	ps := b.split(v)
	if p, ok := single(ps); ok && p.kind != editorPiece {
		return config.Value{Env: b.refName(field, p)}
	}
	if lit, ok := literal(ps); ok {
		why := secretWhy(key, lit)
		if why == "" {
			b.note("%s: kept as text (it does not look like a secret)", field)
			return config.Value{Text: strings.ReplaceAll(lit, "$", "$$")}
		}
		return config.Value{Env: b.secretWhy(field, key, lit, why)}
	}
	if t, ok := b.template(field, ps); ok {
		return config.Value{Text: t}
	}
	n := b.need(key)
	b.note("%s: the value uses a variable only the editor knows: set %s to the whole value with `plexus secret set %s`", field, n, n)
	return config.Value{Env: n}
}

var bearerPrefix = regexp.MustCompile(`(?i)^bearer[ \t]+`)

// bearerHeader turns "Authorization: Bearer <token>" into a variable for
// bearerTokenEnvVar, when the token is a literal or one reference.
func (b *builder) bearerHeader(field, v string) (string, bool) {
	ps := b.split(v)
	if len(ps) == 0 || ps[0].kind != litPiece {
		return "", false
	}
	m := bearerPrefix.FindString(ps[0].text)
	if m == "" {
		return "", false
	}
	rest := ps[1:]
	if tail := ps[0].text[len(m):]; tail != "" {
		rest = append([]piece{{kind: litPiece, text: tail}}, rest...)
	}
	if p, ok := single(rest); ok && p.kind != editorPiece {
		return b.refName(field, p), true
	}
	if lit, ok := literal(rest); ok && strings.TrimSpace(lit) != "" {
		n := b.secret(field, "BEARER_TOKEN", strings.TrimSpace(lit))
		return n, true
	}
	return "", false
}

// template writes pieces as Plexus text: literal $ doubled, references as
// ${VAR}. It fails on editor variables.
func (b *builder) template(field string, ps []piece) (string, bool) {
	var t strings.Builder
	for _, p := range ps {
		switch p.kind {
		case litPiece:
			t.WriteString(strings.ReplaceAll(p.text, "$", "$$"))
		case editorPiece:
			return "", false
		default:
			t.WriteString("${" + b.refName(field, p) + "}")
		}
	}
	return t.String(), true
}

// secret moves a literal value to a managed secret named <SERVER>_<KEY>.
func (b *builder) secret(field, key, value string) string {
	base := secretBase(b.name, key)
	for i := 1; ; i++ {
		n := base
		if i > 1 {
			n = base + "_" + strconv.Itoa(i)
		}
		if old, ok := b.secrets[n]; ok && old == value {
			return n
		}
		if b.taken(n) {
			continue
		}
		b.secrets[n] = value
		b.secretNames = append(b.secretNames, n)
		b.note("%s: value moved to the managed secret %s", field, n)
		return n
	}
}

// need names a variable whose value the file does not have.
func (b *builder) need(key string) string {
	base := secretBase(b.name, key)
	for i := 1; ; i++ {
		n := base
		if i > 1 {
			n = base + "_" + strconv.Itoa(i)
		}
		if b.taken(n) {
			continue
		}
		b.needed = append(b.needed, n)
		return n
	}
}

func (b *builder) taken(n string) bool {
	if _, ok := b.c.secrets[n]; ok {
		return true
	}
	if _, ok := b.secrets[n]; ok {
		return true
	}
	if b.c.needed[n] || slices.Contains(b.needed, n) || b.c.reserved[n] {
		return true
	}
	for _, in := range b.c.inputNames {
		if in == n {
			return true
		}
	}
	return false
}

// ---- URLs ----

// secretQuery matches query parameter names that carry keys and tokens.
var secretQuery = regexp.MustCompile(`(?i)(key|token|secret|passw|pwd|auth|credential|signature|^sig$|session)`)

// url converts the server's URL: placeholders rewritten, literal $
// doubled, key-like query values and userinfo moved to secrets, and a
// fragment (which HTTP never sends) dropped.
func (b *builder) url(r rawServer) string {
	ps := b.split(r.url)
	if len(ps) == 0 || ps[0].kind != litPiece {
		b.fail("url starts with a placeholder: Plexus needs the scheme and host written out")
		return ""
	}
	scheme, _, ok := strings.Cut(ps[0].text, "://")
	switch s := strings.ToLower(scheme); {
	case !ok:
		b.fail("url does not start with https:// or http://")
		return ""
	case s == "ws" || s == "wss":
		b.fail("a WebSocket server: Plexus reaches servers over stdio, streamable HTTP and SSE only")
		return ""
	case s != "http" && s != "https":
		b.fail("url does not start with https:// or http://")
		return ""
	}
	t, ok := b.template("url", ps)
	if !ok {
		b.fail("url uses a variable only the editor knows, which Plexus cannot expand")
		return ""
	}
	// A placeholder is written ${NAME}, which holds none of the characters
	// below: the template can be cut up like a plain URL.
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
		b.note("url: dropped the #fragment, which HTTP never sends to the server")
	}
	prefixLen := len(scheme) + 3
	rest := t[prefixLen:]
	authEnd := strings.IndexAny(rest, "/?")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	if at := strings.LastIndexByte(rest[:authEnd], '@'); at >= 0 {
		ui := rest[:at]
		if strings.Contains(ui, "$") {
			b.fail("url carries a user name and password with a placeholder: send them in a header instead")
			return ""
		}
		user, pass, _ := strings.Cut(ui, ":")
		if u, err := url.PathUnescape(user); err == nil {
			user = u
		}
		if p, err := url.PathUnescape(pass); err == nil {
			pass = p
		}
		b.userinfo = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		rest = rest[at+1:]
		t = t[:prefixLen] + rest
	}
	base, query, hasQuery := strings.Cut(t, "?")
	if !hasQuery {
		return t
	}
	parts := strings.Split(query, "&")
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" || !secretQuery.MatchString(k) || len(config.Placeholders(v)) > 0 {
			continue
		}
		name := k
		if dk, err := url.QueryUnescape(k); err == nil {
			name = dk
		}
		lit := strings.ReplaceAll(v, "$$", "$")
		parts[i] = k + "=${" + b.secret("url query "+shorten(name), name, lit) + "}"
	}
	return base + "?" + strings.Join(parts, "&")
}

// ---- names ----

// secretBase is <SERVER>_<KEY>, upper-cased, with every character that a
// variable name cannot hold turned into _. A key that already starts with
// the server's name is not prefixed twice: github's GITHUB_TOKEN stays
// GITHUB_TOKEN.
func secretBase(server, key string) string {
	s, k := sanitizeVar(server), sanitizeVar(key)
	if k == s || strings.HasPrefix(k, s+"_") {
		return k
	}
	return sanitizeVar(s + "_" + k)
}

// sanitizeVar makes s a variable name: upper case, _ for anything else, no
// leading digit.
func sanitizeVar(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	if out == "" {
		out = "SECRET"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

// ---- secret arguments ----

var (
	secretFlag = regexp.MustCompile(`(?i)^--?([a-z0-9]+[-_])*(api[-_]?key|key|token|secret|password|passwd|pat|credentials?)$`)
	// tokenPrefix matches the shapes of well-known credentials.
	tokenPrefix = regexp.MustCompile(`^(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abpr]-|sk-|sk_live_|sk_test_|rk_live_|AKIA|AIza|npm_|hf_|pplx-|lin_api_)[A-Za-z0-9_\-]{12,}$`)
	// credURL matches a URL with a password in it (a database DSN).
	credURL = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@`)
)

// secretArg says why args[i] looks like a secret, or "".
func secretArg(args []string, i int) string {
	a := args[i]
	if flag, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") && secretFlag.MatchString(flag) && val != "" && !isPath(val) {
		return "the value of " + shorten(flag)
	}
	if i > 0 && secretFlag.MatchString(args[i-1]) && !strings.HasPrefix(a, "-") && !isPath(a) {
		return "it follows " + shorten(args[i-1])
	}
	if tokenPrefix.MatchString(a) {
		return "it has the shape of an access token"
	}
	if credURL.MatchString(a) {
		return "a URL with a password in it"
	}
	return ""
}

// isPath reports whether an argument names a file, such as a key file:
// the path is not the secret.
func isPath(a string) bool {
	return strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || strings.HasPrefix(a, "~")
}
