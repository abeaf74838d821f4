package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestReplayMissed: POST /api/v1/deliveries/replay with missed replays what
// a target disabled by Recon missed, only once it is active again (saving it
// active, as PUT /v1/ipn does, re-enables it); another company's or a
// missing target is 404; bad input is 400 naming the field.
func TestReplayMissed(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		ctx := t.Context()
		tenant := b.company.Tenant()
		db := b.store.(*sqlstore.DB)
		ipn := &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}
		if err := b.store.SetIPN(ctx, tenant, ipn); err != nil {
			t.Fatal(err)
		}
		d := &recon.Delivery{CompanyID: b.company.ID, Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{}`)}
		if err := b.store.EnqueueDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now().Add(-80 * time.Hour)
		if err := b.store.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: t0,
			URL: ipn.URL, StatusCode: 500, Error: "500 Internal Server Error"}, Status: recon.DeliveryPending, Next: t0.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.DisableFailingTargets(ctx, time.Now()); err != nil || len(got) != 1 {
			t.Fatalf("disable: %v, %v", got, err)
		}
		status, _, body := b.do(t, "POST", "/api/v1/deliveries/replay", "deliveries", `{"kind":"ipn","missed":true}`)
		if status != 409 || !strings.Contains(fmt.Sprint(body["message"]), "re-enable it first") {
			t.Fatalf("replay while disabled: %d %v", status, body)
		}
		// Saved active (PUT /v1/ipn, the dashboard's form): re-enabled.
		ipn.Secret, ipn.SigningSecret = "", ""
		if err := b.store.SetIPN(ctx, tenant, ipn); err != nil {
			t.Fatal(err)
		}
		h, err := db.TargetHealth(ctx, tenant, recon.DeliveryIPN)
		if err != nil || !h.Active || h.DisabledBy != "" || !h.FailingSince.IsZero() || h.Held != 1 {
			t.Fatalf("after saving it active: %+v, %v", h, err)
		}
		status, _, body = b.do(t, "POST", "/api/v1/deliveries/replay", "deliveries", `{"kind":"ipn","missed":true}`)
		if status != 200 || jsonText(body["data"]) != `{"replayed":1}` {
			t.Fatalf("replay missed: %d %v", status, body)
		}
		if got, _ := b.store.Delivery(ctx, tenant, d.ID); got.Status != recon.DeliveryPending || got.LastError != "" {
			t.Fatalf("replayed: %+v", got)
		}
		for _, c := range []struct {
			body    string
			status  int
			message string
		}{
			{`{"kind":"webhook","missed":true}`, 404, "no webhook target"},
			{`{"missed":true}`, 400, "kind is required with missed"},
			{`{"kind":"sms","missed":true}`, 400, "kind must be one of"},
			{`{"kind":"ipn","missed":true,"since":"2026-01-01 00:00:00"}`, 400, "since is not taken with missed"},
			{`{"kind":"ipn","missed":"yes"}`, 400, "missed"},
			{`{"kind":"ipn","missed":true,"all":true}`, 400, "unknown field"},
		} {
			status, _, body := b.do(t, "POST", "/api/v1/deliveries/replay", "deliveries", c.body)
			if status != c.status || !strings.Contains(fmt.Sprint(body["message"]), c.message) {
				t.Errorf("%s: %d %v, want %d %q", c.body, status, body, c.status, c.message)
			}
		}
	})
}
