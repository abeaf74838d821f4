package mail_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"recon/mail"
	"recon/mail/mailtest"
)

// TestSend sends through a real SMTP server on loopback in each of the ways
// --smtp-url allows: plain, STARTTLS with AUTH PLAIN, implicit TLS.
func TestSend(t *testing.T) {
	msg := mail.Message{
		To:      "Chị Lan <lan@example.vn>",
		Subject: "Lời mời tham gia Recon – Công ty Sao Mai",
		Text:    "Xin chào,\nBấm vào liên kết: https://recon.example.vn/invite/abc\n" + strings.Repeat("dài ", 40),
		HTML:    "<p>Xin chào, <a href=\"https://recon.example.vn/invite/abc\">chấp nhận</a></p>",
	}
	for _, tc := range []struct {
		name     string
		opts     mailtest.Options
		wantTLS  bool
		wantUser string
	}{
		{"plain", mailtest.Options{}, false, ""},
		{"starttls+auth", mailtest.Options{STARTTLS: true, Username: "recon", Password: "p@ss:/word"}, true, "recon"},
		{"smtps", mailtest.Options{ImplicitTLS: true, Username: "u", Password: "p"}, true, "u"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, tc.opts)
			s := srv.Sender(t, "Recon <no-reply@recon.example.vn>")
			if err := s.Send(context.Background(), msg); err != nil {
				t.Fatal(err)
			}
			got := srv.Next(t)
			if got.Subject != msg.Subject {
				t.Errorf("subject %q, want %q", got.Subject, msg.Subject)
			}
			if got.Text != strings.ReplaceAll(msg.Text, "\r\n", "\n") {
				t.Errorf("text %q, want %q", got.Text, msg.Text)
			}
			if got.HTML != msg.HTML {
				t.Errorf("html %q, want %q", got.HTML, msg.HTML)
			}
			if got.From != "no-reply@recon.example.vn" || len(got.To) != 1 || got.To[0] != "lan@example.vn" {
				t.Errorf("envelope from %q to %q", got.From, got.To)
			}
			if got.TLS != tc.wantTLS || got.AuthUser != tc.wantUser {
				t.Errorf("tls %v user %q, want %v %q", got.TLS, got.AuthUser, tc.wantTLS, tc.wantUser)
			}
			if got.Header.Get("Date") == "" || got.Header.Get("Message-Id") == "" {
				t.Errorf("headers %v", got.Header)
			}
		})
	}
}

// TestSendTextOnly: a message without HTML is a single text/plain part.
func TestSendTextOnly(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	if err := srv.Sender(t, "a@b.vn").Send(context.Background(), mail.Message{To: "c@d.vn", Subject: "Đặt lại mật khẩu", Text: "Mã: 123"}); err != nil {
		t.Fatal(err)
	}
	got := srv.Next(t)
	if got.Text != "Mã: 123" || got.HTML != "" || !strings.HasPrefix(got.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("got %+v", got)
	}
}

// TestSendRefused: a wrong password, a server without STARTTLS when the URL
// requires TLS, an untrusted certificate, a bad recipient and a message
// without text are errors, and nothing arrives.
func TestSendRefused(t *testing.T) {
	ctx := context.Background()
	msg := mail.Message{To: "c@d.vn", Subject: "s", Text: "t"}

	auth := mailtest.Start(t, mailtest.Options{STARTTLS: true, Username: "u", Password: "right"})
	s := auth.Sender(t, "a@b.vn")
	s.Password = "wrong"
	if err := s.Send(ctx, msg); err == nil || !strings.Contains(err.Error(), "AUTH") {
		t.Errorf("wrong password: %v", err)
	}
	s = auth.Sender(t, "a@b.vn")
	s.TLS = nil // the system roots do not trust the test certificate
	if err := s.Send(ctx, msg); err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("untrusted certificate: %v", err)
	}

	plain := mailtest.Start(t, mailtest.Options{})
	m, err := mail.ParseURL(plain.URL("a@b.vn") + "&tls=required")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(ctx, msg); err == nil || !strings.Contains(err.Error(), "tls=required") {
		t.Errorf("tls=required: %v", err)
	}
	s = plain.Sender(t, "a@b.vn")
	if err := s.Send(ctx, mail.Message{To: "not an address", Subject: "s", Text: "t"}); err == nil {
		t.Error("bad recipient sent")
	}
	if err := s.Send(ctx, mail.Message{To: "c@d.vn", Subject: "s"}); err == nil {
		t.Error("message without text sent")
	}
	if err := s.Send(ctx, mail.Message{To: "c@d.vn", Subject: "s\r\nBcc: x@y.vn", Text: "t"}); err == nil {
		t.Error("subject with a line break sent")
	}
	if n := len(plain.Received()) + len(auth.Received()); n != 0 {
		t.Errorf("%d messages arrived", n)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url, addr, user, pass, from string
		implicit, required          bool
		err                         string
	}{
		{url: "smtp://mail.example.vn?from=a@b.vn", addr: "mail.example.vn:587", from: "<a@b.vn>"},
		{url: "smtps://u%40x:p%2Fw@mail.example.vn?from=Recon%20%3Ca@b.vn%3E", addr: "mail.example.vn:465", user: "u@x", pass: "p/w", from: `"Recon" <a@b.vn>`, implicit: true},
		{url: "smtp://h:2525?from=a@b.vn&tls=required", addr: "h:2525", from: "<a@b.vn>", required: true},
		{url: "http://h?from=a@b.vn", err: "scheme"},
		{url: "smtp://h", err: "from"},
		{url: "smtp://h?from=nobody", err: "from"},
		{url: "smtp://?from=a@b.vn", err: "no host"},
		{url: "smtp://h:99999?from=a@b.vn", err: "port"},
		{url: "smtp://h?from=a@b.vn&tls=maybe", err: "tls"},
		{url: "smtp://h?from=a@b.vn&x=1", err: "unknown parameter"},
	} {
		s, err := mail.ParseURL(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if s.Addr != tc.addr || s.Username != tc.user || s.Password != tc.pass || s.From != tc.from || s.ImplicitTLS != tc.implicit || s.RequireTLS != tc.required {
			t.Errorf("%s: got %+v", tc.url, s)
		}
	}
}

// TestSendServerDown: a closed loopback port is an error naming the server.
func TestSendServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &mail.SMTP{Addr: addr, From: "a@b.vn", Timeout: 5 * time.Second}
	if err := s.Send(context.Background(), mail.Message{To: "c@d.vn", Subject: "s", Text: "t"}); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("server down: %v", err)
	}
}
