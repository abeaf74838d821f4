//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlstore

import (
	"fmt"
	"os"
	"syscall"
)

// mapWALIndex maps the first page of the WAL-index file at path, read-only
// and shared, so that what other processes write is seen.
func mapWALIndex(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	// A page past the file's end would fault when read: SQLite sizes the
	// file in 32 KiB regions when it first maps it.
	if fi, err := f.Stat(); err != nil || fi.Size() < walIndexMapped {
		return nil, fmt.Errorf("the WAL index %s is not yet sized", path)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, walIndexMapped, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return mem, nil
}
