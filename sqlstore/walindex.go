package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"unsafe"
)

// The key read answered from SQLite's WAL index (docs/design.md, "SQLite:
// the key read answered from the WAL index").
//
// In WAL mode every commit, by any connection of any process, ends by
// rewriting the WAL-index header at the start of the database's -shm file,
// which every connection maps shared: 48 bytes, written twice (the second
// copy first), holding iChange, a counter every transaction moves, the last
// frame and the WAL's salts (https://sqlite.org/walformat.html, "The
// WAL-Index Header"). A commit has rewritten it before it returns. So while
// the header is what it was when a key read was sent and when it came
// back, nothing was committed since, and what that read returned is still
// what a read would return: the key read answers from memory, for a few
// loads of shared memory, instead of a statement (a quarter of a kept
// page's cost).
//
// The -shm file must stay the one mapped: SQLite deletes it when its last
// connection closes, and a process that opens the database next makes a new
// one. The store therefore holds one connection open for as long as it is
// open, which makes it never the last to close but itself. That connection
// is its own, outside the store's pool: it counts against no limit set on
// the pool, and nothing the pool does closes it.

// walIndexMapped is how much of the -shm file is mapped: its first page
// (the header takes 136 bytes; the file grows by 32 KiB).
const walIndexMapped = 4096

// walHeader is the WAL-index header, as 12 words.
type walHeader [12]uint32

// walIndex is the mapped header of a database's -shm file.
type walIndex struct {
	mem    []byte
	own    *sql.DB   // a pool of one, apart from the store's
	held   *sql.Conn // of own: keeps the -shm file in place
	closed atomic.Bool
}

// openWALIndex opens a connection of its own to the SQLite database at
// path (dsn), holds it, and maps the database's -shm file. On any failure
// it returns nil: key reads then go to the database, as without it.
func openWALIndex(ctx context.Context, dsn, path string) *walIndex {
	own, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil
	}
	w := &walIndex{own: own}
	if w.held, err = own.Conn(ctx); err != nil {
		own.Close()
		return nil
	}
	var mode string
	// A read opens the WAL and its index, if the connection had not yet.
	err = w.held.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)
	if err == nil && mode == "wal" {
		_, err = w.held.ExecContext(ctx, `SELECT count(*) FROM sqlite_master`)
	}
	if err == nil && mode == "wal" {
		w.mem, err = mapWALIndex(path + "-shm")
	}
	if err != nil || mode != "wal" || len(w.mem) < 2*len(walHeader{})*4 {
		w.closed.Store(true)
		w.held.Close()
		own.Close()
		return nil
	}
	return w
}

// header returns the header, and false when it cannot be trusted now: its
// two copies differ (a commit is rewriting it) or it is not initialised.
// SQLite's own readers check it so; the copies are read in the order that
// is the reverse of the writer's.
func (w *walIndex) header() (h walHeader, ok bool) {
	if w.closed.Load() {
		return h, false
	}
	base := unsafe.Pointer(unsafe.SliceData(w.mem))
	for i := range h {
		h[i] = atomic.LoadUint32((*uint32)(unsafe.Add(base, 4*i)))
	}
	for i := range h {
		if atomic.LoadUint32((*uint32)(unsafe.Add(base, 48+4*i))) != h[i] {
			return h, false
		}
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], h[3]) // bytes 12–15: isInit first
	return h, b[0] != 0
}

// close lets the -shm file go. The mapping stays until the process ends
// (walindex_mmap.go, for SQLite's locks): a request still under way may
// read it; after close the header is never trusted again.
func (w *walIndex) close() error {
	if w.closed.Swap(true) {
		return nil
	}
	return errors.Join(w.held.Close(), w.own.Close())
}
