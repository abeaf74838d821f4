package alerts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/alerts"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/mail"
	"recon/mail/mailtest"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

var hanoi = time.FixedZone("ICT", 7*3600)

type env struct {
	db      *sqlstore.DB
	co      *recon.Company
	chat    *testkit.Receiver
	post    func(ctx context.Context, url string, payload []byte) error
	service func(node string) *alerts.Service
}

func newEnv(t *testing.T, engine string) *env {
	t.Helper()
	e := &env{db: dbtest.OpenStore(t, engine), chat: testkit.NewReceiver(t)}
	e.co = &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive, Config: recon.CompanyConfig{Paycode: true}}
	if err := e.db.CreateCompany(context.Background(), e.co); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ReplacePaymentCodeFormats(context.Background(), e.co.ID, []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 10, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
		t.Fatal(err)
	}
	client := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true})
	e.post = func(ctx context.Context, url string, payload []byte) error {
		t := &recon.Target{URL: url, AuthType: recon.AuthNone, SigningSecret: "k", Active: true}
		if res := client.Send(ctx, t, &recon.Delivery{Event: "ALERT", Payload: payload}, time.Now()); !res.OK() {
			return &recon.Error{Code: recon.EUNAVAILABLE, Message: res.Error(time.Second)}
		}
		return nil
	}
	e.service = func(node string) *alerts.Service {
		return &alerts.Service{Store: e.db, Post: e.post, Location: hanoi, Node: node}
	}
	return e
}

func (e *env) chats(t *testing.T) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, r := range e.chat.Got() {
		var m map[string]string
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatalf("chat payload %s: %v", r.Body, err)
		}
		out = append(out, m)
	}
	return out
}

