package sqlstore_test

import (
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// A link token past its lifetime ends at the page's next step, before the
// sweep comes by: the step is refused, and the expiry's events are written
// once (the sweep finds nothing left to do).
func TestLinkTokenExpiresAtTheNextStep(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		url := dbtest.NewURL(t, engine)
		start := time.Now()
		open := func(at time.Time) *sqlstore.DB {
			db, err := sqlstore.Open(t.Context(), url, sqlstore.WithClock(testkit.NewClock(at)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		before := open(start)
		if err := before.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
		if err := before.CreateCompany(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		cu := &recon.HubCustomer{Tenant: c.Tenant(), FullName: "Khách", Status: recon.HubCustomerActive}
		if err := before.CreateHubCustomer(t.Context(), cu); err != nil {
			t.Fatal(err)
		}
		lt := &recon.LinkToken{Tenant: c.Tenant(), CustomerXID: cu.XID, Purpose: recon.LinkPurposeLink, Language: "vi", Sandbox: true}
		if err := before.CreateLinkToken(t.Context(), lt, 30*time.Minute); err != nil {
			t.Fatal(err)
		}
		hash := recon.HashLinkToken(lt.Token)
		if _, _, err := before.StepLinkSession(t.Context(), hash, recon.LinkStep{Kind: recon.StepOpen}); err != nil {
			t.Fatal(err)
		}
		after := open(start.Add(30 * time.Minute))
		_, _, err := after.StepLinkSession(t.Context(), hash, recon.LinkStep{Kind: recon.StepOpen})
		if err == nil {
			t.Fatal("a step after the token's lifetime was accepted")
		}
		got, sessions, err := after.LinkToken(t.Context(), c.Tenant(), lt.XID)
		if err != nil || got.Status != recon.LinkTokenExpired || sessions[0].Status != recon.LinkSessionExpired {
			t.Fatalf("token %+v, sessions %+v, %v", got, sessions, err)
		}
		if n, _, err := after.ExpireHubLinks(t.Context(), start.Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("the sweep ended %d tokens (%v), want none left", n, err)
		}
		log, err := after.HubEventLog(t.Context(), c.Tenant(), lt.XID)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range log {
			names = append(names, e.Event)
		}
		want := []string{recon.EventLinkTokenCreated, recon.EventLinkSessionInitialized, recon.EventLinkSessionExpired, recon.EventLinkTokenExpired}
		if len(names) != len(want) {
			t.Fatalf("events %v, want %v", names, want)
		}
		for i := range want {
			if names[i] != want[i] {
				t.Fatalf("events %v, want %v", names, want)
			}
		}
	})
}
