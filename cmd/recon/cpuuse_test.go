package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Who used the machine's CPU, for the external benchmark: a listing
// measure that falls below its neighbours says, beside it, whether the
// server, PostgreSQL's maintenance, another process or the hypervisor took
// the time (docs/benchmarks.md, "Where the dips came from").
const (
	useServer  = iota // the recon server under test
	useLoadgen        // this process: the load generator
	usePG             // PostgreSQL sessions running statements
	usePGMaint        // autovacuum workers and sessions running VACUUM or ANALYZE
	usePGOther        // the postmaster, checkpointer, writers, launchers
	useOther          // every other process on the machine
	useSteal          // time the hypervisor gave to another guest
	useIdle           // idle and waiting on I/O
	useKinds
)

var useNames = [useKinds]string{"server", "loadgen", "pg", "pg-maint", "pg-bg", "other", "steal", "idle"}

// cpuUse is CPU time in clock ticks (USER_HZ, 100 a second), by kind.
type cpuUse [useKinds]float64

// cpuSampler reads /proc every 200 ms and adds each process's new ticks
// to its kind, so that a short-lived process (an autovacuum worker) counts
// up to its last sample.
type cpuSampler struct {
	server int
	self   int
	stop   chan struct{}
	done   chan struct{}

	mu    sync.Mutex
	total cpuUse
	procs map[int]float64 // pid -> utime+stime at its last sample
	stat  [3]float64      // machine busy, steal, idle at the last sample
}

// cpuMark is the sampler's total at one moment.
type cpuMark struct {
	at  time.Time
	use cpuUse
}

func startCPUSampler(server int) *cpuSampler {
	s := &cpuSampler{server: server, self: os.Getpid(), stop: make(chan struct{}), done: make(chan struct{}), procs: map[int]float64{}}
	s.sample(false)
	go func() {
		defer close(s.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.sample(true)
			}
		}
	}()
	return s
}

func (s *cpuSampler) close() { close(s.stop); <-s.done }

func (s *cpuSampler) mark() cpuMark {
	s.sample(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	return cpuMark{time.Now(), s.total}
}

// since says how many CPUs each kind kept busy on average since m, the
// kinds that used less than 0.05 left out.
func (s *cpuSampler) since(m cpuMark) string {
	now := s.mark()
	secs := now.at.Sub(m.at).Seconds()
	var parts []string
	for k := range useKinds {
		if cpus := (now.use[k] - m.use[k]) / 100 / secs; cpus >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.2f", useNames[k], cpus))
		}
	}
	return strings.Join(parts, " ")
}

// sample adds the ticks since the last sample; add false only records them.
func (s *cpuSampler) sample(add bool) {
	stat, err := machineTicks()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var use cpuUse
	var procs float64
	seen := map[int]float64{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		ticks, comm, ok := processTicks(pid)
		if !ok {
			continue
		}
		seen[pid] = ticks
		delta := ticks - s.procs[pid] // a new process: all its ticks are new
		if delta <= 0 {
			continue
		}
		switch {
		case pid == s.server:
			use[useServer] += delta
		case pid == s.self:
			use[useLoadgen] += delta
		case comm == "postgres":
			use[postgresKind(pid)] += delta
		default:
			continue // counted in useOther, as the machine's rest
		}
		procs += delta
	}
	busy, steal, idle := stat[0]-s.stat[0], stat[1]-s.stat[1], stat[2]-s.stat[2]
	use[useOther] = max(0, busy-procs)
	use[useSteal], use[useIdle] = steal, idle
	s.procs, s.stat = seen, stat
	if add {
		for k := range useKinds {
			s.total[k] += use[k]
		}
	}
}

// postgresKind tells a PostgreSQL process's kind by the title it sets
// (update_process_title): "postgres: autovacuum worker", "postgres: user
// db 127.0.0.1(5432) VACUUM", "postgres: checkpointer".
func postgresKind(pid int) int {
	title, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return usePGOther
	}
	t := string(bytes.TrimRight(title, "\x00 "))
	switch {
	case strings.Contains(t, "autovacuum worker"), strings.HasSuffix(t, " VACUUM"), strings.HasSuffix(t, " ANALYZE"):
		return usePGMaint
	case !strings.HasPrefix(t, "postgres: "), strings.Contains(t, "checkpointer"), strings.Contains(t, "writer"), strings.Contains(t, "launcher"):
		return usePGOther
	}
	return usePG
}

// processTicks is a process's user and system ticks and its command name.
func processTicks(pid int) (float64, string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return 0, "", false
	}
	f := strings.Fields(string(b[end+1:])) // state is field 3 of stat(5), so utime (14) is f[11]
	if len(f) < 13 {
		return 0, "", false
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return utime + stime, string(b[open+1 : end]), true
}

// machineTicks is the machine's busy, steal and idle ticks from /proc/stat.
func machineTicks() ([3]float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [3]float64{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal
	if len(f) < 9 || f[0] != "cpu" {
		return [3]float64{}, fmt.Errorf("/proc/stat: %q", line)
	}
	var v [8]float64
	for i := range v {
		v[i], _ = strconv.ParseFloat(f[i+1], 64)
	}
	return [3]float64{v[0] + v[1] + v[2] + v[5] + v[6], v[7], v[3] + v[4]}, nil
}
