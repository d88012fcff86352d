package backfill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// Where an OpenMetrics output may go. The run writes only what it made:
// the output, absent at the start (or a regular file the user said to
// replace), the parts directory FILE.parts, which it marks as its own when
// it makes it, and a temporary file beside the output that becomes the
// output by a rename (a hard link when it must not replace: a file made
// meanwhile is not overwritten). A directory, a device, a pipe or a link
// as --output is refused before any call.

// partsMarker is the file that marks a parts directory as made by this
// command: only such a directory is taken up or emptied.
const partsMarker = ".onchain_exporter_backfill"

// familyFileRE matches the names of the parts: family names.
var familyFileRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// checkOutput says whether a run may write the output path: absent, or a
// regular file when replace is set.
func checkOutput(path string, replace bool) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--output %s: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("--output %s is a directory: give the name of a file to write", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("--output %s is %s, not a regular file: give the name of a file to write", path, fileKind(fi.Mode()))
	case !replace:
		return fmt.Errorf("--output %s exists: give --output.replace to replace it, or another --output", path)
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// checkParts says whether the parts directory may be used: absent, or
// one this command made.
func checkParts(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory this command made: move it away or give another --output", dir)
	}
	if _, err := os.Lstat(filepath.Join(dir, partsMarker)); err != nil {
		return fmt.Errorf("%s exists and was not made by onchain_exporter backfill (no %s in it): move it away or give another --output", dir, partsMarker)
	}
	return nil
}

// makeParts makes the parts directory, marked as this command's, or takes
// up the one an earlier run made.
func makeParts(dir, out string) error {
	if err := checkParts(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return checkParts(dir) // made meanwhile: ours only when marked
	}
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, partsMarker), []byte("the parts of "+out+" while onchain_exporter backfill writes it\n"), 0o644)
}

// removeParts removes what this command made in the parts directory (the
// family parts and the marker), then the directory if nothing else is in
// it. It is called only on a directory checkParts accepted.
func removeParts(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() && (familyFileRE.MatchString(e.Name()) || e.Name() == partsMarker) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("%s holds files this command did not make; they are left there: %w", dir, err)
	}
	return nil
}

// place makes the written temporary file the output: by a hard link when
// it must not replace (a file made meanwhile stays and the error says so),
// else by a rename, after checking again what is at the output now.
func place(tmp, out string, replace bool) error {
	if err := checkOutput(out, replace); err != nil {
		return err
	}
	if !replace {
		err := os.Link(tmp, out)
		switch {
		case err == nil:
			return os.Remove(tmp)
		case errors.Is(err, fs.ErrExist):
			return fmt.Errorf("--output %s was made while the run went on: give --output.replace to replace it, or another --output", out)
		}
		// A file system without hard links: the check above stands.
	}
	return os.Rename(tmp, out)
}