// TestAlerts (both engines): the thresholds, the chat webhook's payloads
// for Telegram and Slack on a loopback receiver, each alert once, a failed
// send tried again, and the events the dashboard lists.
func TestAlerts(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newEnv(t, engine)
		tenant := e.co.Tenant()
		settings := &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 3, QueueThreshold: 0, DailyHour: -1,
			ChatKind: recon.ChatTelegram, ChatURL: e.chat.URL + "/bot123:ABC/sendMessage", ChatID: "-100200"}
		if err := settings.Validate(func(string) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := e.db.SetAlertSettings(ctx, settings); err != nil {
			t.Fatal(err)
		}
		// An IPN target whose attempts fail: two failures are not enough.
		if err := e.db.SetIPN(ctx, tenant, &recon.Target{URL: e.chat.URL + "/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		d, err := e.db.SendTestNotification(ctx, tenant, recon.DeliveryIPN)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 26, 9, 30, 0, 0, hanoi)
		fail := func(n int) {
			for i := 0; i < n; i++ {
				at := now.Add(time.Duration(i) * time.Minute)
				if err := e.db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: at, URL: "x", StatusCode: 500},
					Status: recon.DeliveryPending, Next: at.Add(time.Minute)}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		fail(2)
		svc := e.service("a")
		if n, err := svc.Run(ctx, now); err != nil || n != 0 || len(e.chat.Got()) != 0 {
			t.Fatalf("two failures: %d %v %d", n, err, len(e.chat.Got()))
		}
		fail(1)
		if n, err := svc.Run(ctx, now); err != nil || n != 1 {
			t.Fatalf("three failures: %d %v", n, err)
		}
		got := e.chats(t)
		if len(got) != 1 || got[0]["chat_id"] != "-100200" || !strings.Contains(got[0]["text"], "Thông báo IPN gửi lỗi liên tiếp") ||
			!strings.Contains(got[0]["text"], "3 lần gửi gần nhất") {
			t.Fatalf("telegram payload: %v", got)
		}
		// Once: the next runs of the day send nothing more.
		for i := 0; i < 2; i++ {
			if n, err := svc.Run(ctx, now.Add(time.Hour)); err != nil || n != 0 {
				t.Fatalf("again: %d %v", n, err)
			}
		}
		// The queue past its threshold; Slack's shape. A failing chat
		// answer leaves it to try again, once it works, once.
		settings.QueueThreshold, settings.ChatKind, settings.ChatID, settings.ChatURL = 1, recon.ChatSlack, "", e.chat.URL+"/services/T/B/X"
		if err := e.db.SetAlertSettings(ctx, settings); err != nil {
			t.Fatal(err)
		}
		acct := &recon.BankAccount{CompanyID: e.co.ID, BankName: "Vietcombank", AccountNumber: "0071000123456", HolderName: "SAO MAI"}
		if err := e.db.CreateBankAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		// (a company with orders queues the transfers that pay none)
		o := &recon.Order{CompanyID: e.co.ID, InvoiceNumber: "SM-1", Amount: 90000, Currency: "VND", PaymentCode: "DH999999", BankAccountID: acct.ID,
			SuccessURL: "https://shop.example.vn/ok", ErrorURL: "https://shop.example.vn/err", CancelURL: "https://shop.example.vn/cancel"}
		if err := e.db.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		in := []recon.TransactionInput{{BankAccountID: acct.ID, TransactionDate: now, AmountIn: 150000, Content: "CK DH123456", ReferenceNumber: "R1"}}
		if _, err := recon.Ingest(ctx, e.db, tenant, now, in); err != nil {
			t.Fatal(err)
		}
		if n, _ := svc.Run(ctx, now); n != 0 {
			t.Fatalf("one open exception, threshold 1: %d alerts", n)
		}
		in[0].ReferenceNumber, in[0].AmountIn = "R2", 2_000_000
		if _, err := recon.Ingest(ctx, e.db, tenant, now, in); err != nil {
			t.Fatal(err)
		}
		e.chat.Answer(func(int) int { return 503 })
		if n, err := svc.Run(ctx, now); n != 0 || err != nil {
			t.Fatalf("chat down: %d %v", n, err)
		}
		events, err := e.db.AlertEvents(ctx, tenant, 10)
		if err != nil || len(events) != 2 || events[0].Kind != recon.AlertQueue || !events[0].SentAt.IsZero() || events[0].LastError == "" {
			t.Fatalf("the unsent queue alert: %+v %v", events, err)
		}
		e.chat.Answer(nil)
		if n, err := svc.Run(ctx, now.Add(time.Second)); n != 1 || err != nil {
			t.Fatalf("chat back: %d %v", n, err)
		}
		got = e.chats(t)
		if last := got[len(got)-1]; last["chat_id"] != "" || !strings.Contains(last["text"], "Hàng đợi ngoại lệ vượt ngưỡng") || !strings.Contains(last["text"], "Có 2 ngoại lệ") {
			t.Fatalf("slack payload: %v", last)
		}
		if n, _ := svc.Run(ctx, now.Add(2*time.Second)); n != 0 {
			t.Fatal("the queue alert went twice")
		}
		// The messages in English, for the dashboard.
		if subject, text := alerts.Message("en", events[0]); subject != "The exceptions queue is past its threshold" || !strings.Contains(text, "2 exceptions are open") {
			t.Errorf("english: %q %q", subject, text)
		}
	})
}

