package linking_test

import (
	"slices"
	"testing"
	"time"

	"recon"
	"recon/linking"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestSimulate: each of the 13 events happens through the page's own path
// (recon trigger's), with the events on the way, in the tenant only.
func TestSimulate(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		b := struct {
			store          *sqlstore.DB
			company, other *recon.Company
		}{db, newCompany(t, db), newCompany(t, db)}
		h := &linking.Service{Store: b.store, BaseURL: "http://hub.test"}
		timeline := func(sim *linking.Simulation) []string {
			t.Helper()
			var names []string
			for _, xid := range sim.LinkTokens {
				log, err := b.store.HubEventLog(t.Context(), b.company.Tenant(), xid)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range log {
					names = append(names, e.Event)
				}
			}
			return names
		}
		for _, event := range recon.HubEvents {
			sim, err := h.Simulate(t.Context(), b.company.Tenant(), true, event)
			if err != nil {
				t.Fatalf("%s: %v", event, err)
			}
			if !sim.ExpiresAt.IsZero() {
				// The time-driven ones: a running server's sweep ends the token.
				if _, _, err := b.store.ExpireHubLinks(t.Context(), sim.ExpiresAt.Add(time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			if got := timeline(sim); !slices.Contains(got, event) {
				t.Errorf("%s: the timeline holds %v", event, got)
			}
			if sim.Customer.Tenant != b.company.Tenant() {
				t.Errorf("%s: customer of tenant %v", event, sim.Customer.Tenant)
			}
		}
		// The linked account is an account of the tenant; the other has nothing.
		if n, err := b.store.BankAccounts(t.Context(), b.company.Tenant()); err != nil || len(n) == 0 {
			t.Fatalf("accounts: %v %v", n, err)
		}
		if n, err := b.store.BankAccounts(t.Context(), b.other.Tenant()); err != nil || len(n) != 0 {
			t.Fatalf("the other tenant's accounts: %v %v", n, err)
		}
		// Live, on a production server: no bank to reach, said plainly.
		prod := &linking.Service{Store: b.store}
		if _, err := prod.Simulate(t.Context(), b.other.Tenant(), false, recon.EventBankAccountLinked); recon.ErrorCode(err) != recon.EUNAVAILABLE {
			t.Fatalf("production without a connector: %v", err)
		}
		if list, _, err := b.store.HubCustomers(t.Context(), b.other.Tenant(), recon.HubCustomerFilter{Page: 1, PerPage: 10}); err != nil || len(list) != 0 {
			t.Fatalf("the refused simulation made %v (%v)", list, err)
		}
		if _, err := h.Simulate(t.Context(), b.company.Tenant(), true, "NOPE"); recon.ErrorCode(err) != recon.EINVALID {
			t.Fatalf("unknown event: %v", err)
		}
	})
}
