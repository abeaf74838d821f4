package server

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestEndpointHealthStep: the maintenance step disables a target failing
// for 3 days, logs which, and makes the merchant's alert at once (shown on
// the dashboard's alerts page); run again, it does nothing more. Both
// engines.
func TestEndpointHealthStep(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		t0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
		clock := testkit.NewClock(t0)
		ict := time.FixedZone("ICT", 7*3600)
		s, err := New(ctx, db, Config{BaseURL: "http://127.0.0.1", Clock: clock, Location: ict})
		if err != nil {
			t.Fatal(err)
		}
		co := &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive}
		if err := db.CreateCompany(ctx, co); err != nil {
			t.Fatal(err)
		}
		if err := db.SetIPN(ctx, co.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		d := &recon.Delivery{CompanyID: co.ID, Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{}`)}
		if err := db.EnqueueDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: t0,
			URL: "https://shop.example.vn/ipn", StatusCode: 500, Error: "500 Internal Server Error"}, Status: recon.DeliveryPending, Next: t0.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		var step Step
		for _, l := range s.Loops() {
			for _, st := range l.Steps {
				if st.Doing == "disabling failing notification targets" {
					step = st
				}
			}
		}
		if step.Run == nil {
			t.Fatal("no endpoint health step in the loops")
		}
		var logs testkit.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		clock.Set(t0.Add(recon.EndpointDisableAfter - time.Second))
		Loop{Steps: []Step{step}}.Once(ctx, clock, log)
		if logs.String() != "" {
			t.Fatalf("before 72 h: %s", logs.String())
		}
		clock.Set(t0.Add(recon.EndpointDisableAfter))
		Loop{Steps: []Step{step}}.Once(ctx, clock, log)
		Loop{Steps: []Step{step}}.Once(ctx, clock, log)
		if got := logs.String(); strings.Count(got, `msg="disabled failing notification targets" count=1 target="ipn of company`) != 1 ||
			!strings.Contains(got, "(live) https://shop.example.vn") || strings.Contains(got, "WARN") {
			t.Fatalf("logged %s", got)
		}
		events, err := db.AlertEvents(ctx, co.Tenant(), 10)
		var disabled []*recon.AlertEvent
		for _, e := range events {
			if e.Kind == recon.AlertDisabled {
				disabled = append(disabled, e)
			}
		}
		if err != nil || len(disabled) != 1 || !strings.Contains(disabled[0].Subject, "Recon") {
			t.Fatalf("alerts: %+v, %v", disabled, err)
		}
	})
}
