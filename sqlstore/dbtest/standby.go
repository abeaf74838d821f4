package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"recon/internal/testkit"
	"recon/sqlstore"
)

// Replica is a throwaway PostgreSQL primary of its own with a streaming
// standby of it, for the tests of reads from a standby (docs/design.md,
// "Reads from a standby"): a cluster started as the shared one (initdb +
// pg_ctl in a temporary directory), but with synchronous_commit on, and a
// copy of it made by pg_basebackup -R (which writes the standby's
// primary_conninfo and standby.signal) started on another loopback port.
// Both are stopped and removed when the test ends. It ignores
// EnvPostgresURL: a standby needs the binaries.
type Replica struct {
	// PrimaryURL and StandbyURL name the same database, "recon", on
	// each: OpenURL(t, PrimaryURL) migrates it.
	PrimaryURL, StandbyURL string
	primary, standby       *cluster
}

// NewReplica starts a primary and its standby. Without PostgreSQL's
// binaries it skips t, or fails it when EnvRequirePostgres=1.
func NewReplica(t testing.TB) *Replica {
	t.Helper()
	bin, err := findBinaries()
	if err != nil {
		if os.Getenv(EnvRequirePostgres) == "1" {
			t.Fatalf("dbtest: %v\n%s", err, failHint)
		}
		testkit.MarkHalf(testkit.HalfPostgres, testkit.HalfSkipped)
		t.Skipf("dbtest: %v\n%s", err, skipHint)
	}
	primary, err := startCluster(bin, false)
	if err != nil {
		t.Fatalf("dbtest: start a primary: %v", err)
	}
	t.Cleanup(func() { primary.stop() })
	r := &Replica{primary: primary}
	r.PrimaryURL = primary.url("postgres")
	// A commit is acknowledged once its WAL is flushed, as in production:
	// the standby's staleness is measured from the flushed position.
	r.exec(t, r.PrimaryURL, "ALTER SYSTEM SET synchronous_commit = on", "SELECT pg_reload_conf()", "CREATE DATABASE recon")
	r.PrimaryURL = primary.url("recon")

	standby, err := newCluster(bin, clusterParents())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { standby.stop() })
	if err := standby.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port), "-U", "postgres",
		"-D", standby.data(), "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	// The copied postgresql.conf names the primary's socket directory: the
	// line appended last wins.
	if err := standby.configure(fmt.Sprintf("\n# dbtest: a standby.\nunix_socket_directories = '%s'\n", standby.socketDir())); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if err := standby.start(); err != nil {
		t.Fatalf("dbtest: start a standby: %v", err)
	}
	r.standby = standby
	r.StandbyURL = standby.url("recon")
	return r
}

// url returns the URL of the named database on the cluster.
func (c *cluster) url(database string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String()
}

// exec runs statements on the database at databaseURL, each on its own.
func (r *Replica) exec(t testing.TB, databaseURL string, statements ...string) {
	t.Helper()
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range statements {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("dbtest: %s: %v", s, err)
		}
	}
}

// PauseReplay stops the standby replaying the WAL it receives
// (pg_wal_replay_pause) and returns once it has stopped: from then on it
// falls behind whatever the primary commits.
func (r *Replica) PauseReplay(t testing.TB) {
	t.Helper()
	r.exec(t, r.StandbyURL, "SELECT pg_wal_replay_pause()")
	r.waitStandby(t, "SELECT pg_get_wal_replay_pause_state() = 'paused'")
}

// ResumeReplay lets the standby replay again (pg_wal_replay_resume).
func (r *Replica) ResumeReplay(t testing.TB) {
	t.Helper()
	r.exec(t, r.StandbyURL, "SELECT pg_wal_replay_resume()")
}

// WaitReplayed returns once the standby has replayed everything the
// primary had flushed when it was called.
func (r *Replica) WaitReplayed(t testing.TB) {
	t.Helper()
	db, err := sql.Open("pgx", r.PrimaryURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var lsn string
	if err := db.QueryRowContext(t.Context(), "SELECT pg_current_wal_flush_lsn()::text").Scan(&lsn); err != nil {
		t.Fatalf("dbtest: the primary's position: %v", err)
	}
	r.waitStandby(t, "SELECT pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn")
}

// waitStandby polls a boolean query on the standby until it is true.
func (r *Replica) waitStandby(t testing.TB, query string) {
	t.Helper()
	db, err := sql.Open("pgx", r.StandbyURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testkit.WaitFor(t, query, 30*time.Second, func() bool {
		var ok bool
		return db.QueryRowContext(t.Context(), query).Scan(&ok) == nil && ok
	})
}

// StopStandby stops the standby at once (pg_ctl stop -m immediate), as a
// standby that died: its connections break and new ones are refused.
func (r *Replica) StopStandby(t testing.TB) {
	t.Helper()
	if err := r.standby.run("pg_ctl", "-D", r.standby.data(), "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("dbtest: stop the standby: %v", err)
	}
}

// OpenStore opens the primary's database, migrated and keyed as
// OpenURL's, with listings reading from the standby within maxLag
// (sqlstore.WithStandby). It is closed when the test ends.
func (r *Replica) OpenStore(t testing.TB, maxLag time.Duration) *sqlstore.DB {
	t.Helper()
	return OpenURL(t, r.PrimaryURL, sqlstore.WithStandby(r.StandbyURL, maxLag))
}
