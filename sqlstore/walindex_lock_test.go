//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// walLockProbe names the -shm file the test binary, run again as another
// process, probes (TestWALIndexKeepsSQLitesLocks).
const walLockProbe = "RECON_TEST_WAL_LOCK_PROBE"

// sqliteDMS is the byte of the -shm file on which every connection of
// SQLite's unix VFS holds a shared lock while it uses the file; the first
// to open it, finding no such lock, truncates it and starts it anew
// (UNIX_SHM_DMS: UNIX_SHM_BASE 120 + SQLITE_SHM_NLOCK 8).
const sqliteDMS = 128

// TestWALIndexKeepsSQLitesLocks (SQLite): mapping the WAL index leaves
// SQLite's locks on the -shm file in place. POSIX locks belong to the
// process and go when any of its descriptors of the file closes: the
// mapping's descriptor, once closed, dropped them, and a process that
// opened the database next (a seeding process beside the server, in a
// benchmark) started the -shm anew under the server's connections, which
// failed with disk I/O errors (docs/design.md, "SQLite: the key read
// answered from the WAL index").
func TestWALIndexKeepsSQLitesLocks(t *testing.T) {
	if path := os.Getenv(walLockProbe); path != "" {
		fmt.Println(probeWALLock(path))
		return
	}
	t.Parallel()
	url := dbtest.NewURL(t, sqlstore.EngineSQLite)
	a := dbtest.OpenURL(t, url)
	if !a.WALIndexMapped() {
		t.Fatal("the WAL index of a SQLite file is not mapped")
	}
	a.SQL().SetMaxIdleConns(0) // only the connection the mapping holds stays
	shm := sqlitePath(url) + "-shm"
	cmd := exec.Command(os.Args[0], "-test.run=^TestWALIndexKeepsSQLitesLocks$", "-test.count=1")
	cmd.Env = append(os.Environ(), walLockProbe+"="+shm)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the probing process: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "shared lock held") {
		t.Fatalf("another process finds on the DMS byte of %s:\n%s\nwant SQLite's shared lock, held by the store's connection", shm, out)
	}
}

// probeWALLock reports, from another process, which lock is held on the
// DMS byte of the -shm file at path.
func probeWALLock(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: sqliteDMS, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return err.Error()
	}
	switch lk.Type {
	case syscall.F_RDLCK:
		return "shared lock held"
	case syscall.F_WRLCK:
		return "exclusive lock held"
	default:
		return "no lock held"
	}
}
