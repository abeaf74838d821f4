// Package mail sends e-mail: the invitations and password resets of the
// dashboard's team pages and the alerts (docs/dashboard.md, Team). A Sender
// delivers one Message; SMTP is the implementation configured by
// --smtp-url. Package mailtest runs a real SMTP server on loopback for the
// tests.
package mail

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Message is one e-mail to one recipient. Text is required (every message
// has a plain-text part); HTML, when set, is the alternative part.
type Message struct {
	To      string // one address: "a@b.vn" or "Name <a@b.vn>"
	Subject string
	Text    string
	HTML    string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrNotConfigured is what Send answers when no SMTP server was given: the
// caller shows the link to the Admin instead (docs/dashboard.md, Team).
var ErrNotConfigured = errors.New("mail: no SMTP server configured (--smtp-url)")

// SMTP sends through an SMTP server. Build it with ParseURL.
type SMTP struct {
	Addr        string        // host:port
	ImplicitTLS bool          // smtps://: TLS from the first byte; otherwise STARTTLS when the server offers it
	Username    string        // AUTH PLAIN when set
	Password    string        //
	From        string        // the envelope and header sender
	Helo        string        // the name given in EHLO (default "localhost")
	TLS         *tls.Config   // nil: the system roots, ServerName from Addr
	Timeout     time.Duration // the whole exchange (default 30s); the context can end it sooner
	// RequireTLS refuses to send (and to authenticate) over a plain
	// connection: set when the URL has ?tls=required.
	RequireTLS bool
	// Now stamps the Date header (nil: time.Now).
	Now func() time.Time
}

// ParseURL reads --smtp-url: smtp://user:pass@host:port?from=addr for SMTP
// with STARTTLS when the server offers it (port 587 by default), smtps://
// for implicit TLS (port 465 by default). from is required; tls=required
// refuses a server that offers no STARTTLS; helo names this host in EHLO.
// The user and password are URL-encoded.
func ParseURL(raw string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--smtp-url: %w", err)
	}
	s := &SMTP{}
	port := ""
	switch u.Scheme {
	case "smtp":
		port = "587"
	case "smtps":
		port = "465"
		s.ImplicitTLS = true
	default:
		return nil, fmt.Errorf("--smtp-url: scheme must be smtp or smtps, not %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("--smtp-url: no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--smtp-url: bad port %q", p)
		}
		port = p
	}
	s.Addr = net.JoinHostPort(u.Hostname(), port)
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "from", "tls", "helo":
		default:
			return nil, fmt.Errorf("--smtp-url: unknown parameter %q (from, tls, helo)", k)
		}
	}
	from, err := mail.ParseAddress(q.Get("from"))
	if err != nil {
		return nil, fmt.Errorf("--smtp-url: from=%q must be an e-mail address: %w", q.Get("from"), err)
	}
	s.From = from.String()
	switch q.Get("tls") {
	case "":
	case "required":
		s.RequireTLS = true
	default:
		return nil, fmt.Errorf("--smtp-url: tls=%q: the only value is required", q.Get("tls"))
	}
	s.Helo = q.Get("helo")
	return s, nil
}

// Send delivers m: it dials, says EHLO, upgrades with STARTTLS when
// offered, authenticates when a user is set, and sends one message.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return fmt.Errorf("mail: recipient %q: %w", m.To, err)
	}
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return fmt.Errorf("mail: sender %q: %w", s.From, err)
	}
	body, err := s.compose(from, to, m)
	if err != nil {
		return err
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("mail: address %q: %w", s.Addr, err)
	}
	tlsConf := s.tlsConfig(host)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if s.ImplicitTLS {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return fmt.Errorf("mail: TLS: %w", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail: %w", err)
	}
	defer c.Close()
	if err := c.Hello(cmp.Or(s.Helo, "localhost")); err != nil {
		return fmt.Errorf("mail: EHLO: %w", err)
	}
	secure := s.ImplicitTLS
	if !secure {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConf); err != nil {
				return fmt.Errorf("mail: STARTTLS: %w", err)
			}
			secure = true
		} else if s.RequireTLS {
			return errors.New("mail: the server offers no STARTTLS and the URL says tls=required")
		}
	}
	if s.Username != "" {
		// net/smtp's PLAIN refuses a plain connection except to localhost.
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return fmt.Errorf("mail: AUTH: %w", err)
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return fmt.Errorf("mail: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to.Address); err != nil {
		return fmt.Errorf("mail: RCPT TO %s: %w", to.Address, err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if err := c.Quit(); err != nil {
		return fmt.Errorf("mail: QUIT: %w", err)
	}
	return nil
}

func (s *SMTP) tlsConfig(host string) *tls.Config {
	if s.TLS != nil {
		c := s.TLS.Clone()
		if c.ServerName == "" {
			c.ServerName = host
		}
		return c
	}
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}

// compose builds the RFC 5322 message: UTF-8 headers (Q-encoded), a
// text/plain part and, with HTML, a multipart/alternative of both, each
// quoted-printable.
func (s *SMTP) compose(from, to *mail.Address, m Message) ([]byte, error) {
	if strings.TrimSpace(m.Text) == "" {
		return nil, errors.New("mail: a message needs a plain-text part")
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, errors.New("mail: the subject has a line break")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	var b bytes.Buffer
	domain := "localhost"
	if i := strings.LastIndexByte(from.Address, '@'); i >= 0 {
		domain = from.Address[i+1:]
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", from.String())
	hdr("To", to.String())
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	hdr("Date", now().Format(time.RFC1123Z))
	hdr("Message-ID", "<"+hex.EncodeToString(id[:])+"@"+domain+">")
	hdr("MIME-Version", "1.0")
	if m.HTML == "" {
		hdr("Content-Type", `text/plain; charset="utf-8"`)
		hdr("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		if err := writeQP(&b, m.Text); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	var parts bytes.Buffer
	mw := multipart.NewWriter(&parts)
	hdr("Content-Type", `multipart/alternative; boundary="`+mw.Boundary()+`"`)
	b.WriteString("\r\n")
	for _, p := range []struct{ typ, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.typ + `; charset="utf-8"`},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		if err := writeQP(w, p.body); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	b.Write(parts.Bytes())
	return b.Bytes(), nil
}

func writeQP(w interface{ Write([]byte) (int, error) }, s string) error {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
	qp := quotedprintable.NewWriter(w)
	if _, err := qp.Write([]byte(s)); err != nil {
		return err
	}
	return qp.Close()
}
