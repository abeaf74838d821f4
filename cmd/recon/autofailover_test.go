//go:build failover

package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EnvRequireFailover makes the failover test fail, instead of skipping, when
// pg_auto_failover is not installed (CI sets it: .ci/run).
const EnvRequireFailover = "RECON_TEST_REQUIRE_FAILOVER"

// The pg_auto_failover settings of docs/deploy.md, "Tuned timeouts": the
// monitor's (milliseconds) and the keepers' (seconds).
var (
	monitorSettings = map[string]int{
		"pgautofailover.health_check_period":               1000,
		"pgautofailover.health_check_timeout":              1000,
		"pgautofailover.health_check_max_retries":          1,
		"pgautofailover.health_check_retry_delay":          500,
		"pgautofailover.node_considered_unhealthy_timeout": 4000,
		"pgautofailover.primary_demote_timeout":            6000,
	}
	keeperSettings = map[string]int{
		"timeout.network_partition_timeout": 5,
	}
)

// autoFailover is a pg_auto_failover formation on loopback in a temporary
// directory: a monitor, and two PostgreSQL nodes (a primary and its
// synchronous standby), each pg_autoctl keeper a process group of its own
// (the keeper and the postgres it runs), so that a node can be killed whole.
type autoFailover struct {
	t       testing.TB
	dir     string
	autoctl string // the pg_autoctl binary
	env     []string
	mon     *sql.DB             // the monitor's database
	cred    *syscall.Credential // running as root: as the postgres user
	monitor *keeper
	nodes   []*keeper
}

// keeper is one pg_autoctl process (`pg_autoctl run`) and its PGDATA.
type keeper struct {
	name   string
	port   int
	pgdata string
	cmd    *exec.Cmd
	done   chan struct{}
}

