// Package jsonerr shortens the errors of encoding/json for messages: the
// state file's reader and the answers' decoder both report them, and
// neither may repeat the text they read.
package jsonerr

import "strings"

// Short keeps a decoder error short and free of the text decoded.
func Short(err error) string {
	s := err.Error()
	if i := strings.Index(s, " looking for"); i > 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
