//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlstore

import (
	"fmt"
	"sync"
	"syscall"
)

// shmFiles is every -shm file this process opened to map, by device and
// inode, with its descriptor and, once mapped, its first page. The
// descriptor is never closed: SQLite's locks on the file are POSIX locks,
// which belong to the process and go when any of its descriptors of the
// file closes, whoever opened it. A closed descriptor here dropped the lock
// by which SQLite's connections tell another process that the file is in
// use, and that process then started the file anew under them (disk I/O
// errors; TestWALIndexKeepsSQLitesLocks). So each file is opened once per
// process, and a file mapped again (the same database opened again), or
// not yet sized when first tried, reuses its descriptor. While the
// descriptor is open the inode is not reused, so a key names one file.
var shmFiles struct {
	sync.Mutex
	m map[[2]uint64]*shmFile
}

type shmFile struct {
	fd  int
	mem []byte // nil until mapped
}

func shmKey(st *syscall.Stat_t) [2]uint64 { return [2]uint64{uint64(st.Dev), uint64(st.Ino)} }

// mapWALIndex maps the first page of the WAL-index file at path, read-only
// and shared, so that what other processes write is seen.
func mapWALIndex(path string) ([]byte, error) {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, err
	}
	f, ok := shmFiles.m[shmKey(&st)]
	if !ok {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		// fd is never closed from here on, whatever follows. The key is
		// the file opened: the path may have been replaced since the look.
		if err := syscall.Fstat(fd, &st); err != nil {
			return nil, err
		}
		if f, ok = shmFiles.m[shmKey(&st)]; !ok {
			f = &shmFile{fd: fd}
			if shmFiles.m == nil {
				shmFiles.m = make(map[[2]uint64]*shmFile)
			}
			shmFiles.m[shmKey(&st)] = f
		}
	}
	if f.mem != nil {
		return f.mem, nil
	}
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return nil, err
	}
	// A page past the file's end would fault when read: SQLite sizes the
	// file in 32 KiB regions when it first maps it.
	if st.Size < walIndexMapped {
		return nil, fmt.Errorf("the WAL index %s is not yet sized", path)
	}
	mem, err := syscall.Mmap(f.fd, 0, walIndexMapped, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	f.mem = mem
	return mem, nil
}
