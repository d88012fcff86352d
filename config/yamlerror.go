package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// A YAML syntax error names the line of the mistake where it can be found.
// For a parser error ("did not find expected key", "... '-' indicator")
// yaml.v3 gives the line before the collection the mistake is in, which
// can be far above it. The mistake's line is then the first line after
// which no prefix of the file parses: a mistake stays in every longer
// prefix, while a prefix that cuts a good multi-line value in two fails
// only until the value ends. Scanner errors keep yaml's line, that of
// their token, but for a tab in the indentation, numbered one line early.

// maxRescan bounds the bytes parsed again to find a mistake's line: a
// configuration of a few KiB is searched whole; past the bound the
// message names the first line of the collection the mistake is in.
const maxRescan = 8 << 20

// yamlError rewrites a YAML syntax error as file:line: message.
func yamlError(file string, b []byte, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		_, msg, _ = strings.Cut(msg, ": ")
	}
	if at := mistakeLine(b, line, msg); at > 0 {
		line = at
	}
	if line == 0 {
		return fmt.Sprintf("%s: invalid YAML: %s", file, msg)
	}
	return fmt.Sprintf("%s:%d: invalid YAML: %s", file, line, msg)
}

// mistakeLine is the line of the mistake behind yaml's message msg,
// reported at line (0 when yaml named none), or 0 when it cannot tell.
func mistakeLine(b []byte, line int, msg string) int {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // after the last line break
	}
	switch {
	case strings.HasPrefix(msg, "found a tab character"):
		for i := max(line-1, 0); i < len(lines); i++ {
			if indent := bytes.TrimLeft(lines[i], " "); len(indent) > 0 && indent[0] == '\t' {
				return i + 1
			}
		}
		return 0
	case line > 0 && !strings.HasPrefix(msg, "did not find expected"):
		return 0 // a scanner error, at the line of its token
	}
	// A parser error, or one yaml names no line for (an unknown alias):
	// the mistake is after yaml's line. Prefixes are parsed from the
	// longest down to the first that parses.
	spent := 0
	for k := len(lines) - 1; k >= line; k-- {
		prefix := bytes.Join(lines[:k], nil)
		if spent += len(prefix); spent > maxRescan {
			break
		}
		if parses(prefix) {
			return k + 1
		}
	}
	if line > 0 {
		// yaml's line is the one before the collection's first.
		return min(line+1, len(lines))
	}
	return 0
}

// parses says whether b holds one YAML document without a syntax error.
func parses(b []byte) bool {
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc)
	return err == nil || errors.Is(err, io.EOF) // nothing but space and comments
}
