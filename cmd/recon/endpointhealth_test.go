package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestDeliveriesEnableCLI: a target Recon disabled is re-enabled at the
// command line, audited, with what it missed queued again; the replay of
// what it missed is refused while it is disabled; bad input is refused
// naming the problem.
func TestDeliveriesEnableCLI(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	rc := testkit.NewReceiver(t)
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
	other := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Sen Vàng", "--short-name", "SENVANG")["id"])
	cliJSON(t, dbURL, "ipn", "set", "--company", co, "--url", rc.URL+"/ipn", "--sandbox", "--allow-private-targets")
	db := dbtest.OpenURL(t, dbURL)
	ctx := t.Context()
	var id int64
	fmt.Sscan(co, &id)
	d := &recon.Delivery{CompanyID: id, Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{}`)}
	if err := db.EnqueueDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-73 * time.Hour)
	if err := db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: t0, URL: rc.URL + "/ipn",
		StatusCode: 503, Error: "503 Service Unavailable"}, Status: recon.DeliveryPending, Next: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.DisableFailingTargets(ctx, time.Now()); err != nil || len(got) != 1 {
		t.Fatalf("disable: %v, %v", got, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"deliveries", "replay", "--missed", "--company", co, "--kind", "ipn"}, "re-enable it first"},
		{[]string{"deliveries", "replay", "--missed", "--company", co}, "--missed takes --company and --kind only"},
		{[]string{"deliveries", "replay", "--missed", "--kind", "ipn"}, "--missed needs --company"},
		{[]string{"deliveries", "enable", "--company", co, "--kind", "sms"}, "kind must be one of"},
		{[]string{"deliveries", "enable", "--company", other, "--kind", "ipn"}, "no ipn target"},
		{[]string{"deliveries", "enable", "--company", "999", "--kind", "ipn"}, "999"},
		{[]string{"deliveries", "enable", "--company", co}, `"kind" not set`},
	} {
		if out, err := cli(t, dbURL, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("recon %s: %v (output %q), want an error naming %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	res := cliJSON(t, dbURL, "deliveries", "enable", "--company", co, "--kind", "ipn", "--replay")
	if res["replayed"] != 1.0 || res["active"] != true {
		t.Fatalf("enable --replay: %v", res)
	}
	if got, err := db.Delivery(ctx, recon.TenantID{}, d.ID); err != nil || got.Status != recon.DeliveryPending {
		t.Fatalf("the missed notification: %+v, %v", got, err)
	}
	entries, _, err := db.AuditEntries(ctx, recon.LiveTenant(id), recon.AuditFilter{Family: "target", Page: 1, PerPage: 10})
	if err != nil || len(entries) < 2 || entries[0].Action != recon.AuditTargetEnabled || entries[0].Actor.Via != recon.AuditViaCLI ||
		entries[1].Action != recon.AuditTargetDisabled || entries[1].Actor.Via != recon.AuditViaRecon {
		t.Fatalf("audit: %+v, %v", entries, err)
	}
}
