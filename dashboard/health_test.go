package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestDashboardEndpointHealth: the targets card shows a target Recon
// disabled (when, in the business time zone, why, how many notifications
// wait) with its buttons; re-enabling and replaying goes through a
// confirmation page, is audited, and makes what it missed due; an unknown
// kind is 400, a target the company does not have 404, and another company
// sees nothing of it. Both engines.
func TestDashboardEndpointHealth(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := t.Context()
		// The fixture's notifications delivered first: a success recorded
		// after the failure below would rightly end the streak.
		var sent *recon.Delivery
		testkit.WaitFor(t, "the fixture's notifications", 20*time.Second, func() bool {
			pending, err := e.db.Deliveries(ctx, e.live.id, recon.DeliveryFilter{Status: recon.DeliveryPending})
			delivered, _ := e.db.Deliveries(ctx, e.live.id, recon.DeliveryFilter{Status: recon.DeliveryDelivered, Kind: recon.DeliveryIPN})
			if err == nil && len(pending) == 0 && len(delivered) > 0 {
				sent = delivered[0]
				return true
			}
			return false
		})
		// A failed attempt 73 hours ago starts the streak (recorded for a
		// delivered notification, which it leaves delivered).
		now := time.Now()
		t0 := now.Add(-73 * time.Hour)
		if err := e.db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: sent.ID, At: t0, URL: e.rc.URL,
			StatusCode: 500, Error: "500 Internal Server Error"}, Status: recon.DeliveryPending, Next: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		got, err := e.db.DisableFailingTargets(ctx, now)
		if err != nil || len(got) != 1 || got[0].Tenant != e.live.id {
			t.Fatalf("disable: %v, %v", got, err)
		}
		// A notification enqueued now is held by the dispatcher, not sent.
		before := len(e.rc.Got())
		d := &recon.Delivery{CompanyID: e.live.id.ID(), Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{}`)}
		if err := e.db.EnqueueDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the notification held", 20*time.Second, func() bool {
			got, err := e.db.Delivery(ctx, e.live.id, d.ID)
			return err == nil && got.LastError == recon.HeldError
		})
		if n := len(e.rc.Got()); n != before {
			t.Fatalf("the disabled target received %d requests", n-before)
		}
		b := e.signedIn(t, "boss@saomai.vn")
		_, body := b.Get("/dashboard/settings")
		at := got[0].DisabledAt.In(e.loc).Format("2006-01-02 15:04:05")
		for _, want := range []string{`id="health-ipn"`, at, `id="held-ipn">1<`, `id="enable-ipn"`, `id="enable-replay-ipn"`, "500 Internal Server Error"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the card lacks %q: %s", want, body)
			}
		}
		// Without the confirmation: the page says what will happen, nothing changes.
		status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/enable-target", url.Values{"kind": {"ipn"}, "replay": {"1"}})
		if h, _ := e.db.TargetHealth(ctx, e.live.id, recon.DeliveryIPN); status != 200 || !strings.Contains(body, `id="confirm-button"`) ||
			!strings.Contains(body, `id="c-held"`) || h.Active {
			t.Fatalf("without the confirmation: %d %+v %s", status, h, body)
		}
		// Failure paths.
		for _, c := range []struct {
			kind   string
			status int
		}{{"sms", http.StatusBadRequest}, {"", http.StatusBadRequest}, {"hub_ipn", http.StatusNotFound}} {
			if status, _, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/enable-target", url.Values{"kind": {c.kind}, "confirm": {"yes"}}); status != c.status {
				t.Errorf("kind %q: %d, want %d", c.kind, status, c.status)
			}
		}
		// Another company's Admin sees nothing of it, and acts on its own target only.
		e.dashUser(t, e.other, "admin@other.vn", recon.RoleAdmin)
		ob := e.browser(t).SignedIn(e.other.company, "admin@other.vn", dashPassword)
		if _, body := ob.Get("/dashboard/settings"); strings.Contains(body, `id="health-ipn"`) {
			t.Fatalf("another company sees the card: %s", body)
		}
		if h, _ := e.db.TargetHealth(ctx, e.live.id, recon.DeliveryIPN); h.Active {
			t.Fatal("re-enabled by a refused request")
		}
		// Confirmed: active again, the missed notification due, audited.
		status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/enable-target", url.Values{"kind": {"ipn"}, "replay": {"1"}, "confirm": {"yes"}})
		if status != http.StatusSeeOther || !strings.Contains(loc, "enabled=ipn") {
			t.Fatalf("confirmed: %d %s", status, loc)
		}
		h, err := e.db.TargetHealth(ctx, e.live.id, recon.DeliveryIPN)
		if err != nil || !h.Active || h.DisabledBy != "" || h.Held != 0 {
			t.Fatalf("after re-enabling: %+v, %v", h, err)
		}
		if got, _ := e.db.Delivery(ctx, e.live.id, d.ID); got.LastError == recon.HeldError {
			t.Fatalf("the missed notification is still held: %+v", got)
		}
		if _, body := b.Get(loc); !strings.Contains(body, `id="target-enabled"`) || strings.Contains(body, `id="health-ipn"`) {
			t.Fatalf("after re-enabling, the page: %s", body)
		}
		entries, _, err := e.db.AuditEntries(ctx, e.live.id, recon.AuditFilter{Family: "target", Page: 1, PerPage: 10})
		if err != nil || len(entries) < 2 || entries[0].Action != recon.AuditTargetEnabled || entries[0].Actor.Via != recon.AuditViaDashboard ||
			entries[1].Action != recon.AuditTargetDisabled {
			t.Fatalf("audit: %+v, %v", entries, err)
		}
		if _, body := b.Get("/dashboard/audit"); !strings.Contains(body, "Recon") {
			t.Fatalf("the audit log does not name Recon: %s", body)
		}
	})
}
