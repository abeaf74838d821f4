package storetest

import (
	"crypto/sha256"
	"testing"
	"time"

	"recon"
)

// testDashboard checks the dashboard's storage: sessions (hashed token,
// idle and absolute expiry, mode switch, sign-out) and the home screen's
// aggregates, per tenant.
func testDashboard(t *testing.T, open Open) {
	run(t, "Sessions", open, testDashboardSessions)
	run(t, "HomeAggregates", withAccount(open), testDashboardHomeAggregates)
	t.Run("Search", func(t *testing.T) { testSearch(t, open) })
}

func testDashboardSessions(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	u := newUser(t, s, c.ID, "a@x.vn")
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	hash := func(tok string) []byte { h := sha256.Sum256([]byte(tok)); return h[:] }
	newSession := func(tok string) *recon.DashboardSession {
		sess := &recon.DashboardSession{UserID: u.ID, Company: c.ID, Live: true, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}
		if err := s.CreateDashboardSession(t.Context(), sess, hash(tok)); err != nil {
			t.Fatal(err)
		}
		return sess
	}
	const idle = 30 * time.Minute
	sess := newSession("tok-a")
	got, err := s.DashboardSession(t.Context(), hash("tok-a"), t0.Add(10*time.Minute), idle)
	if err != nil {
		t.Fatal(err)
	}
	sess.LastSeenAt = t0.Add(10 * time.Minute) // the request moved it
	diff(t, "session", sess, got)
	// Within the minute it stays (one write a minute, not one a page).
	if got, err = s.DashboardSession(t.Context(), hash("tok-a"), t0.Add(10*time.Minute+59*time.Second), idle); err != nil || !got.LastSeenAt.Equal(sess.LastSeenAt) {
		t.Fatalf("within the minute: %+v, %v", got, err)
	}
	// A request 25 minutes after the last one keeps it alive: idle
	// counts from the last request, which moved last_seen_at.
	if _, err := s.DashboardSession(t.Context(), hash("tok-a"), t0.Add(35*time.Minute), idle); err != nil {
		t.Fatalf("within the idle time of the last request: %v", err)
	}
	if _, err := s.DashboardSession(t.Context(), hash("tok-a"), t0.Add(66*time.Minute), idle); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("after the idle time: %v, want unauthorized", err)
	}
	// An idle session is gone for good.
	if _, err := s.DashboardSession(t.Context(), hash("tok-a"), t0.Add(36*time.Minute), idle); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("an ended session came back: %v", err)
	}
	// The absolute end holds however active the session is.
	newSession("tok-b")
	for at := t0; at.Before(t0.Add(12 * time.Hour)); at = at.Add(20 * time.Minute) {
		if _, err := s.DashboardSession(t.Context(), hash("tok-b"), at, idle); err != nil {
			t.Fatalf("at %s: %v", at, err)
		}
	}
	if _, err := s.DashboardSession(t.Context(), hash("tok-b"), t0.Add(12*time.Hour), idle); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("past the absolute end: %v, want unauthorized", err)
	}
	// Mode switch and sign-out.
	newSession("tok-c")
	if err := s.SetDashboardSessionMode(t.Context(), hash("tok-c"), false); err != nil {
		t.Fatal(err)
	}
	if got, err := s.DashboardSession(t.Context(), hash("tok-c"), t0, idle); err != nil || got.Live {
		t.Fatalf("after the switch to test: %+v, %v", got, err)
	}
	if err := s.DeleteDashboardSession(t.Context(), hash("tok-c")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DashboardSession(t.Context(), hash("tok-c"), t0, idle); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("after sign-out: %v", err)
	}
	if err := s.SetDashboardSessionMode(t.Context(), hash("tok-c"), true); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("switching a deleted session: %v", err)
	}
	if _, err := s.DashboardSession(t.Context(), hash("never"), t0, idle); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("unknown token: %v", err)
	}
	// A user of another company cannot be given a session in this one.
	other := newCompany(t, s, 2)
	err = s.CreateDashboardSession(t.Context(), &recon.DashboardSession{UserID: u.ID, Company: other.ID, Live: true,
		CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(time.Hour)}, hash("tok-d"))
	wantCode(t, err, recon.ENOTFOUND, "")
}

