package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"recon/sqlstore"
)

// Ends of the message of a PostgreSQL server that is not there.
const (
	skipHint = "PostgreSQL half of the tests SKIPPED; install postgresql or set " + EnvPostgresURL
	failHint = "install postgresql or set " + EnvPostgresURL + " (" + EnvRequirePostgres + "=1 requires PostgreSQL)"
)

// clusterDirPattern names the directories of throwaway clusters, so that the
// clusters of killed test processes can be found.
const clusterDirPattern = "recon-dbtest-pg-*"

// clusterParents are where clusters go, best first. On the disk of a small
// virtual machine CREATE DATABASE takes ~250 ms even with fsync off; in
// memory (/dev/shm is a tmpfs on Linux) it takes ~25 ms.
func clusterParents() []string { return []string{"/dev/shm", os.TempDir()} }

// server is the PostgreSQL server of this test process. It is process-wide
// state by nature: one cluster serves every test of the binary.
var server postgresServer

type postgresServer struct {
	durable  bool // a cluster on the disk with fsync and synchronous_commit on
	once     sync.Once
	admin    *sql.DB
	adminURL *url.URL
	cluster  *cluster // nil for EnvPostgresURL
	version  int      // server_version_num: 150004 for 15.4
	err      error

	templateOnce sync.Once
	template     string // migrated database that OpenStore copies
	templateErr  error
}

// get returns the admin connection, starting the server on first use.
func (s *postgresServer) get() (*sql.DB, *url.URL, error) {
	s.once.Do(func() { s.err = s.start() })
	return s.admin, s.adminURL, s.err
}

func (s *postgresServer) start() error {
	if raw := os.Getenv(EnvPostgresURL); raw != "" && !s.durable {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return fmt.Errorf("%s is not a postgres:// URL", EnvPostgresURL)
		}
		s.adminURL = u
		return s.connect()
	}
	bin, err := findBinaries()
	if err != nil {
		return err
	}
	reapOrphans(bin)
	c, err := startCluster(bin, s.durable)
	if err != nil {
		return fmt.Errorf("cannot start a throwaway PostgreSQL cluster: %w", err)
	}
	s.cluster = c
	s.adminURL = &url.URL{
		Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path: "/postgres", RawQuery: "sslmode=disable",
	}
	return s.connect()
}

