//go:build unix

package sqlstore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"recon"
	"recon/sqlstore"
)

// TestSQLiteFilesAreOwnerOnly: the database file, its -wal and its -shm are
// mode 0600 whatever the umask (issue 18), and the files of a database
// made before are tightened when it is opened. Not parallel: the umask is
// the process's (parallel tests wait until the sequential ones are done).
func TestSQLiteFilesAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "recon.db")
	files := []string{path, path + "-wal", path + "-shm"}
	wantModes := func(what string) {
		t.Helper()
		for _, p := range files {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s has mode %#o, want 0600", what, filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
	db, err := sqlstore.Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCompany(t.Context(), &recon.Company{FullName: "Sao Mai", ShortName: "SM", Status: recon.CompanyActive}); err != nil {
		t.Fatal(err)
	}
	wantModes("a new database under umask 022")
	// The migrations' lock file is empty, but it is the database's too.
	if fi, err := os.Stat(path + "-migrate.lock"); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("the migrations' lock file has mode %#o, want 0600", fi.Mode().Perm())
	}

	// Files another program (or an older Recon) left readable by others.
	for _, p := range files {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, err := sqlstore.Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	wantModes("an existing database opened again")
}
