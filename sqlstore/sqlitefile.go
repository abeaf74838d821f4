package sqlstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// sqliteFileMode is the mode of a SQLite database's files, the database and
// its write-ahead log (-wal) and shared-memory index (-shm): they hold every
// tenant's data, so only the server's user may read them, whatever the
// process's umask (the key file beside them is 0600 too; README, "The
// secret key").
const sqliteFileMode fs.FileMode = 0o600

// createSQLiteFile creates the database file, if it does not exist, with
// sqliteFileMode before SQLite opens it. SQLite creates the -wal and -shm
// files with the database file's mode, so they follow it. A file this
// cannot create (a missing folder) is left to SQLite, which says why.
func createSQLiteFile(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
	if err != nil {
		return
	}
	// The umask may have removed bits of 0600 (0o277, say): set it exactly.
	_ = f.Chmod(sqliteFileMode)
	f.Close()
}

// secureSQLiteFiles makes the database file, its -wal and its -shm (those
// that exist) readable by their owner only: files from before this rule,
// or made by another program, whose mode lets the group or others in, are
// changed to sqliteFileMode. A file it cannot change is an error: the
// server does not run on a database others can read.
func secureSQLiteFiles(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, sqliteFileMode); err != nil {
			return fmt.Errorf("%s has mode %#o, which lets others read it, and cannot be made %#o: %w", p, fi.Mode().Perm(), sqliteFileMode, err)
		}
	}
	return nil
}