func testDashboardHomeAggregates(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	tt := testTenant(t, s, c.ID)
	ta := newAccount(t, s, tt.ID.ID(), "111")
	if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	newOrder(t, s, c.ID, a.ID, "A", "DH70001", 100_000)
	newOrder(t, s, c.ID, a.ID, "B", "DH70002", 50_000)
	rows := []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-01 10:00:00", 100_000, 0), // A matched
		tx(a.ID, "R2", "2026-03-01 11:00:00", 20_000, 0),  // B underpaid
		tx(a.ID, "R3", "2026-03-01 12:00:00", 7_000, 0),   // no code
		tx(a.ID, "R4", "2026-03-01 23:59:59", 0, 3_000),   // out
		tx(a.ID, "R5", "2026-03-03 00:00:00", 5_000, 0),   // A duplicate: unmatched
	}
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), rows, []string{"DH70001", "DH70002", "", "", "DH70001"}); err != nil {
		t.Fatal(err)
	}
	// The test tenant's money stays out of the live figures, and the reverse.
	if _, err := s.IngestTransactions(t.Context(), tt.ID, []recon.TransactionInput{tx(ta.ID, "T1", "2026-03-01 10:00:00", 999, 0)}, []string{""}); err != nil {
		t.Fatal(err)
	}
	got, err := s.DayFlows(t.Context(), c.Tenant(), "2026-02-28", "2026-03-03")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "live flows", []recon.DayFlow{
		{Day: "2026-02-28"},
		{Day: "2026-03-01", In: 127_000, Out: 3_000, InCount: 3, OutCount: 1, Matched: 120_000, MatchedCount: 2},
		{Day: "2026-03-02"},
		{Day: "2026-03-03", In: 5_000, InCount: 1},
	}, got)
	got, err = s.DayFlows(t.Context(), tt.ID, "2026-03-01", "2026-03-01")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "test flows", []recon.DayFlow{{Day: "2026-03-01", In: 999, InCount: 1}}, got)
	for _, r := range [][2]string{{"2026-03-02", "2026-03-01"}, {"2026-01-01", "2026-03-31"}, {"x", "2026-03-01"}} {
		_, err := s.DayFlows(t.Context(), c.Tenant(), r[0], r[1])
		wantCode(t, err, recon.EINVALID, "")
	}

	att, err := s.Attention(t.Context(), c.Tenant())
	if err != nil {
		t.Fatal(err)
	}
	// R2 underpaid, R3 without a code into the orders' account, R5 a duplicate.
	diff(t, "live attention", &recon.Attention{UnderpaidOrders: 1, UnderpaidShortfall: 30_000, OpenExceptions: 3}, att)
	// A's IPN: failing after one attempt, then dead.
	ds := storeAs[recon.DeliveryStore](t, s)
	list, err := ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("deliveries: %v %v", list, err)
	}
	next := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: list[0].ID, At: next, URL: "https://shop.example.vn/ipn", Error: "refused"}, recon.DeliveryPending, next); err != nil {
		t.Fatal(err)
	}
	if att, err = s.Attention(t.Context(), c.Tenant()); err != nil || att.FailingDeliveries != 1 || att.DeadDeliveries != 0 {
		t.Fatalf("after a failed attempt: %+v, %v", att, err)
	}
	// The log's "failing" filter finds it; a failing one cannot be dead.
	failing, err := ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Failing: true, Limit: 10})
	if err != nil || len(failing) != 1 || failing[0].ID != list[0].ID {
		t.Fatalf("failing: %v, %v", failing, err)
	}
	if failing, err = ds.Deliveries(t.Context(), tt.ID, recon.DeliveryFilter{Failing: true, Limit: 10}); err != nil || len(failing) != 0 {
		t.Fatalf("failing in the test tenant: %v, %v", failing, err)
	}
	_, err = ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Failing: true, Status: recon.DeliveryDead, Limit: 10})
	wantCode(t, err, recon.EINVALID, "failing deliveries are pending; status dead cannot be failing too")
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: list[0].ID, At: next, URL: "https://shop.example.vn/ipn", Error: "refused"}, recon.DeliveryDead, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if att, err = s.Attention(t.Context(), c.Tenant()); err != nil || att.FailingDeliveries != 0 || att.DeadDeliveries != 1 {
		t.Fatalf("after the last attempt: %+v, %v", att, err)
	}
	if att, err = s.Attention(t.Context(), tt.ID); err != nil || *att != (recon.Attention{}) {
		t.Fatalf("test tenant: %+v, %v", att, err)
	}

	// The order's IPN, and none of another order's.
	o, err := s.Order(t.Context(), c.Tenant(), "A")
	if err != nil {
		t.Fatal(err)
	}
	got2, err := s.OrderDeliveries(t.Context(), c.Tenant(), o, 10)
	if err != nil || len(got2) != 1 || got2[0].ID != list[0].ID || got2[0].Event != recon.IPNOrderPaid {
		t.Fatalf("A's deliveries: %v, %v", got2, err)
	}
	b, err := s.Order(t.Context(), c.Tenant(), "B")
	if err != nil {
		t.Fatal(err)
	}
	if got2, err = s.OrderDeliveries(t.Context(), c.Tenant(), b, 10); err != nil || len(got2) != 0 {
		t.Fatalf("B's deliveries: %v, %v", got2, err)
	}
	if got2, err = s.OrderDeliveries(t.Context(), tt.ID, o, 10); err != nil || len(got2) != 0 {
		t.Fatalf("A's deliveries seen from the test tenant: %v, %v", got2, err)
	}

	// A's void: its TRANSACTION_VOID is A's too, found by the order's id.
	voided, err := s.VoidOrder(t.Context(), c.Tenant(), "A", time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), func(o *recon.Order) (*recon.Delivery, error) {
		return recon.IPNDelivery(o, recon.IPNTransactionVoid, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got2, err = s.OrderDeliveries(t.Context(), c.Tenant(), voided, 10); err != nil || len(got2) != 2 ||
		got2[0].Event != recon.IPNOrderPaid || got2[1].Event != recon.IPNTransactionVoid || got2[1].OrderID != o.ID {
		t.Fatalf("A's deliveries after the void: %v, %v", got2, err)
	}
	if got2, err = s.OrderDeliveries(t.Context(), c.Tenant(), voided, 1); err != nil || len(got2) != 1 || got2[0].Event != recon.IPNOrderPaid {
		t.Fatalf("A's first delivery: %v, %v", got2, err)
	}

	// R5, A's duplicate, matched to B by hand: the 3rd's money in now paid an order.
	r5, _, err := s.Transactions(t.Context(), c.Tenant(), recon.TransactionFilter{ReferenceNumber: "R5", Page: 1, Limit: 1})
	if err != nil || len(r5) != 1 {
		t.Fatalf("R5: %v %v", r5, err)
	}
	admin := &recon.User{Company: c.ID, Email: "ketoan@saomai.vn", Role: recon.RoleAdmin}
	if err := s.CreateUser(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResolveException(t.Context(), c.Tenant(), r5[0].ID, recon.ResolveInput{Action: recon.ResolveMatch, OrderID: b.ID, Note: "khách chuyển nhầm mã"}, admin, time.Now()); err != nil {
		t.Fatal(err)
	}
	if att, err = s.Attention(t.Context(), c.Tenant()); err != nil || att.OpenExceptions != 2 {
		t.Fatalf("open exceptions after a resolution: %+v, %v", att, err)
	}
	got, err = s.DayFlows(t.Context(), c.Tenant(), "2026-03-03", "2026-03-03")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "flows after the match by hand", []recon.DayFlow{{Day: "2026-03-03", In: 5_000, InCount: 1, Matched: 5_000, MatchedCount: 1}}, got)
	// Retention deletes the 1st's rows: its sums go with them.
	if _, err := s.UpdateCompany(t.Context(), c.ID, func(co *recon.Company) error { co.Config.DataStorageDays = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.(recon.RetentionStore).ApplyRetention(t.Context(), time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	got, err = s.DayFlows(t.Context(), c.Tenant(), "2026-03-01", "2026-03-03")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "flows after retention", []recon.DayFlow{{Day: "2026-03-01"}, {Day: "2026-03-02"},
		{Day: "2026-03-03", In: 5_000, InCount: 1, Matched: 5_000, MatchedCount: 1}}, got)
}
