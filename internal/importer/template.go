package importer

import (
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
)

// syntax is the placeholder syntax of a dialect: what in a value refers to
// a variable rather than being text.
type syntax struct {
	braces   bool // ${VAR}
	bare     bool // $VAR
	envColon bool // ${env:VAR}
	input    bool // ${input:ID}, VS Code's prompted values
	defaults bool // ${VAR:-default}, Claude Code's
	editor   bool // ${workspaceFolder} and friends: the editor's own variables
	curly    bool // {env:VAR}, and {file:PATH} whose value only the client reads (opencode)
	secrets  bool // ${{ secrets.NAME }} and ${{ inputs.NAME }} (Continue)
}

type pieceKind uint8

const (
	litPiece    pieceKind = iota
	envPiece              // an environment variable
	inputPiece            // a VS Code input, asked of the user
	editorPiece           // a value only the editor knows
)

type piece struct {
	kind pieceKind
	// text is the literal text, the variable's name, the input's id or the
	// editor variable as written.
	text       string
	hasDefault bool
}

// editorVars are VS Code's and Cursor's predefined variables: they are
// valid environment variable names, but mean something else there.
var editorVars = map[string]bool{
	"workspaceFolder": true, "workspaceFolderBasename": true, "workspaceRoot": true,
	"userHome": true, "pathSeparator": true, "cwd": true, "execPath": true,
	"file": true, "fileBasename": true, "fileBasenameNoExtension": true, "fileDirname": true,
	"fileExtname": true, "fileWorkspaceFolder": true, "relativeFile": true,
	"relativeFileDirname": true, "lineNumber": true, "selectedText": true,
	"defaultBuildTask": true, "/": true,
}

// split cuts v into literal text and references. Anything that is not a
// reference in the dialect's syntax is text, as the client itself would
// pass it on.
func (s syntax) split(v string) []piece {
	var out []piece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, piece{kind: litPiece, text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(v); {
		if s.curly && v[i] == '{' {
			if p, n, ok := curlyRef(v[i:]); ok {
				flush()
				out = append(out, p)
				i += n
				continue
			}
		}
		if s.secrets && strings.HasPrefix(v[i:], "${{") {
			if p, n, ok := secretsRef(v[i:]); ok {
				flush()
				out = append(out, p)
				i += n
				continue
			}
		}
		if v[i] != '$' {
			lit.WriteByte(v[i])
			i++
			continue
		}
		rest := v[i+1:]
		if strings.HasPrefix(rest, "{") {
			if end := strings.IndexByte(rest, '}'); end > 0 {
				if p, ok := s.braced(rest[1:end]); ok {
					flush()
					out = append(out, p)
					i += 1 + end + 1
					continue
				}
			}
		} else if s.bare && rest != "" && isVarStart(rest[0]) {
			n := 1
			for n < len(rest) && isVarChar(rest[n]) {
				n++
			}
			flush()
			out = append(out, piece{kind: envPiece, text: rest[:n]})
			i += 1 + n
			continue
		}
		lit.WriteByte('$')
		i++
	}
	flush()
	return out
}

// curlyRef reads opencode's {env:VAR} or {file:PATH} at the start of v,
// and its length.
func curlyRef(v string) (piece, int, bool) {
	end := strings.IndexByte(v, '}')
	if end < 0 {
		return piece{}, 0, false
	}
	in := v[1:end]
	switch {
	case strings.HasPrefix(in, "env:") && config.ValidVarName(in[4:]):
		return piece{kind: envPiece, text: in[4:]}, end + 1, true
	case strings.HasPrefix(in, "file:") && len(in) > 5:
		// The file's content: Plexus does not read it, the user stores it.
		return piece{kind: editorPiece, text: in}, end + 1, true
	}
	return piece{}, 0, false
}

// secretsRef reads Continue's ${{ secrets.NAME }} or ${{ inputs.NAME }}
// at the start of v, and its length.
func secretsRef(v string) (piece, int, bool) {
	end := strings.Index(v, "}}")
	if end < 0 {
		return piece{}, 0, false
	}
	in := strings.TrimSpace(v[3:end])
	kind, name, ok := strings.Cut(in, ".")
	if !ok || name == "" || strings.ContainsAny(name, " \t{}") {
		return piece{}, 0, false
	}
	if kind != "secrets" && kind != "inputs" {
		return piece{}, 0, false
	}
	// Continue keeps both in its own store, by free-form names; Plexus's
	// are variables.
	return piece{kind: envPiece, text: sanitizeVar(name)}, end + 2, true
}

// braced reads the inside of ${...}.
func (s syntax) braced(in string) (piece, bool) {
	switch {
	case s.envColon && strings.HasPrefix(in, "env:") && config.ValidVarName(in[4:]):
		return piece{kind: envPiece, text: in[4:]}, true
	case s.input && strings.HasPrefix(in, "input:") && len(in) > 6:
		return piece{kind: inputPiece, text: in[6:]}, true
	case s.editor && (editorVars[in] || strings.Contains(in, ":")):
		// ${config:...}, ${command:...} and the predefined variables.
		return piece{kind: editorPiece, text: in}, true
	case s.braces && config.ValidVarName(in):
		return piece{kind: envPiece, text: in}, true
	case s.defaults:
		if name, _, ok := strings.Cut(in, ":-"); ok && config.ValidVarName(name) {
			return piece{kind: envPiece, text: name, hasDefault: true}, true
		}
	}
	return piece{}, false
}

// literal returns the text of pieces that are all literal.
func literal(ps []piece) (string, bool) {
	var b strings.Builder
	for _, p := range ps {
		if p.kind != litPiece {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// single returns the one reference that makes up the whole value.
func single(ps []piece) (piece, bool) {
	if len(ps) == 1 && ps[0].kind != litPiece {
		return ps[0], true
	}
	return piece{}, false
}

func isVarStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

func isVarChar(c byte) bool { return isVarStart(c) || '0' <= c && c <= '9' }
