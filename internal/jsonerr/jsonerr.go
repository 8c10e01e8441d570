// Package jsonerr describes an encoding/json decoding error by position and
// kind without quoting the input: a file or request body that fails to
// decode may hold a secret, and its error message must not repeat it.
package jsonerr

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// Describe returns err as a message that says where and how the JSON is
// wrong: "invalid JSON at byte 12", `wrong type for field "args" at byte
// 30`, "empty or truncated". Other errors (such as json's unknown field,
// which names a key, never a value) are returned as they are.
func Describe(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "invalid JSON at byte " + strconv.FormatInt(se.Offset, 10)
	case errors.As(err, &te):
		if te.Field != "" {
			return "wrong type for field " + strconv.Quote(te.Field) + " at byte " + strconv.FormatInt(te.Offset, 10)
		}
		return "wrong type at byte " + strconv.FormatInt(te.Offset, 10)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "empty or truncated"
	}
	return err.Error()
}
