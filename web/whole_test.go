package web

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
)

// countingListener counts the writes to its connections, under the
// wholeConns that WholeListener puts over them.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestResponseInOneWrite serves JSON bodies of several sizes, and a
// streamed one, through the Middleware on a real loopback server, reading
// them back on one kept-alive connection, and counts the writes each
// response took.
func TestResponseInOneWrite(t *testing.T) {
	body := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	mux := http.NewServeMux()
	mux.HandleFunc("/json/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		WriteEncoded(w, http.StatusOK, body(n))
	})
	// A writer between the middleware and WriteEncoded that does not unwrap:
	// the connection cannot be found, and the answer is written as before.
	type opaque struct{ http.ResponseWriter }
	mux.HandleFunc("/opaque/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		WriteEncoded(opaque{w}, http.StatusOK, body(n))
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(body(5000))
		http.NewResponseController(w).Flush()
		_, _ = w.Write(body(5000))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	srv := &http.Server{
		Handler:     (&Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux),
		ConnContext: WholeConnContext,
	}
	go srv.Serve(WholeListener(countingListener{ln, &writes}))
	t.Cleanup(func() { srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	get := func(method, path string) (*http.Response, []byte, int64) {
		t.Helper()
		before := writes.Load()
		req, _ := http.NewRequest(method, "http://"+ln.Addr().String()+path, nil)
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(rd, req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		// The response is read whole, so the server has made its writes.
		return resp, b, writes.Load() - before
	}
	for _, tc := range []struct {
		n          int
		wantWrites int64
	}{
		{100, 1},                 // fits the connection's buffer
		{wholeMin + 4000, 1},     // two writes without holding
		{wholeMax, 1},            // the largest held
		{wholeMax + 1 + 8192, 2}, // not held: the buffer's 4 KiB, then the rest
	} {
		path := "/json/" + strconv.Itoa(tc.n)
		resp, b, n := get("GET", path)
		if resp.StatusCode != 200 || !bytes.Equal(b, body(tc.n)) || resp.ContentLength != int64(tc.n) {
			t.Fatalf("GET %s: %d, %d bytes of %d, Content-Length %d", path, resp.StatusCode, len(b), tc.n, resp.ContentLength)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("GET %s: the middleware's headers are missing", path)
		}
		if n != tc.wantWrites {
			t.Errorf("GET %s: %d writes, want %d", path, n, tc.wantWrites)
		}
	}
	if resp, b, n := get("GET", "/opaque/9000"); resp.StatusCode != 200 || !bytes.Equal(b, body(9000)) || n != 2 {
		t.Errorf("behind a writer that does not unwrap: %d, %d bytes, %d writes, want 2", resp.StatusCode, len(b), n)
	}
	// A HEAD request's headers, with no body, in one write.
	if resp, b, n := get("HEAD", "/json/9000"); resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != 9000 || n != 1 {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %d, %d writes", resp.StatusCode, len(b), resp.ContentLength, n)
	}
	// A handler that flushes as it goes is not held: its first part leaves
	// at its flush, chunked, before the rest is written.
	if resp, b, n := get("GET", "/stream"); resp.StatusCode != 200 || !bytes.Equal(b, body(10000)) || n < 2 {
		t.Errorf("stream: %d, %d bytes, %d writes", resp.StatusCode, len(b), n)
	}
}

// TestHeldWriteFailureCloses: when the one write of what was held fails,
// the connection is closed, so that net/http, which saw its own writes
// succeed, does not wait on it for the next request.
func TestHeldWriteFailureCloses(t *testing.T) {
	server, client := net.Pipe()
	c := &wholeConn{Conn: server}
	client.Close() // the peer is gone: writing to server fails
	c.hold()
	if n, err := c.Write([]byte("HTTP/1.1 200 OK\r\n")); n != 17 || err != nil {
		t.Fatalf("held write: %d, %v", n, err)
	}
	c.release()
	// A pipe closed by its peer reads io.EOF; one closed here, io.ErrClosedPipe.
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("read after the failed write: %v, want the connection closed", err)
	}
	if c.held != nil {
		t.Fatal("still holding after release")
	}
}
