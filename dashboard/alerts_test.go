package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/alerts"
	"recon/sqlstore/dbtest"
)

// The alerts page (docs/dashboard.md, Alerts), both engines: one's own
// switches, the company's settings (Admin only, refused values named, the
// chat webhook kept secret and audited as rotated), the latest alerts in
// Vietnamese, and who may see the page.
func TestDashboardAlerts(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSettingsEnv(t, engine)
		ctx := context.Background()
		acct := e.signedIn(t, "ketoan@saomai.vn")
		acct.Get("/dashboard/lang/vi?back=/dashboard/")
		status, body := acct.Get("/dashboard/alerts")
		if status != 200 || !strings.Contains(body, `id="mine-daily" checked`) || strings.Contains(body, `id="company-alerts"`) ||
			!strings.Contains(body, `id="no-mail"`) || !strings.Contains(body, "Cảnh báo tôi nhận qua e-mail") {
			t.Fatalf("the Accountant's page: %d %s", status, body)
		}
		if status, loc, _ := acct.PostFrom("/dashboard/alerts", "/dashboard/alerts/mine", url.Values{"failing": {"1"}, "queue": {"1"}}); status != http.StatusSeeOther || loc != "/dashboard/alerts?saved=mine" {
			t.Fatalf("own switches: %d %s", status, loc)
		}
		id, _ := parseID(e.userIDs["ketoan@saomai.vn"])
		if p, _ := e.db.AlertPrefs(ctx, id); p.Daily || !p.Failing || !p.Queue {
			t.Fatalf("stored switches %+v", p)
		}
		if _, body := acct.Get("/dashboard/alerts?saved=mine"); !strings.Contains(body, `id="mine-daily">`) || !strings.Contains(body, `id="alerts-saved"`) {
			t.Fatalf("the switches shown: %s", body)
		}
		if status, _, _ := acct.PostFrom("/dashboard/alerts", "/dashboard/alerts/settings", url.Values{"failing_attempts": {"3"}}); status != http.StatusForbidden {
			t.Errorf("the Accountant's company settings: %d", status)
		}
		if status, _ := e.signedIn(t, "nhanvien@saomai.vn").Get("/dashboard/alerts"); status != http.StatusForbidden {
			t.Errorf("a Member's page: %d", status)
		}

		// The Admin's settings: refusals name the field, nothing is saved.
		boss := e.signedIn(t, "boss@saomai.vn")
		boss.Get("/dashboard/lang/vi?back=/dashboard/")
		good := url.Values{"failing_attempts": {"3"}, "queue_threshold": {"20"}, "daily_hour": {"7"}, "chat_kind": {"telegram"},
			"chat_url": {e.rc.URL + "/bot123456:SECRET-TOKEN/sendMessage"}, "chat_id": {"-1001"}}
		with := func(k, v string) url.Values {
			f := url.Values{}
			for key, vs := range good {
				f[key] = vs
			}
			f.Set(k, v)
			return f
		}
		for _, c := range []struct {
			form  url.Values
			field string
		}{
			{with("failing_attempts", "abc"), "failing_attempts"}, {with("failing_attempts", "0"), "failing_attempts"},
			{with("failing_attempts", "99999999999999999999"), "failing_attempts"}, {with("queue_threshold", "-1"), "queue_threshold"},
			{with("daily_hour", "24"), "daily_hour"}, {with("chat_kind", "zalo"), "chat_kind"}, {with("chat_url", "ftp://x.vn/hook"), "chat_url"},
			{with("chat_id", ""), "chat_id"},
		} {
			status, _, body := boss.PostFrom("/dashboard/alerts", "/dashboard/alerts/settings", c.form)
			if status != http.StatusBadRequest || !strings.Contains(body, `data-field="`+c.field+`"`) {
				t.Errorf("%v: %d, want the field %s", c.form, status, c.field)
			}
		}
		if s, _ := e.db.AlertSettings(ctx, e.live.id.ID()); *s != *recon.DefaultAlertSettings(e.live.id.ID()) {
			t.Fatalf("refused settings were saved: %+v", s)
		}
		if status, loc, body := boss.PostFrom("/dashboard/alerts", "/dashboard/alerts/settings", good); status != http.StatusSeeOther {
			t.Fatalf("save: %d %s %s", status, loc, body)
		}
		s, _ := e.db.AlertSettings(ctx, e.live.id.ID())
		if s.FailingAttempts != 3 || s.QueueThreshold != 20 || s.DailyHour != 7 || s.ChatKind != recon.ChatTelegram || s.ChatID != "-1001" {
			t.Fatalf("stored %+v", s)
		}
		_, body = boss.Get("/dashboard/alerts")
		if strings.Contains(body, "SECRET-TOKEN") || !strings.Contains(body, `id="chat-kept"`) {
			t.Fatalf("the chat webhook shown: %s", body)
		}
		// Saved again without the URL: the stored one is kept.
		if status, _, _ := boss.PostFrom("/dashboard/alerts", "/dashboard/alerts/settings", with("chat_url", "")); status != http.StatusSeeOther {
			t.Fatal("save keeping the URL")
		}
		if s2, _ := e.db.AlertSettings(ctx, e.live.id.ID()); s2.ChatURL != s.ChatURL {
			t.Fatalf("the URL was not kept: %q", s2.ChatURL)
		}
		entries, _, err := e.db.AuditEntries(ctx, e.live.id, recon.AuditFilter{Action: recon.AuditChatUpdate, Page: 1, PerPage: 5})
		if err != nil || len(entries) != 1 {
			t.Fatalf("audit: %+v %v", entries, err)
		}
		for _, c := range entries[0].Changes {
			if strings.Contains(c.Before+c.After, "SECRET-TOKEN") {
				t.Errorf("the bot token in the audit log: %+v", c)
			}
		}

		// An alert shows on the page, in the reader's language.
		svc := &alerts.Service{Store: e.db, Location: e.loc, Node: "t"}
		now := time.Now().In(e.loc)
		at := time.Date(now.Year(), now.Month(), now.Day(), 7, 30, 0, 0, e.loc)
		if n, err := svc.Run(ctx, at); err != nil || n < 1 {
			t.Fatalf("alerts run: %d %v", n, err)
		}
		_, body = acct.Get("/dashboard/alerts")
		if !strings.Contains(body, "Tóm tắt ngày "+at.AddDate(0, 0, -1).Format("2006-01-02")) || !strings.Contains(body, "Tiền vào:") {
			t.Fatalf("the latest alerts: %s", body)
		}
	})
}
