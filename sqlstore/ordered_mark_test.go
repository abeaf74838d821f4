package sqlstore_test

import (
	"slices"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestOrderedMarkPutRight: deliveries.ordered (migration 00046; docs/design.md,
// D7, "Ordered targets") follows the target: set at enqueue, changed with the
// target's save; a delivery left with its target's old setting (enqueued
// while the target was being saved) is claimed by neither selection until a
// heartbeat puts the mark right, and then at once; a replay marks a
// delivery as its target is then.
func TestOrderedMarkPutRight(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c, target := companyWithIPN(t, db, true)
		enqueueTwo := func() []int64 {
			t.Helper()
			var ids []int64
			for _, ev := range []string{"A1", "A2"} {
				d := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryIPN, Event: ev, Payload: []byte(`{}`)}
				if err := db.EnqueueDelivery(ctx, d); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, d.ID)
			}
			return ids
		}
		now := time.Now().Add(time.Second)
		ids := enqueueTwo()
		claim := func(node string) []int64 { return claimIDs(t, db, node, now) }
		// Ordered: the head only.
		if got := claim("n1"); !slices.Equal(got, ids[:1]) {
			t.Fatalf("ordered target claimed %v, want the head %v", got, ids[:1])
		}
		if err := db.Exec(ctx, `UPDATE deliveries SET lease_until = NULL, claimed_by = NULL WHERE id = $1`, ids[0]); err != nil {
			t.Fatal(err)
		}
		// Turned off: both at once (the save marks them).
		target.Ordered = false
		if err := db.SetIPN(ctx, c.Tenant(), target); err != nil {
			t.Fatal(err)
		}
		if got := claim("n2"); !slices.Equal(got, ids) {
			t.Fatalf("after turning ordered off claimed %v, want %v", got, ids)
		}
		if err := db.Exec(ctx, `UPDATE deliveries SET lease_until = NULL, claimed_by = NULL`); err != nil {
			t.Fatal(err)
		}
		// A mark left behind: the unordered walk passes over a marked row
		// and the target is not ordered, so nothing takes it...
		if err := db.Exec(ctx, `UPDATE deliveries SET ordered = true WHERE id = $1`, ids[1]); err != nil {
			t.Fatal(err)
		}
		if got := claim("n3"); !slices.Equal(got, ids[:1]) {
			t.Fatalf("with a stale mark claimed %v, want %v only", got, ids[:1])
		}
		// ...until a heartbeat puts it right (the beat also releases n3's
		// claim: n3 never joined).
		if _, err := db.BeatDeliveryNode(ctx, "n4", time.Now(), time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := claim("n4"); !slices.Contains(got, ids[1]) {
			t.Fatalf("after the heartbeat claimed %v, want %d among them", got, ids[1])
		}

		// A replay takes the mark of the target as it is now: a delivery
		// that died while the target was ordered, replayed once it is not,
		// goes with the unordered ones.
		target.Ordered = true
		if err := db.SetIPN(ctx, c.Tenant(), target); err != nil {
			t.Fatal(err)
		}
		dead := enqueueTwo()[0]
		if err := db.Exec(ctx, `UPDATE deliveries SET status = 'dead', lease_until = NULL, claimed_by = NULL WHERE id = $1`, dead); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(ctx, `UPDATE deliveries SET status = 'delivered' WHERE id <> $1`, dead); err != nil {
			t.Fatal(err)
		}
		target.Ordered = false
		if err := db.SetIPN(ctx, c.Tenant(), target); err != nil {
			t.Fatal(err)
		}
		if err := db.ReplayDelivery(ctx, c.Tenant(), dead, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := claim("n4"); !slices.Equal(got, []int64{dead}) {
			t.Fatalf("the replayed delivery: claimed %v, want %d", got, dead)
		}
	})
}

// TestAnotherNodesOrderedTargetWaitsForTheBeat: a node whose last heartbeat
// found no ordered target claims without the ordered targets' selection;
// a target another node saves ordered meanwhile has its deliveries left
// pending by this node's claims (never taken out of order), and this
// node's next heartbeat makes its claims take the target's head.
func TestAnotherNodesOrderedTargetWaitsForTheBeat(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		url := dbtest.NewURL(t, engine)
		a, b := dbtest.OpenURL(t, url), dbtest.OpenURL(t, url)
		ctx := t.Context()
		c := newCompanyRow(1)
		if err := a.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		now := time.Now().Add(time.Second)
		beat := func() {
			t.Helper()
			if _, err := a.BeatDeliveryNode(ctx, "a", now, now.Add(-time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		beat() // no target is ordered
		target := &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true, Ordered: true}
		if err := b.SetIPN(ctx, c.Tenant(), target); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, ev := range []string{"A1", "A2"} {
			d := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryIPN, Event: ev, Payload: []byte(`{}`)}
			if err := b.EnqueueDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
		claim := func() []int64 { return claimIDs(t, a, "a", now) }
		if got := claim(); len(got) != 0 {
			t.Fatalf("before its heartbeat node a claimed %v of an ordered target", got)
		}
		beat()
		if got := claim(); !slices.Equal(got, ids[:1]) {
			t.Fatalf("after its heartbeat node a claimed %v, want the head %v", got, ids[:1])
		}
	})
}

// claimIDs claims up to 10 deliveries as node at now and returns their ids.
func claimIDs(t *testing.T, db *sqlstore.DB, node string, now time.Time) []int64 {
	t.Helper()
	got, err := db.ClaimDeliveries(t.Context(), node, now, 10, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, d := range got {
		out = append(out, d.ID)
	}
	return out
}

// companyWithIPN creates a company whose IPN target, active, is ordered or
// not, and returns both.
func companyWithIPN(t *testing.T, db *sqlstore.DB, ordered bool) (*recon.Company, *recon.Target) {
	t.Helper()
	c := newCompanyRow(1)
	if err := db.CreateCompany(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	target := &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true, Ordered: ordered}
	if err := db.SetIPN(t.Context(), c.Tenant(), target); err != nil {
		t.Fatal(err)
	}
	return c, target
}
