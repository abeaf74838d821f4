package dbtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"recon/sqlstore"
)

// sqliteTemplate is the migrated SQLite database that OpenStore copies. It
// is process-wide state by nature, like server: one template serves every
// test of the binary.
var sqliteTemplate sqliteFile

// sqliteFile is the content of a SQLite database file migrated to the
// latest version, kept in memory: writing it takes a millisecond where
// migrating a new file takes tens.
type sqliteFile struct {
	once    sync.Once
	content []byte
	err     error
}

// copyTo writes the migrated database to a new file in t's temporary
// directory and returns its URL.
func (f *sqliteFile) copyTo(t testing.TB) string {
	t.Helper()
	f.once.Do(func() { f.content, f.err = migratedSQLiteFile() })
	if f.err != nil {
		t.Fatalf("dbtest: %v", f.err)
	}
	path := filepath.Join(t.TempDir(), "recon.db")
	// Mode 0600 exactly, whatever the umask, as sqlstore creates its files
	// (see sqlstore/sqlitefile.go).
	if err := os.WriteFile(path, f.content, 0o600); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return "sqlite:" + path
}

// migratedSQLiteFile migrates a new SQLite database in a temporary
// directory and returns the content of its file. Closing the database
// checkpoints its write-ahead log into the file, which is then the whole
// database.
func migratedSQLiteFile() ([]byte, error) {
	dir, err := os.MkdirTemp("", "recon-dbtest-sqlite-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "recon.db")
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite:"+path)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate the SQLite template: %w", err)
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("the SQLite template kept a write-ahead log of %d bytes after Close", fi.Size())
	}
	return os.ReadFile(path)
}
