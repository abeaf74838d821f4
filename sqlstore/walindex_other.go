//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlstore

import "errors"

// mapWALIndex is not built here: every key read goes to the database.
func mapWALIndex(string) ([]byte, error) {
	return nil, errors.New("no shared mapping of the WAL index on this system")
}