// startAutoFailover starts the formation; it skips the test (fails it with
// RECON_TEST_REQUIRE_FAILOVER=1) when pg_autoctl is not installed.
func startAutoFailover(t testing.TB) *autoFailover {
	t.Helper()
	path := "/usr/lib/postgresql/15/bin:" + os.Getenv("PATH")
	autoctl, err := lookPath("pg_autoctl", path)
	if err != nil {
		msg := "pg_autoctl not found (apt-get install postgresql-15-auto-failover pg-auto-failover-cli)"
		if os.Getenv(EnvRequireFailover) == "1" {
			t.Fatalf("%s (%s=1 requires the failover test)", msg, EnvRequireFailover)
		}
		t.Skip(msg + ": failover test SKIPPED")
	}
	pgctl, err := lookPath("pg_ctl", path)
	if err != nil {
		t.Fatalf("pg_autoctl found but not pg_ctl: %v", err)
	}
	// A short path: the unix sockets live in it (107 bytes at most).
	dir, err := os.MkdirTemp("", "recon-failover-")
	if err != nil {
		t.Fatal(err)
	}
	af := &autoFailover{t: t, dir: dir, autoctl: autoctl}
	t.Cleanup(af.stop)
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, pg_autoctl must run as the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		af.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	// pg_autoctl keeps its configuration and state under XDG_CONFIG_HOME and
	// XDG_DATA_HOME; local connections go through the sockets in dir.
	af.env = []string{"PATH=" + filepath.Dir(pgctl) + ":/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_DATA_HOME=" + filepath.Join(dir, "share"),
		"PG_REGRESS_SOCK_DIR=" + dir, "PGHOST=" + dir}

	af.monitor = &keeper{name: "monitor", port: freePortNumber(t), pgdata: filepath.Join(dir, "monitor")}
	af.pgautoctl("create", "monitor", "--pgctl", pgctl, "--pgdata", af.monitor.pgdata, "--pgport", strconv.Itoa(af.monitor.port),
		"--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl")
	af.run(af.monitor)
	mon := af.open(af.monitor.port, "pg_auto_failover")
	af.mon = mon
	poll(t, "the monitor", 60*time.Second, func() bool {
		_, err := mon.Exec(`SELECT 1 FROM pgautofailover.formation`)
		return err == nil
	})
	for name, v := range monitorSettings {
		if _, err := mon.Exec(fmt.Sprintf(`ALTER SYSTEM SET %s = %d`, name, v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mon.Exec(`SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		k := &keeper{name: fmt.Sprintf("node%d", i+1), port: freePortNumber(t)}
		k.pgdata = filepath.Join(dir, k.name)
		stop := func() {}
		if i > 0 {
			stop = af.checkpoints()
		}
		af.nodes = append(af.nodes, k)
		af.pgautoctl("create", "postgres", "--pgctl", pgctl, "--pgdata", k.pgdata, "--pgport", strconv.Itoa(k.port),
			"--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--name", k.name, "--dbname", "recon",
			"--auth", "trust", "--no-ssl", "--replication-quorum", "true", "--candidate-priority", "50",
			"--monitor", af.monitorURL())
		for name, v := range keeperSettings {
			af.pgautoctl("config", "set", "--pgdata", k.pgdata, name, strconv.Itoa(v))
		}
		stop()
		af.run(k)
		want := map[string]string{"node1": "single"}
		if i == 1 {
			want = map[string]string{"node1": "primary", "node2": "secondary"}
		}
		af.waitStates(want)
	}
	return af
}

// poll waits for cond, asking every 200 ms: the formation's processes share
// the machine with the test.
func poll(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out (%s) waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lookPath finds name in the directories of path.
func lookPath(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, path)
}

func freePortNumber(t testing.TB) int {
	_, port, _ := strings.Cut(freeAddr(t), ":")
	n, _ := strconv.Atoi(port)
	return n
}

func (af *autoFailover) monitorURL() string {
	return fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", af.monitor.port)
}

// URL is the multi-host URL of the recon nodes (docs/deploy.md).
func (af *autoFailover) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/recon?target_session_attrs=read-write&sslmode=disable",
		af.nodes[0].port, af.nodes[1].port)
}

// command is a pg_autoctl command as the formation's user, in its own
// process group.
func (af *autoFailover) command(args ...string) *exec.Cmd {
	cmd := exec.Command(af.autoctl, args...)
	cmd.Env, cmd.Dir = af.env, af.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: af.cred}
	return cmd
}

// pgautoctl runs a pg_autoctl command to its end.
func (af *autoFailover) pgautoctl(args ...string) {
	af.t.Helper()
	out, err := af.command(args...).CombinedOutput()
	if err != nil {
		af.t.Fatalf("pg_autoctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// run starts k's keeper, `pg_autoctl run`, its output in dir/NAME.log.
func (af *autoFailover) run(k *keeper) {
	af.t.Helper()
	log, err := os.OpenFile(filepath.Join(af.dir, k.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		af.t.Fatal(err)
	}
	defer log.Close()
	k.cmd = af.command("run", "--pgdata", k.pgdata)
	k.cmd.Stdout, k.cmd.Stderr = log, log
	if err := k.cmd.Start(); err != nil {
		af.t.Fatal(err)
	}
	k.done = make(chan struct{})
	go func() { _ = k.cmd.Wait(); close(k.done) }()
}

// kill kills k's keeper and its postgres at once (SIGKILL to the process
// group, and to the postmaster of postmaster.pid): a crashed host.
func (af *autoFailover) kill(k *keeper) {
	if b, err := os.ReadFile(filepath.Join(k.pgdata, "postmaster.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if k.cmd != nil && k.cmd.Process != nil {
		_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
	}
}

// stop kills every process of the formation and removes its directory;
// the logs are shown first when the test failed.
func (af *autoFailover) stop() {
	for _, k := range append([]*keeper{af.monitor}, af.nodes...) {
		if k != nil {
			af.kill(k)
		}
	}
	if af.t.Failed() {
		for _, name := range []string{"monitor", "node1", "node2"} {
			if b, err := os.ReadFile(filepath.Join(af.dir, name+".log")); err == nil {
				af.t.Logf("%s.log (last 4 kB):\n%s", name, b[max(0, len(b)-4096):])
			}
		}
	}
	os.RemoveAll(af.dir)
}

// open connects to a database of the formation.
func (af *autoFailover) open(port int, dbname string) *sql.DB {
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", port, dbname))
	if err != nil {
		af.t.Fatal(err)
	}
	af.t.Cleanup(func() { db.Close() })
	return db
}

// states reads the nodes' reported and assigned states from the monitor.
func (af *autoFailover) states() (map[string][2]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	rows, err := af.mon.QueryContext(ctx, `SELECT nodename, reportedstate, goalstate FROM pgautofailover.node`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string][2]string{}
	for rows.Next() {
		var name, reported, goal string
		if err := rows.Scan(&name, &reported, &goal); err != nil {
			return nil, err
		}
		m[name] = [2]string{reported, goal}
	}
	return m, rows.Err()
}

// waitStates waits until each named node has reported, and been assigned,
// its wanted state. Meanwhile it asks the nodes for a checkpoint: a new
// standby's base backup starts at the next checkpoint, which PostgreSQL
// otherwise spreads over minutes.
func (af *autoFailover) waitStates(want map[string]string) {
	af.t.Helper()
	defer af.checkpoints()()
	var last map[string][2]string
	defer func() {
		if af.t.Failed() {
			af.t.Logf("pg_auto_failover states (reported, assigned) last seen: %v", last)
		}
	}()
	poll(af.t, fmt.Sprintf("pg_auto_failover states %v", want), 120*time.Second, func() bool {
		m, err := af.states()
		if err != nil {
			return false
		}
		last = m
		for name, state := range want {
			if m[name] != [2]string{state, state} {
				return false
			}
		}
		return true
	})
}

// checkpoints asks the nodes for a checkpoint every half second until the
// function it returns is called: a new standby's base backup (pg_basebackup,
// run by its keeper) starts at the next checkpoint, which PostgreSQL
// otherwise spreads over minutes.
func (af *autoFailover) checkpoints() (stop func()) {
	dbs := make([]*sql.DB, len(af.nodes))
	for i, k := range af.nodes {
		dbs[i] = af.open(k.port, "recon")
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			for _, db := range dbs {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, _ = db.ExecContext(ctx, `CHECKPOINT`)
				cancel()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// primary returns the node the monitor has as the primary, with its
// synchronous standby (a dead primary still shows the state it reported
// last, "primary", but is assigned another).
func (af *autoFailover) primary() *keeper {
	af.t.Helper()
	m, err := af.states()
	if err != nil {
		af.t.Fatal(err)
	}
	for _, k := range af.nodes {
		if m[k.name] == [2]string{"primary", "primary"} {
			return k
		}
	}
	af.t.Fatalf("no primary: %v", m)
	return nil
}
