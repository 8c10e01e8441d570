package audit

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendRecord appends r as encoding/json writes it (the same bytes: the
// chain's MACs and every reader depend on them), without its reflection:
// the writer encodes a record a call, and encoding/json was most of the
// writer's CPU. What it does not write the same way by hand — a payload,
// a string that needs escaping, a time out of RFC 3339's range, a Ms
// outside plain decimal notation — goes through encoding/json, whole
// or in part.
func appendRecord(b []byte, r *Record) ([]byte, error) {
	if r.Arguments != nil || r.Result != nil || math.IsNaN(r.Ms) || math.IsInf(r.Ms, 0) {
		line, err := json.Marshal(r)
		return append(b, line...), err
	}
	start := len(b)
	b = append(b, `{"time":"`...)
	b, err := r.Time.AppendText(b)
	if err != nil {
		line, err := json.Marshal(r)
		return append(b[:start], line...), err
	}
	b = append(b, '"')
	b = appendField(b, "kind", r.Kind, false)
	b = appendField(b, "replica", r.Replica, true)
	b = appendField(b, "member", r.Member, true)
	b = appendField(b, "client", r.Client, true)
	b = appendField(b, "clientVersion", r.ClientVersion, true)
	b = appendField(b, "profile", r.Profile, true)
	b = appendField(b, "session", r.Session, true)
	b = appendField(b, "server", r.Server, true)
	b = appendField(b, "tool", r.Tool, true)
	b = appendField(b, "name", r.Name, true)
	b = appendField(b, "outcome", r.Outcome, false)
	b = appendField(b, "reason", r.Reason, true)
	if r.Ms != 0 {
		b = append(b, `,"ms":`...)
		if a := math.Abs(r.Ms); a < 1e-6 || a >= 1e21 {
			f, _ := json.Marshal(r.Ms) // its exponent form
			b = append(b, f...)
		} else {
			b = strconv.AppendFloat(b, r.Ms, 'f', -1, 64)
		}
	}
	if r.ArgBytes != 0 {
		b = strconv.AppendInt(append(b, `,"argBytes":`...), int64(r.ArgBytes), 10)
	}
	if r.ResultBytes != 0 {
		b = strconv.AppendInt(append(b, `,"resultBytes":`...), int64(r.ResultBytes), 10)
	}
	if r.Seq != 0 {
		b = strconv.AppendUint(append(b, `,"seq":`...), r.Seq, 10)
	}
	b = appendField(b, "mac", r.MAC, true)
	return append(b, '}'), nil
}

// appendField appends ,"key":value; nothing for an empty value when
// omitEmpty.
func appendField(b []byte, key, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	b = append(append(append(b, `,"`...), key...), `":`...)
	return appendString(b, v)
}

// appendString appends v as a JSON string as encoding/json writes it: a
// string of plain printable ASCII as it is, any other through
// encoding/json (its escapes of control characters, of <, > and &, of
// invalid UTF-8 and of U+2028 and U+2029).
func appendString(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			s, _ := json.Marshal(v)
			return append(b, s...)
		}
	}
	return append(append(append(b, '"'), v...), '"')
}