// TestAlertCompanies (both engines): the minute's check visits only the
// companies that may have an alert: quiet and inactive ones are left out,
// a company is in while a delivery of its is tried and not delivered, and
// from its daily summary's hour until that summary is sent (a failed send
// keeps it in, to be tried again).
func TestAlertCompanies(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newEnv(t, engine) // e.co: the default settings, the summary at 8:00
		company := func(name, status string, daily int) *recon.Company {
			c := &recon.Company{FullName: name, ShortName: name, Status: status}
			if err := e.db.CreateCompany(ctx, c); err != nil {
				t.Fatal(err)
			}
			if err := e.db.SetAlertSettings(ctx, &recon.AlertSettings{Company: c.ID, FailingAttempts: 5, QueueThreshold: 50, DailyHour: daily}); err != nil {
				t.Fatal(err)
			}
			return c
		}
		company("QUIET", recon.CompanyActive, -1)
		failing := company("FAILING", recon.CompanyActive, -1)
		company("GONE", recon.CompanyInactive, 0)
		late := company("LATE", recon.CompanyActive, 20)
		want := func(day string, hour int, ids ...int64) {
			t.Helper()
			got, err := e.db.AlertCompanies(ctx, day, hour)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(ids) {
				t.Fatalf("at %s %d:00: %v %v, want %v", day, hour, got, err, ids)
			}
		}
		want("2026-11-25", 7)
		want("2026-11-25", 8, e.co.ID)
		want("2026-11-25", 20, e.co.ID, late.ID)

		// A delivery tried and failed: in until it is delivered.
		if err := e.db.SetIPN(ctx, failing.Tenant(), &recon.Target{URL: e.chat.URL + "/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		d, err := e.db.SendTestNotification(ctx, failing.Tenant(), recon.DeliveryIPN)
		if err != nil {
			t.Fatal(err)
		}
		want("2026-11-25", 7) // not tried yet
		at := time.Date(2026, 11, 26, 7, 0, 0, 0, hanoi)
		attempt := func(code int, status string) {
			t.Helper()
			if err := e.db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: at, URL: "x", StatusCode: code},
				Status: status, Next: at.Add(time.Minute)}}); err != nil {
				t.Fatal(err)
			}
		}
		attempt(500, recon.DeliveryPending)
		want("2026-11-25", 7, failing.ID)
		attempt(200, recon.DeliveryDelivered)
		want("2026-11-25", 7)

		// The summary: a failed send keeps the company in, a sent one
		// takes it out until the next day's.
		svc := e.service("a")
		e.chat.Answer(func(int) int { return 503 })
		if err := e.db.SetAlertSettings(ctx, &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 5, QueueThreshold: 50, DailyHour: 8,
			ChatKind: recon.ChatGeneric, ChatURL: e.chat.URL + "/hook"}); err != nil {
			t.Fatal(err)
		}
		nine := time.Date(2026, 11, 26, 9, 0, 0, 0, hanoi)
		if n, err := svc.Run(ctx, nine); n != 0 || err != nil {
			t.Fatalf("the summary with the chat down: %d %v", n, err)
		}
		want("2026-11-25", 9, e.co.ID)
		e.chat.Answer(nil)
		if n, err := svc.Run(ctx, nine.Add(2*time.Minute)); n != 1 || err != nil {
			t.Fatalf("the summary with the chat back: %d %v", n, err)
		}
		want("2026-11-25", 9)
		want("2026-11-26", 9, e.co.ID)
	})
}

// TestDailySummaryTwoNodes: two nodes run the loop at the same moment with
// the summary's hour come: the chat gets it once, with yesterday's money
// in Vietnamese formatting.
func TestDailySummaryTwoNodes(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newEnv(t, engine)
		tenant := e.co.Tenant()
		if err := e.db.SetAlertSettings(ctx, &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 5, DailyHour: 8, ChatKind: recon.ChatGeneric, ChatURL: e.chat.URL + "/hook"}); err != nil {
			t.Fatal(err)
		}
		acct := &recon.BankAccount{CompanyID: e.co.ID, BankName: "Vietcombank", AccountNumber: "0071000123456", HolderName: "SAO MAI"}
		if err := e.db.CreateBankAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		yesterday := time.Date(2026, 11, 25, 14, 0, 0, 0, hanoi)
		if _, err := recon.Ingest(ctx, e.db, tenant, yesterday, []recon.TransactionInput{{BankAccountID: acct.ID, TransactionDate: yesterday, AmountIn: 2_467_000, Content: "CK", ReferenceNumber: "R1"}}); err != nil {
			t.Fatal(err)
		}
		// Before the hour: nothing.
		if n, err := e.service("a").Run(ctx, time.Date(2026, 11, 26, 7, 59, 0, 0, hanoi)); n != 0 || err != nil {
			t.Fatalf("before 8:00: %d %v", n, err)
		}
		at := time.Date(2026, 11, 26, 8, 0, 0, 0, hanoi)
		nodes := []*alerts.Service{e.service("a"), e.service("b")}
		var wg sync.WaitGroup
		start := make(chan struct{})
		sent := make([]int, len(nodes))
		errs := make([]error, len(nodes))
		for i, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				sent[i], errs[i] = n.Run(ctx, at)
			}()
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil || sent[0]+sent[1] != 1 {
			t.Fatalf("two nodes: sent %v, errors %v", sent, errs)
		}
		got := e.chats(t)
		if len(got) != 1 || got[0]["kind"] != recon.AlertDaily || got[0]["subject"] != "Tóm tắt ngày 2026-11-25" ||
			!strings.Contains(got[0]["text"], "Tiền vào: 2.467.000 ₫ (1 giao dịch)") {
			t.Fatalf("the summary: %v", got)
		}
		// Later that day, on either node: not again.
		for _, n := range nodes {
			if k, err := n.Run(ctx, at.Add(3*time.Hour)); k != 0 || err != nil {
				t.Fatalf("later: %d %v", k, err)
			}
		}
		if len(e.chat.Got()) != 1 {
			t.Fatalf("the summary went %d times", len(e.chat.Got()))
		}
	})
}

