package web

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// A response written whole.
//
// net/http writes an HTTP/1 response through a 4 KiB buffer on the
// connection, which it neither sizes nor lets a handler size: a body over
// about 3.7 KiB leaves in two writes, the buffer's first 4 KiB (the headers
// and the body's start) and the rest when the handler ends. Each write is a
// system call, and on loopback or a local network one more segment the
// client wakes for. A page of 20 transactions is about 7 KiB. WriteEncoded
// holds such a body's writes on the connection and sends them as one
// (docs/design.md, "A response in one write").

// wholeMin and wholeMax bound the bodies held: below wholeMin the headers and
// body fit the connection's buffer and leave in one write anyway; above
// wholeMax one system call more is little against the body's own cost, and
// holding it would take its size again in memory.
const (
	wholeMin = 3 << 10
	wholeMax = 64 << 10
)

// WholeListener wraps ln's connections so that WriteEncoded can send a
// response in one write. The server using it sets ConnContext to
// WholeConnContext.
func WholeListener(ln net.Listener) net.Listener { return wholeListener{ln} }

type wholeListener struct{ net.Listener }

func (l wholeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wholeConn{Conn: c}, nil
}

// WholeConnContext puts a connection from WholeListener in its requests'
// context, where the Middleware finds it.
func WholeConnContext(ctx context.Context, c net.Conn) context.Context {
	if wc, ok := c.(*wholeConn); ok {
		return context.WithValue(ctx, wholeConnKey, wc)
	}
	return ctx
}

// wholeConn holds what is written to it between hold and release. Only the
// goroutine serving the connection writes to it, and an HTTP/1 handler runs
// on that goroutine, so it needs no lock.
type wholeConn struct {
	net.Conn
	held *[]byte // non-nil between hold and release
}

var heldBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

func (c *wholeConn) hold() { c.held = heldBufs.Get().(*[]byte) }

func (c *wholeConn) Write(p []byte) (int, error) {
	if c.held == nil {
		return c.Conn.Write(p)
	}
	*c.held = append(*c.held, p...) // p is net/http's buffer, reused after this call
	return len(p), nil
}

// release writes what was held in one write. A failed write closes the
// connection: net/http, which saw its writes succeed, would otherwise wait
// for the next request on a connection whose response was lost.
func (c *wholeConn) release() {
	b := c.held
	c.held = nil
	if len(*b) > 0 {
		if _, err := c.Conn.Write(*b); err != nil {
			_ = c.Conn.Close()
		}
	}
	*b = (*b)[:0] // at most wholeMax and the headers, grown by append
	heldBufs.Put(b)
}

// CloseWrite lets net/http half-close the connection as it does a bare TCP
// connection's, before it closes one it is done with.
func (c *wholeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writeWhole writes a response whose headers are set and whose body is
// body, in one write when w's connection is a wholeConn and the body is in
// [wholeMin, wholeMax]. The Content-Length header must be set: the flush that
// ends the held writes would otherwise start a chunked body.
func writeWhole(w http.ResponseWriter, status int, body []byte) {
	if c := wholeConnOf(w); c != nil && len(body) >= wholeMin && len(body) <= wholeMax {
		c.hold()
		defer c.release()                           // second: the held writes in one
		defer http.NewResponseController(w).Flush() // first: what net/http still buffers
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// wholeConnOf finds the connection the Middleware recorded for w, looking
// through the writers that wrap it.
func wholeConnOf(w http.ResponseWriter) *wholeConn {
	for {
		switch v := w.(type) {
		case *statusRecorder:
			return v.conn
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}
