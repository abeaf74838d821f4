package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestWriterQueueHonoursTheContext: a SQLite write waiting behind another
// writer of the process gives up when its context ends, and the queue is
// free again once the first writer is done.
func TestWriterQueueHonoursTheContext(t *testing.T) {
	db, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.inTx(t.Context(), func(*sql.Tx) error { close(holding); <-release; return nil })
	}()
	<-holding
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	ran := false
	err = db.inTx(ctx, func(*sql.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || ran {
		t.Fatalf("queued writer: err %v, ran %v; want the deadline and no run", err, ran)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := db.inTx(t.Context(), func(*sql.Tx) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("after the first writer: err %v, ran %v", err, ran)
	}
}
