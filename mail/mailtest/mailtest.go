// Package mailtest runs a real SMTP server (github.com/emersion/go-smtp) on
// loopback for tests and collects the messages it receives, parsed: no mock
// of the sending side, which talks SMTP to it like to any server.
package mailtest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	recmail "recon/mail"
)

// Message is one received message, parsed.
type Message struct {
	From     string   // envelope sender
	To       []string // envelope recipients
	Header   mail.Header
	Subject  string // decoded
	Text     string // the text/plain part, decoded, with \n line ends
	HTML     string // the text/html part, decoded ("" when none)
	Raw      []byte
	TLS      bool   // the session was encrypted (STARTTLS or implicit)
	AuthUser string // the user that authenticated ("" when none)
}

// Options of the server.
type Options struct {
	// Username and Password, when set, make the server offer AUTH PLAIN and
	// refuse mail without it.
	Username, Password string
	// STARTTLS makes the server offer STARTTLS with a self-signed
	// certificate for 127.0.0.1 (Server.ClientTLS trusts it).
	STARTTLS bool
	// ImplicitTLS makes the server speak TLS from the first byte (smtps).
	ImplicitTLS bool
}

// Server is a running SMTP server on 127.0.0.1.
type Server struct {
	Addr string // host:port
	// ClientTLS trusts the server's certificate (nil without TLS).
	ClientTLS *tls.Config

	srv  *smtp.Server
	opts Options
	msgs chan Message

	mu   sync.Mutex
	seen []Message
}

// Start starts a server; t.Cleanup stops it.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, msgs: make(chan Message, 100)}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, conn: c}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = !opts.STARTTLS && !opts.ImplicitTLS
	s.srv.ReadTimeout = time.Minute
	s.srv.WriteTimeout = time.Minute
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.ErrorLog = discard{}
	var ln net.Listener
	var err error
	if opts.STARTTLS || opts.ImplicitTLS {
		cert, pool := selfSigned(t)
		s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.ClientTLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	}
	if opts.ImplicitTLS {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", s.srv.TLSConfig)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	s.Addr = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = s.srv.Close()
		<-done
	})
	return s
}

// URL is the --smtp-url that sends to this server, from from.
func (s *Server) URL(from string) string {
	scheme := "smtp"
	if s.opts.ImplicitTLS {
		scheme = "smtps"
	}
	u := url.URL{Scheme: scheme, Host: s.Addr, RawQuery: url.Values{"from": {from}}.Encode()}
	if s.opts.Username != "" {
		u.User = url.UserPassword(s.opts.Username, s.opts.Password)
	}
	return u.String()
}

// Sender is a mail.SMTP that sends to this server and trusts its
// certificate.
func (s *Server) Sender(t testing.TB, from string) *recmail.SMTP {
	t.Helper()
	m, err := recmail.ParseURL(s.URL(from))
	if err != nil {
		t.Fatal(err)
	}
	m.TLS = s.ClientTLS
	return m
}

// Next waits for the next message (up to 30s or the test's end).
func (s *Server) Next(t testing.TB) Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case m := <-s.msgs:
		return m
	case <-ctx.Done():
		t.Fatal("mailtest: no message received")
		return Message{}
	}
}

// NextTo waits for the next message to addr, skipping others.
func (s *Server) NextTo(t testing.TB, addr string) Message {
	t.Helper()
	for {
		m := s.Next(t)
		for _, to := range m.To {
			if strings.EqualFold(to, addr) {
				return m
			}
		}
	}
}

// Received is every message received so far.
func (s *Server) Received() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.seen...)
}

type session struct {
	s        *Server
	conn     *smtp.Conn
	authUser string
	from     string
	to       []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.s.opts.Username || password != ss.s.opts.Password {
			return errors.New("invalid username or password")
		}
		ss.authUser = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.Username != "" && ss.authUser == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := Parse(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, Message: "mailtest: " + err.Error()}
	}
	m.From, m.To, m.AuthUser = ss.from, ss.to, ss.authUser
	_, m.TLS = ss.conn.TLSConnectionState()
	ss.s.mu.Lock()
	ss.s.seen = append(ss.s.seen, m)
	ss.s.mu.Unlock()
	select {
	case ss.s.msgs <- m:
	default:
	}
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

// Parse reads a message: its headers, and its text/plain and text/html
// parts (single part or multipart/alternative), decoded.
func Parse(raw []byte) (Message, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Message{}, err
	}
	m := Message{Header: msg.Header, Raw: raw}
	dec := new(mime.WordDecoder)
	if m.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return m, fmt.Errorf("subject: %w", err)
	}
	typ, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return m, fmt.Errorf("content-type: %w", err)
	}
	if !strings.HasPrefix(typ, "multipart/") {
		body, err := decode(msg.Body, msg.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return m, err
		}
		body = strings.TrimSuffix(body, "\n") // the line end before DATA's final dot
		if typ == "text/html" {
			m.HTML = body
		} else {
			m.Text = body
		}
		return m, nil
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, err
		}
		ptyp, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		body, err := decode(p, p.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return m, err
		}
		switch ptyp {
		case "text/plain":
			m.Text = body
		case "text/html":
			m.HTML = body
		}
	}
	return m, nil
}

func decode(r io.Reader, cte string) (string, error) {
	if strings.EqualFold(cte, "quoted-printable") {
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
}

func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

type discard struct{}

func (discard) Printf(string, ...any) {}
func (discard) Println(...any)        {}
