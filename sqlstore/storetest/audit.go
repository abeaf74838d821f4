package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"recon"
)

// testAudit checks the audit log (recon.AuditStore): entries read back
// whole, newest first, filtered and paged; each tenant and mode reads only
// its own; recon.Audited records the entry in the change's transaction, once,
// and nothing when the change fails.
func testAudit(t *testing.T, open Open) {
	run(t, "AppendAndList", open, testAuditAppendAndList)
	run(t, "TenantsAndModes", open, testAuditTenantsAndModes)
	run(t, "InTheChangesTransaction", open, testAuditInTransaction)
}

func auditEntry(tenant recon.TenantID, at time.Time, action, actor, object string, changes ...recon.AuditChange) *recon.AuditEntry {
	return &recon.AuditEntry{Tenant: tenant, At: at, Action: action, Object: object, Changes: changes,
		Actor: recon.AuditActor{UserID: 0, Email: actor, Via: recon.AuditViaDashboard, IP: "192.0.2.7", UserAgent: "Firefox"}}
}

func testAuditAppendAndList(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := newUser(t, s, c.ID, "an@x.vn")
	live := c.Tenant()
	t0 := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC) // 06:30 on the 2nd in Hanoi
	first := auditEntry(live, t0, recon.AuditCompanyUpdate, "an@x.vn", "", recon.AuditChange{Field: "short_name", Before: "c1", After: "shop"})
	first.Actor.UserID = u.ID
	second := auditEntry(live, t0.Add(time.Hour), recon.AuditSecretRotate, "", "target ipn", recon.AuditChange{Field: "secret_key", After: recon.AuditRotated})
	second.Actor = recon.AuditActor{ClientID: "srv", Via: recon.AuditViaAPI, IP: "198.51.100.1"}
	third := auditEntry(live, t0.Add(2*time.Hour), recon.AuditUserRole, "an@x.vn", "user b@x.vn", recon.AuditChange{Field: "role", Before: "Member", After: "Accountant"})
	for _, e := range []*recon.AuditEntry{first, second, third} {
		if err := s.AppendAudit(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if e.ID == 0 {
			t.Fatal("no id")
		}
	}
	list := func(f recon.AuditFilter) ([]*recon.AuditEntry, int64) {
		t.Helper()
		if f.PerPage == 0 {
			f.Page, f.PerPage = 1, 50
		}
		got, total, err := s.AuditEntries(t.Context(), live, f)
		if err != nil {
			t.Fatal(err)
		}
		return got, total
	}
	got, total := list(recon.AuditFilter{})
	if total != 3 {
		t.Fatalf("total %d, want 3", total)
	}
	diff(t, "entries newest first", []*recon.AuditEntry{third, second, first}, got)
	for _, tc := range []struct {
		name string
		f    recon.AuditFilter
		want []*recon.AuditEntry
	}{
		{"family", recon.AuditFilter{Family: "secret"}, []*recon.AuditEntry{second}},
		{"action", recon.AuditFilter{Action: recon.AuditUserRole}, []*recon.AuditEntry{third}},
		{"actor by e-mail", recon.AuditFilter{Actor: "an@x.vn"}, []*recon.AuditEntry{third, first}},
		{"actor by client", recon.AuditFilter{Actor: "srv"}, []*recon.AuditEntry{second}},
		{"business day", recon.AuditFilter{From: "2026-03-02", To: "2026-03-02", Location: time.FixedZone("ICT", 7*3600)}, []*recon.AuditEntry{third, second, first}},
		{"UTC day", recon.AuditFilter{To: "2026-03-01"}, []*recon.AuditEntry{first}},
		{"second page", recon.AuditFilter{Page: 2, PerPage: 2}, []*recon.AuditEntry{first}},
	} {
		got, _ := list(tc.f)
		diff(t, tc.name, tc.want, got)
	}
	for _, f := range []recon.AuditFilter{{Family: "nope", Page: 1, PerPage: 1}, {Action: "x.y", Page: 1, PerPage: 1}, {From: "1 March", Page: 1, PerPage: 1}, {Page: 1, PerPage: recon.AuditMaxLimit + 1}} {
		if _, _, err := s.AuditEntries(t.Context(), live, f); recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("%+v: %v, want invalid", f, err)
		}
	}
	if err := s.AppendAudit(t.Context(), auditEntry(live, t0, "made.up", "", "")); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("unknown action: %v", err)
	}
	// Over-long text is cut, not refused: the change has been made.
	long := auditEntry(live, t0, recon.AuditCompanyUpdate, "", strings.Repeat("é", 1000))
	if err := s.AppendAudit(t.Context(), long); err != nil || len(long.Object) > 510 {
		t.Fatalf("long object: %v, %d bytes", err, len(long.Object))
	}
}

func testAuditTenantsAndModes(t *testing.T, s recon.Store) {
	c1, c2 := newCompany(t, s, 1), newCompany(t, s, 2)
	test, err := s.TestTenant(t.Context(), c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tn := range []recon.TenantID{c1.Tenant(), test.ID, c2.Tenant()} {
		if err := s.AppendAudit(t.Context(), auditEntry(tn, t0, recon.AuditCompanyUpdate, "", "tenant "+tn.String())); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range []recon.TenantID{c1.Tenant(), test.ID, c2.Tenant()} {
		got, total, err := s.AuditEntries(t.Context(), tn, recon.AuditFilter{Page: 1, PerPage: 10})
		if err != nil || total != 1 || len(got) != 1 || got[0].Object != "tenant "+tn.String() || got[0].Tenant != tn {
			t.Fatalf("tenant %v: %+v (%d), %v", tn, got, total, err)
		}
	}
}

func testAuditInTransaction(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	rename := func(name string, fail error) error {
		e := auditEntry(c.Tenant(), t0, recon.AuditCompanyUpdate, "an@x.vn", "", recon.AuditChange{Field: "short_name", After: name})
		return recon.Audited(t.Context(), s, e, func(ctx context.Context) error {
			_, err := s.UpdateCompany(ctx, c.ID, func(co *recon.Company) error {
				co.ShortName = name
				return fail
			})
			return err
		})
	}
	if err := rename("shop", nil); err != nil {
		t.Fatal(err)
	}
	if err := rename("never", recon.Errorf(recon.EINVALID, "refused")); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("failing change: %v", err)
	}
	// A change that writes nothing through a transaction gets its entry
	// right after it.
	if err := recon.Audited(t.Context(), s, auditEntry(c.Tenant(), t0, recon.AuditUserInvite, "", "x"), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	got, total, err := s.AuditEntries(t.Context(), c.Tenant(), recon.AuditFilter{Page: 1, PerPage: 10})
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || got[1].Changes[0].After != "shop" || got[0].Action != recon.AuditUserInvite {
		t.Fatalf("entries: %d %+v", total, got)
	}
}
