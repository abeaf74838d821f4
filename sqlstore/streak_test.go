package sqlstore_test

import (
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestSuccessEndsOnlyAnOlderStreak: a record of attempts that all delivered
// (recordStreakDelivered) ends a target's streak of failures that started
// at or before its success, and keeps one that started after it (a later
// failure another node recorded first), as a record with failures does.
func TestSuccessEndsOnlyAnOlderStreak(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c, _ := companyWithIPN(t, db, false)
		t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		record := func(status string, at time.Time, code int) {
			t.Helper()
			d := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryIPN, Event: "E", Payload: []byte(`{}`)}
			if err := db.EnqueueDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
			o := recon.AttemptOutcome{Status: status, Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: at, URL: "https://shop.example.vn/ipn", StatusCode: code}}
			if status == recon.DeliveryPending {
				o.Next = at.Add(time.Hour)
			}
			if err := db.RecordAttempts(ctx, []recon.AttemptOutcome{o}); err != nil {
				t.Fatal(err)
			}
		}
		since := func() time.Time {
			t.Helper()
			h, err := db.TargetHealth(ctx, c.Tenant(), recon.DeliveryIPN)
			if err != nil {
				t.Fatal(err)
			}
			return h.FailingSince
		}
		record(recon.DeliveryPending, t0.Add(2*time.Hour), 500) // a streak from t0+2h
		if got := since(); !got.Equal(t0.Add(2 * time.Hour)) {
			t.Fatalf("after a failure the streak starts at %v, want %v", got, t0.Add(2*time.Hour))
		}
		record(recon.DeliveryDelivered, t0.Add(time.Hour), 200) // a success before it, recorded late
		if got := since(); !got.Equal(t0.Add(2 * time.Hour)) {
			t.Fatalf("an older success moved the streak to %v, want it kept at %v", got, t0.Add(2*time.Hour))
		}
		record(recon.DeliveryDelivered, t0.Add(3*time.Hour), 200)
		if got := since(); !got.IsZero() {
			t.Fatalf("a newer success left the streak at %v, want it ended", got)
		}
	})
}
