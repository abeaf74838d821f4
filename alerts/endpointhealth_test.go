package alerts_test

import (
	"strings"
	"testing"
	"time"

	"recon"
	"recon/alerts"
	"recon/sqlstore/dbtest"
)

// TestAlertEndpointDisabled (both engines): a target Recon disabled is
// told to the company's chat webhook once per disable, in Vietnamese, its
// English text ready for the dashboard; the host only, never the path.
func TestAlertEndpointDisabled(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		e := newEnv(t, engine)
		tenant := e.co.Tenant()
		settings := &recon.AlertSettings{Company: e.co.ID, FailingAttempts: 100, DailyHour: -1, ChatKind: recon.ChatGeneric, ChatURL: e.chat.URL + "/chat"}
		if err := e.db.SetAlertSettings(ctx, settings); err != nil {
			t.Fatal(err)
		}
		if err := e.db.SetIPN(ctx, tenant, &recon.Target{URL: "https://shop.example.vn/ipn?token=abc", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		d, err := e.db.SendTestNotification(ctx, tenant, recon.DeliveryIPN)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, hanoi)
		if err := e.db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: t0, URL: "https://shop.example.vn/ipn",
			StatusCode: 500, Error: "500 Internal Server Error"}, Status: recon.DeliveryPending, Next: t0.Add(time.Minute)}}); err != nil {
			t.Fatal(err)
		}
		svc := e.service("a")
		now := t0.Add(recon.EndpointDisableAfter)
		if n, err := svc.Run(ctx, now); err != nil || n != 0 {
			t.Fatalf("not disabled yet: %d %v", n, err)
		}
		if got, err := e.db.DisableFailingTargets(ctx, now); err != nil || len(got) != 1 {
			t.Fatalf("disable: %v %v", got, err)
		}
		for i := range 2 {
			n, err := svc.Run(ctx, now.Add(time.Duration(i)*time.Minute))
			if err != nil || n != 1-i {
				t.Fatalf("run %d: %d alerts, %v", i, n, err)
			}
		}
		chats := e.chats(t)
		if len(chats) != 1 || chats[0]["kind"] != recon.AlertDisabled || chats[0]["subject"] != "Địa chỉ nhận IPN đã bị Recon tắt" ||
			!strings.Contains(chats[0]["text"], "https://shop.example.vn") || strings.Contains(chats[0]["text"], "token") ||
			!strings.Contains(chats[0]["text"], "2026-11-20 09:00") {
			t.Fatalf("chat: %v", chats)
		}
		events, err := e.db.AlertEvents(ctx, tenant, 10)
		if err != nil || len(events) != 1 {
			t.Fatalf("events: %v %v", events, err)
		}
		if subject, text := alerts.Message("en", events[0]); subject != "Recon disabled the IPN target" || !strings.Contains(text, "re-enable the target in Settings") {
			t.Errorf("english: %q %q", subject, text)
		}
		if !(recon.AlertPrefs{Failing: true}).Wants(recon.AlertDisabled) || (recon.AlertPrefs{Queue: true, Daily: true}).Wants(recon.AlertDisabled) {
			t.Error("the failing switch does not choose the disabled alert")
		}
	})
}
