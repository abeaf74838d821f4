package testkit

import (
	"os"
	"path/filepath"
)

// EnvHalves names a folder where the test harnesses note whether the halves
// of the suite that need an outside program ran or were skipped: `make test`
// sets it and prints a summary line at the end (README, The two commands).
const EnvHalves = "RECON_TEST_HALVES"

// Halves of the suite that MarkHalf knows, and their states.
const (
	HalfPostgres = "postgres" // the PostgreSQL subtests (sqlstore/dbtest)
	HalfBrowser  = "browser"  // the chromium tests (web/browsertest)
	HalfRan      = "ran"
	HalfSkipped  = "skipped"
)

// MarkHalf notes that a test of half (HalfPostgres, HalfBrowser) ran or
// was skipped (HalfRan, HalfSkipped): an empty file "half-state" in the
// folder EnvHalves names, nothing when it is unset. Every test process may
// mark the same file: it only has to exist.
func MarkHalf(half, state string) {
	dir := os.Getenv(EnvHalves)
	if dir == "" {
		return
	}
	name := filepath.Join(dir, half+"-"+state)
	if _, err := os.Stat(name); err == nil {
		return
	}
	if f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		f.Close()
	}
}