// connect opens the admin connection and waits until the server answers.
func (s *postgresServer) connect() error {
	admin, err := sql.Open("pgx", s.adminURL.String())
	if err != nil {
		return fmt.Errorf("open %s: %w", s.adminURL.Redacted(), err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = admin.PingContext(ctx)
		cancel()
		if err == nil {
			s.admin = admin
			return s.readVersion()
		}
		if time.Now().After(deadline) {
			admin.Close()
			return fmt.Errorf("PostgreSQL at %s does not answer: %w", s.adminURL.Redacted(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readVersion reads the server's version number.
func (s *postgresServer) readVersion() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v string
	if err := s.admin.QueryRowContext(ctx, "SHOW server_version_num").Scan(&v); err != nil {
		return fmt.Errorf("PostgreSQL at %s: server version: %w", s.adminURL.Redacted(), err)
	}
	s.version, _ = strconv.Atoi(v)
	return nil
}

// migratedTemplate returns the name of a database migrated to the latest
// version, creating it on first use. t must have a server (see serverFor).
func (s *postgresServer) migratedTemplate(t testing.TB) (string, error) {
	t.Helper()
	admin, adminURL := s.serverFor(t)
	s.templateOnce.Do(func() {
		name := databasePrefix + "template"
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			s.templateErr = fmt.Errorf("create database %s: %w", name, err)
			return
		}
		s.template = name
		db, err := sqlstore.Open(ctx, databaseURL(adminURL, name))
		if err != nil {
			s.templateErr = err
			return
		}
		// Copying needs the template without connections: close them all.
		defer db.Close()
		if err := db.Migrate(ctx); err != nil {
			s.templateErr = fmt.Errorf("migrate %s: %w", name, err)
		}
	})
	return s.template, s.templateErr
}

// shutdown closes the admin connection and stops the cluster. It returns a
// message for the end of the test output when PostgreSQL tests were skipped.
func (s *postgresServer) shutdown() string {
	// Stop a start that is under way (it cannot be: tests are over) and any later one.
	s.once.Do(func() {})
	if s.admin != nil {
		if s.template != "" && s.cluster == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+s.template+" WITH (FORCE)")
			cancel()
		}
		s.admin.Close()
	}
	if s.cluster != nil {
		if err := s.cluster.stop(); err != nil {
			return "dbtest: " + err.Error()
		}
	}
	if s.err != nil && os.Getenv(EnvRequirePostgres) != "1" {
		line := strings.Repeat("!", 78)
		return fmt.Sprintf("%s\ndbtest: %v\n%s\n%s", line, s.err, skipHint, line)
	}
	return ""
}

// findBinaries returns the directory holding initdb, pg_ctl and postgres
// (and pg_basebackup, for NewReplica): pg_ctl's in PATH, links followed,
// else the newest /usr/lib/postgresql/*/bin.
func findBinaries() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		// A link into the installation's bin (/usr/local/bin/pg_ctl)
		// names the directory of the other binaries (pg_basebackup).
		if target, err := filepath.EvalSymlinks(p); err == nil {
			p = target
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(found, func(a, b string) int { return versionOf(b) - versionOf(a) })
	dirs = append(dirs, found...)
	for _, dir := range dirs {
		if hasBinaries(dir) {
			return dir, nil
		}
	}
	return "", errors.New("PostgreSQL binaries not found (initdb, pg_ctl, postgres in PATH or /usr/lib/postgresql/*/bin)")
}

// versionOf returns the major version of /usr/lib/postgresql/VERSION/bin.
func versionOf(bin string) int {
	v, _ := strconv.Atoi(strings.Split(filepath.Base(filepath.Dir(bin)), ".")[0])
	return v
}

func hasBinaries(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// cluster is a throwaway PostgreSQL cluster in a temporary directory.
type cluster struct {
	bin  string // directory of the binaries
	dir  string // temporary directory: data/, the log, the socket, owner.pid
	port int
	// asPostgres runs the binaries as the postgres user: initdb and postgres
	// refuse to run as root.
	asPostgres bool
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// command returns a command running a PostgreSQL binary as the cluster's user.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir
	return cmd
}

func (c *cluster) run(name string, args ...string) error {
	out, err := c.command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startCluster creates and starts a cluster: in memory without syncs, or,
// durable, on the disk with PostgreSQL's durable defaults. On failure nothing
// is left behind.
func startCluster(bin string, durable bool) (_ *cluster, err error) {
	parents, settings := clusterParents(), "fsync = off\nsynchronous_commit = off\nfull_page_writes = off"
	if durable {
		parents, settings = []string{os.TempDir()}, "fsync = on\nsynchronous_commit = on\nfull_page_writes = on"
	}
	c, err := newCluster(bin, parents)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	if err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync"); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`
# dbtest: a throwaway cluster for tests.
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
%s
max_connections = 300
`, c.socketDir(), settings)
	if os.Getenv(EnvStatStatements) != "" {
		// The external benchmark's per-statement figures (docs/benchmarks.md).
		conf += `shared_preload_libraries = 'pg_stat_statements,auto_explain'
pg_stat_statements.track = all
pg_stat_statements.track_planning = on
auto_explain.log_min_duration = '3ms'
auto_explain.log_analyze = on
auto_explain.log_buffers = on
auto_explain.log_timing = off
auto_explain.log_nested_statements = on
`
	}
	if err := c.configure(conf); err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	return c, nil
}

// newCluster makes the directory of a cluster in the first of parents
// that takes it, with owner.pid, given to the postgres user when running
// as root.
func newCluster(bin string, parents []string) (c *cluster, err error) {
	var dir string
	for _, parent := range parents {
		if dir, err = os.MkdirTemp(parent, clusterDirPattern); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	c = &cluster{bin: bin, dir: dir}
	// owner.pid lets a later test process remove this cluster if this one is killed.
	if err = os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err == nil && os.Geteuid() == 0 {
		err = c.runAsPostgres()
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// socketDir is the directory of the cluster's unix socket: its own, or
// none (TCP is enough) when the socket's path would not fit in 107 bytes.
func (c *cluster) socketDir() string {
	if len(c.dir)+len("/.s.PGSQL.65535") > 100 {
		return ""
	}
	return c.dir
}

// configure appends conf to the cluster's postgresql.conf.
func (c *cluster) configure(conf string) error {
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(conf)
	return errors.Join(err, f.Close())
}

// start starts the server on a free port of 127.0.0.1 and waits until it
// takes connections. The free port may be taken by someone else before
// the server binds it: it retries.
func (c *cluster) start() (err error) {
	logFile := filepath.Join(c.dir, "postgres.log")
	for attempt := 1; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			return err
		}
		err = c.run("pg_ctl", "-D", c.data(), "-l", logFile, "-w", "-t", "60", "-o", "-p "+strconv.Itoa(c.port), "start")
		if err == nil {
			return nil
		}
		if attempt == 3 {
			return fmt.Errorf("%w%s", err, quoteLog(logFile))
		}
	}
}

// runAsPostgres arranges for the binaries to run as the postgres user and
// gives it the cluster directory.
func (c *cluster) runAsPostgres() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, PostgreSQL must run as the postgres user: %w", err)
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		return fmt.Errorf("running as root, PostgreSQL must run as the postgres user through runuser: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(c.dir, uid, gid); err != nil {
		return err
	}
	c.asPostgres = true
	return nil
}

// stop stops the server, if it runs, and removes the cluster's directory.
func (c *cluster) stop() error {
	var err error
	if _, statErr := os.Stat(filepath.Join(c.data(), "postmaster.pid")); statErr == nil {
		err = c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
	}
	if dir := os.Getenv(EnvStatStatements); dir != "" && c.port != 0 {
		// The log, with auto_explain's plans, outlives the cluster.
		if log, readErr := os.ReadFile(filepath.Join(c.dir, "postgres.log")); readErr == nil {
			err = errors.Join(err, os.WriteFile(filepath.Join(dir, "postgres-"+strconv.Itoa(c.port)+".log"), log, 0o644))
		}
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// reapOrphans stops and removes the clusters of test processes that died
// without stopping them (killed, or timed out).
func reapOrphans(bin string) {
	var dirs []string
	for _, parent := range clusterParents() {
		found, _ := filepath.Glob(filepath.Join(parent, clusterDirPattern))
		dirs = append(dirs, found...)
	}
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner.pid"))
		if err != nil {
			continue // being created, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		// A root test process ran its cluster as the postgres user.
		c := &cluster{bin: bin, dir: dir, asPostgres: os.Geteuid() == 0}
		c.stop()
	}
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if err := p.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A killed process stays a zombie until its parent reaps it; on Linux
	// /proc tells: "PID (comm) STATE ...".
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
			return false
		}
	}
	return true
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
