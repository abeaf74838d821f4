//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlstore

import "context"

// lockFile does not lock on this system: concurrent migrations of one SQLite
// database are safe only on systems with flock.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, nil
}