// smtpMailer is the server's adapter (server/alerts.go) over the test's
// SMTP sender.
type smtpMailer struct{ s *mail.SMTP }

func (m smtpMailer) SendMail(ctx context.Context, to, subject, text string) error {
	return m.s.Send(ctx, mail.Message{To: to, Subject: subject, Text: text})
}

// TestAlertsByEmail (both engines): the alerts reach a real SMTP server
// (mailtest), each to the users who may read the money and want that kind
// (the per-user switches), in Vietnamese then English.
func TestAlertsByEmail(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newEnv(t, engine)
		smtp := mailtest.Start(t, mailtest.Options{STARTTLS: true})
		svc := e.service("a")
		svc.Mail = smtpMailer{smtp.Sender(t, "alerts@recon.example")}
		users := map[string]*recon.User{}
		for _, u := range []*recon.User{
			{Email: "boss@saomai.vn", Role: recon.RoleAdmin},
			{Email: "ketoan@saomai.vn", Role: recon.RoleAccountant, Permissions: []string{recon.PermViewTransactions}},
			{Email: "nhanvien@saomai.vn", Role: recon.RoleMember}, // reads no money: no alerts
		} {
			u.Company = e.co.ID
			if err := e.db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			users[u.Email] = u
		}
		// The accountant wants no daily summary.
		if err := e.db.SetAlertPrefs(ctx, &recon.AlertPrefs{UserID: users["ketoan@saomai.vn"].ID, Failing: true, Queue: true}); err != nil {
			t.Fatal(err)
		}
		if p, _ := e.db.AlertPrefs(ctx, users["ketoan@saomai.vn"].ID); p.Daily || !p.Queue {
			t.Fatalf("switches read back: %+v", p)
		}
		if err := e.db.SetAlertSettings(ctx, &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 5, DailyHour: 7}); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.Run(ctx, time.Date(2026, 11, 26, 7, 5, 0, 0, hanoi)); n != 1 || err != nil {
			t.Fatalf("the summary: %d %v", n, err)
		}
		m := smtp.Next(t)
		if len(m.To) != 1 || m.To[0] != "boss@saomai.vn" || m.Subject != "[Recon] Tóm tắt ngày 2026-11-25" ||
			!strings.Contains(m.Text, "Tiền vào: 0 ₫ (0 giao dịch)") || !strings.Contains(m.Text, "Money in: 0 VND (0 transfers)") {
			t.Fatalf("the summary's e-mail: %+v", m)
		}
		if got := smtp.Received(); len(got) != 1 {
			t.Fatalf("%d e-mails, want the Admin's only: %+v", len(got), got)
		}
		// The list the dashboard shows.
		events, err := e.db.AlertEvents(ctx, e.co.Tenant(), 10)
		if err != nil || len(events) != 1 || events[0].SentAt.IsZero() || events[0].Kind != recon.AlertDaily {
			t.Fatalf("events: %+v %v", events, err)
		}
	})
}

