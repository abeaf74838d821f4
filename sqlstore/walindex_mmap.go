//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlstore

import (
	"fmt"
	"sync"
	"syscall"
)

// shmMapped is every -shm file this process mapped, by device and inode.
// The descriptor each was mapped from is never closed: SQLite's locks on
// the file are POSIX locks, which belong to the process and go when any of
// its descriptors of the file closes, whoever opened it. A closed
// descriptor here dropped the lock by which SQLite's connections tell
// another process that the file is in use, and that process then started
// the file anew under them (disk I/O errors; TestWALIndexKeepsSQLitesLocks).
// So each file is opened once per process: its descriptor and 4 KiB stay
// until the process ends, and a file the process maps again (the same
// database opened again) reuses them. While the descriptor is open the
// inode is not reused, so a key names one file.
var shmMapped struct {
	sync.Mutex
	m map[[2]uint64][]byte
}

// mapWALIndex maps the first page of the WAL-index file at path, read-only
// and shared, so that what other processes write is seen.
func mapWALIndex(path string) ([]byte, error) {
	shmMapped.Lock()
	defer shmMapped.Unlock()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, err
	}
	if mem, ok := shmMapped.m[[2]uint64{uint64(st.Dev), uint64(st.Ino)}]; ok {
		return mem, nil
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	// From here on fd stays open, even when the mapping fails.
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	// A page past the file's end would fault when read: SQLite sizes the
	// file in 32 KiB regions when it first maps it.
	if st.Size < walIndexMapped {
		return nil, fmt.Errorf("the WAL index %s is not yet sized", path)
	}
	mem, err := syscall.Mmap(fd, 0, walIndexMapped, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	if shmMapped.m == nil {
		shmMapped.m = make(map[[2]uint64][]byte)
	}
	shmMapped.m[[2]uint64{uint64(st.Dev), uint64(st.Ino)}] = mem
	return mem, nil
}
