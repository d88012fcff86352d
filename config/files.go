package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Every file a configuration names (token_file, tls_config's ca_file,
// cert_file and key_file) is read the same way: an absolute path as
// written, a relative one from the directory of the configuration file,
// as Prometheus reads its own files. The working directory plays no part,
// so that a file and its credentials can be moved together.

// filePath is the path a file key names, given dir, the directory of the
// configuration file.
func filePath(dir, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// readProblem says that a file named in the configuration cannot be read:
// the path tried and, for a relative name, what it was taken relative to.
func readProblem(dir, name string, err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("cannot read %s: %v%s", filePath(dir, name), err, relativeTo(dir, name))
}

// relativeTo is the note a message about a relative file name carries.
func relativeTo(dir, name string) string {
	if filepath.IsAbs(name) {
		return ""
	}
	return fmt.Sprintf(" (%s is relative to %s, the configuration file's directory)", name, dir+string(filepath.Separator))
}