// TestAlertsChatNeverAnswers (both engines): a chat receiver that accepts
// and never answers ends at the delivery client's timeout; the alert stays
// unsent with its error, the other company's alert goes, and the next run
// sends it (two attempts).
func TestAlertsChatNeverAnswers(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newEnv(t, engine)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var conns sync.WaitGroup
		held := make(chan net.Conn, 16)
		conns.Add(1)
		go func() {
			defer conns.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				held <- c // never read, never answered
			}
		}()
		defer func() {
			ln.Close()
			conns.Wait()
			close(held)
			for c := range held {
				c.Close()
			}
		}()
		client := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true, Timeout: 200 * time.Millisecond})
		svc := e.service("a")
		svc.Post = func(ctx context.Context, url string, payload []byte) error {
			t := &recon.Target{URL: url, AuthType: recon.AuthNone, SigningSecret: "k", Active: true}
			if res := client.Send(ctx, t, &recon.Delivery{Event: "ALERT", Payload: payload}, time.Now()); !res.OK() {
				return &recon.Error{Code: recon.EUNAVAILABLE, Message: res.Error(time.Second)}
			}
			return nil
		}
		settings := &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 5, DailyHour: 7, ChatKind: recon.ChatSlack, ChatURL: "http://" + ln.Addr().String() + "/hook"}
		if err := e.db.SetAlertSettings(ctx, settings); err != nil {
			t.Fatal(err)
		}
		other := &recon.Company{FullName: "Công ty TNHH Bình Minh", ShortName: "BINHMINH", Status: recon.CompanyActive}
		if err := e.db.CreateCompany(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := e.db.SetAlertSettings(ctx, &recon.AlertSettings{Company: other.ID, FailingAttempts: 5, DailyHour: 7, ChatKind: recon.ChatSlack, ChatURL: e.chat.URL + "/hook"}); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 26, 7, 5, 0, 0, hanoi)
		if n, err := svc.Run(ctx, now); n != 1 || err != nil {
			t.Fatalf("one chat hangs: %d %v", n, err)
		}
		if len(e.chat.Got()) != 1 {
			t.Fatalf("the other company's chat got %d", len(e.chat.Got()))
		}
		events, err := e.db.AlertEvents(ctx, e.co.Tenant(), 10)
		if err != nil || len(events) != 1 || !events[0].SentAt.IsZero() || events[0].LastError == "" || events[0].Attempts != 1 {
			t.Fatalf("the unsent alert: %+v %v", events, err)
		}
		settings.ChatURL = e.chat.URL + "/hook"
		if err := e.db.SetAlertSettings(ctx, settings); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.Run(ctx, now.Add(time.Second)); n != 1 || err != nil {
			t.Fatalf("chat back: %d %v", n, err)
		}
		events, err = e.db.AlertEvents(ctx, e.co.Tenant(), 10)
		if err != nil || len(events) != 1 || events[0].SentAt.IsZero() || events[0].Attempts != 2 {
			t.Fatalf("the alert retried: %+v %v", events, err)
		}
	})
}

// TestAlertsSMTPDown (both engines): an SMTP server that is down leaves
// the alert unsent with the error naming the server, kept for the next run.
func TestAlertsSMTPDown(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		e := newEnv(t, engine)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // a closed loopback port
		svc := e.service("a")
		svc.Mail = smtpMailer{&mail.SMTP{Addr: addr, From: "alerts@recon.example", Timeout: 5 * time.Second}}
		if err := e.db.CreateUser(ctx, &recon.User{Company: e.co.ID, Email: "boss@saomai.vn", Role: recon.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
		if err := e.db.SetAlertSettings(ctx, &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 5, DailyHour: 7}); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.Run(ctx, time.Date(2026, 11, 26, 7, 5, 0, 0, hanoi)); n != 0 || err != nil {
			t.Fatalf("SMTP down: %d %v", n, err)
		}
		events, err := e.db.AlertEvents(ctx, e.co.Tenant(), 10)
		if err != nil || len(events) != 1 || !events[0].SentAt.IsZero() || !strings.Contains(events[0].LastError, addr) {
			t.Fatalf("the unsent alert: %+v %v", events, err)
		}
	})
}

// TestAlertsClosedDatabase (both engines): the step with its database
// closed returns an error.
func TestAlertsClosedDatabase(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		e.db.Close()
		if _, err := e.service("a").Tick(context.Background(), time.Now()); err == nil {
			t.Fatal("a closed database: no error")
		}
	})
}
