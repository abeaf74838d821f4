package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
)

// enqueue stores a pending IPN delivery of the company.
func enqueue(t *testing.T, ds recon.DeliveryStore, companyID int64, event string) *recon.Delivery {
	t.Helper()
	d := &recon.Delivery{CompanyID: companyID, Kind: recon.DeliveryIPN, Event: event, Payload: []byte(`{"event":"` + event + `"}`)}
	if err := ds.EnqueueDelivery(t.Context(), d); err != nil {
		t.Fatalf("EnqueueDelivery: %v", err)
	}
	return d
}

func ids(list []*recon.Delivery) []int64 {
	out := make([]int64, len(list))
	for i, d := range list {
		out[i] = d.ID
	}
	return out
}

// nodeA is the dispatcher node of the tests that do not care which.
const nodeA = "node-a"

// recordAttempt records one attempt through RecordAttempts.
func recordAttempt(t *testing.T, ds recon.DeliveryStore, a *recon.DeliveryAttempt, status string, next time.Time) error {
	t.Helper()
	return ds.RecordAttempts(t.Context(), []recon.AttemptOutcome{{Attempt: a, Status: status, Next: next}})
}

// micro is t as the stores keep it.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// deliveryBundle is what every delivery subtest starts from: a fresh store,
// its outbox and a company.
type deliveryBundle struct {
	s  recon.Store
	ds recon.DeliveryStore
	c  *recon.Company
}

// target reads a company's target of kind, failing the test on an error.
func (b *deliveryBundle) target(t *testing.T, companyID int64, kind string) *recon.Target {
	t.Helper()
	got, err := b.ds.DeliveryTarget(t.Context(), companyID, kind)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func testDelivery(t *testing.T, open Open) {
	setup := func(t *testing.T) *deliveryBundle {
		s := open(t)
		return &deliveryBundle{s: s, ds: storeAs[recon.DeliveryStore](t, s), c: newCompany(t, s, 1)}
	}
	run(t, "EnqueueAndRead", setup, testDeliveryEnqueueAndRead)
	run(t, "EnqueueRefused", setup, testDeliveryEnqueueRefused)
	run(t, "ClaimInOrderWithLease", setup, testDeliveryClaimInOrderWithLease)
	run(t, "WebhookEventsInOrder", setup, testDeliveryWebhookEventsInOrder)
	run(t, "TargetStats", setup, testDeliveryTargetStats)
	run(t, "ReplayFailed", setup, testDeliveryReplayFailed)
	run(t, "TestNotification", setup, testDeliveryTestNotification)
	run(t, "LapsedLeaseIsClaimedAgain", setup, testDeliveryLapsedLeaseIsClaimedAgain)
	run(t, "DeadNodesClaimsAreReleased", setup, testDeliveryDeadNodesClaimsAreReleased)
	run(t, "NodeNameRequired", setup, testDeliveryNodeNameRequired)
	run(t, "ClaimsOfANodeThatNeverJoinedAreReleased", setup, testDeliveryClaimsOfANodeThatNeverJoinedAreReleased)
	run(t, "ReleaseClaimsKeepsTheKept", setup, testDeliveryReleaseClaimsKeepsTheKept)
	run(t, "ConcurrentClaimersNeverShareARow", setup, testDeliveryConcurrentClaimersNeverShareARow)
	run(t, "RecordAttempts", setup, testDeliveryRecordAttempts)
	run(t, "RecordDeadAttempt", setup, testDeliveryRecordDeadAttempt)
	run(t, "AttemptOfAnUnknownDeliveryIsDropped", setup, testDeliveryAttemptOfAnUnknownDeliveryIsDropped)
	run(t, "UnknownStatusRefused", setup, testDeliveryUnknownStatusRefused)
	run(t, "LateResultNeverUndoesADelivery", setup, testDeliveryLateResultNeverUndoesADelivery)
	run(t, "RecordAttemptsInABatch", setup, testDeliveryRecordAttemptsInABatch)
	run(t, "Replay", setup, testDeliveryReplay)
	run(t, "List", setup, testDeliveryList)
	run(t, "Stats", setup, testDeliveryStats)
	run(t, "DeleteDeliveredBefore", setup, testDeliveryDeleteDeliveredBefore)
	run(t, "Target", setup, testDeliveryTarget)
	run(t, "SigningSecret", setup, testDeliverySigningSecret)
	run(t, "SigningSecretRotation", setup, testDeliverySigningSecretRotation)
	run(t, "TargetSettings", setup, testDeliveryTargetSettings)
	run(t, "ConcurrentFirstSavesAgreeOnSecrets", setup, testDeliveryConcurrentFirstSavesAgreeOnSecrets)
}

func testDeliveryEnqueueAndRead(t *testing.T, bundle *deliveryBundle) {
	s, ds, c := bundle.s, bundle.ds, bundle.c
	other := newCompany(t, s, 2)
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	if d.ID <= 0 || d.Status != recon.DeliveryPending || d.Attempts != 0 || !d.NextAttemptAt.Equal(d.CreatedAt) {
		t.Fatalf("enqueued %+v", d)
	}
	recent(t, "CreatedAt", d.CreatedAt)
	got, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "delivery", d, got)
	if got, err = ds.Delivery(t.Context(), recon.TenantID{}, d.ID); err != nil || got.ID != d.ID {
		t.Fatalf("Delivery(0, %d) = %v, %v", d.ID, got, err)
	}
	_, err = ds.Delivery(t.Context(), other.Tenant(), d.ID)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("delivery %d not found", d.ID))
	_, err = ds.Delivery(t.Context(), recon.TenantID{}, d.ID+1000)
	wantCode(t, err, recon.ENOTFOUND, "")
}

// A delivery of an unknown company or of an unknown kind is refused.
func testDeliveryEnqueueRefused(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	err := ds.EnqueueDelivery(t.Context(), &recon.Delivery{CompanyID: 9999, Kind: recon.DeliveryIPN, Event: "ORDER_PAID", Payload: []byte(`{}`)})
	wantCode(t, err, recon.ENOTFOUND, "company 9999 not found")
	err = ds.EnqueueDelivery(t.Context(), &recon.Delivery{CompanyID: c.ID, Kind: "sms", Event: "ORDER_PAID", Payload: []byte(`{}`)})
	wantCode(t, err, recon.EINVALID, "")
}

func testDeliveryClaimInOrderWithLease(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	var want []int64
	for i := range 3 {
		want = append(want, enqueue(t, ds, c.ID, fmt.Sprint("E", i)).ID)
	}
	now := time.Now().Add(time.Second)
	got, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "first claim", want[:2], ids(got))
	for _, d := range got {
		if !d.LeaseUntil.Equal(micro(now.Add(time.Minute))) || d.Status != recon.DeliveryPending || d.ClaimedBy != nodeA {
			t.Fatalf("claimed %+v, want lease until %v", d, micro(now.Add(time.Minute)))
		}
	}
	stored, err := ds.Delivery(t.Context(), c.Tenant(), want[0])
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "claimed delivery as stored", got[0], stored)
	got, err = ds.ClaimDeliveries(t.Context(), nodeA, now, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "second claim", want[2:], ids(got))
	if got, err = ds.ClaimDeliveries(t.Context(), nodeA, now, 2, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("third claim: %v, %v; want nothing", ids(got), err)
	}
	// Not yet due: the clock of the claimer is before the rows' next attempt.
	fresh := enqueue(t, ds, c.ID, "LATER")
	if got, err = ds.ClaimDeliveries(t.Context(), nodeA, fresh.NextAttemptAt.Add(-time.Second), 10, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("claim before due: %v, %v; want nothing", ids(got), err)
	}
}

// Hub events go out one at a time per tenant, in enqueue order; IPNs
// and other tenants' events are not held back; a failed event waiting
// for its retry does not hold back the ones after it.
func testDeliveryWebhookEventsInOrder(t *testing.T, bundle *deliveryBundle) {
	s, ds, c := bundle.s, bundle.ds, bundle.c
	other := newCompany(t, s, 2)
	hub := func(companyID int64, event string) *recon.Delivery {
		t.Helper()
		d := &recon.Delivery{CompanyID: companyID, Kind: recon.DeliveryWebhook, Event: event, Payload: []byte(`{"event":"` + event + `"}`)}
		if err := ds.EnqueueDelivery(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	e1, ipn, e2, e3 := hub(c.ID, "E1"), enqueue(t, ds, c.ID, "ORDER_PAID"), hub(c.ID, "E2"), hub(c.ID, "E3")
	o1, o2 := hub(other.ID, "O1"), hub(other.ID, "O2")
	now := time.Now().Add(time.Second)
	claim := func(at time.Time, want ...*recon.Delivery) []*recon.Delivery {
		t.Helper()
		got, err := ds.ClaimDeliveries(t.Context(), nodeA, at, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "claim", ids(want), ids(got))
		return got
	}
	record := func(d *recon.Delivery, status string, next time.Time) {
		t.Helper()
		if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: d.ID, At: now, URL: "https://hooks.example.vn", StatusCode: 200}, status, next); err != nil {
			t.Fatal(err)
		}
	}
	claim(now, e1, ipn, o1)
	record(ipn, recon.DeliveryDelivered, time.Time{})
	claim(now) // E1 and O1 in flight hold E2 and O2
	record(e1, recon.DeliveryDelivered, time.Time{})
	claim(now, e2)
	// E2 fails and waits for its retry: E3 goes on.
	record(e2, recon.DeliveryPending, now.Add(time.Hour))
	claim(now, e3)
	// The claimer of E3 and O1 dies: when the leases lapse, they are
	// claimed again, and O2 still waits for O1.
	after := now.Add(2 * time.Minute)
	claim(after, e3, o1)
	record(o1, recon.DeliveryDelivered, time.Time{})
	claim(after, o2)
	// With two nodes claiming at the same moment, still one at a time.
	record(e3, recon.DeliveryDelivered, time.Time{})
	e4, e5 := hub(c.ID, "E4"), hub(c.ID, "E5")
	later := after
	var wg sync.WaitGroup
	got := make([][]*recon.Delivery, 2)
	for i, node := range []string{"node-1", "node-2"} {
		wg.Go(func() {
			var err error
			if got[i], err = ds.ClaimDeliveries(t.Context(), node, later, 10, time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var claimed []int64
	for _, g := range got {
		for _, d := range g {
			if d.CompanyID == c.ID {
				claimed = append(claimed, d.ID)
			}
		}
	}
	diff(t, "two nodes' claims of the tenant", []int64{e4.ID}, claimed)
	record(e4, recon.DeliveryDelivered, time.Time{})
	claim(later, e5)
}

// failedDeliveries is an outbox of the bundle's company with deliveries in
// every state, and one of another company, at now.
type failedDeliveries struct {
	ops   recon.DeliveryOpsStore
	now   time.Time
	other *recon.Company
	// delivered, dead (B), failing (C), leased (D: failed, claimed again),
	// fresh (never tried), hub (a dead webhook), theirs (the other
	// company's, dead).
	delivered, dead, failing, leased, fresh, hub, theirs *recon.Delivery
}

func newFailedDeliveries(t *testing.T, bundle *deliveryBundle) *failedDeliveries {
	t.Helper()
	s, ds, c := bundle.s, bundle.ds, bundle.c
	ops := storeAs[recon.DeliveryOpsStore](t, s)
	other := newCompany(t, s, 2)
	now := time.Now().Add(time.Second)
	delivered, dead, failing, leased := enqueue(t, ds, c.ID, "A"), enqueue(t, ds, c.ID, "B"), enqueue(t, ds, c.ID, "C"), enqueue(t, ds, c.ID, "D")
	fresh := enqueue(t, ds, c.ID, "E") // pending, never tried
	hub := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryWebhook, Event: "LINK_TOKEN_CREATED", Payload: []byte(`{}`)}
	if err := ds.EnqueueDelivery(t.Context(), hub); err != nil {
		t.Fatal(err)
	}
	theirs := enqueue(t, ds, other.ID, "F")
	if _, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	var outcomes []recon.AttemptOutcome
	for _, o := range []struct {
		d       *recon.Delivery
		code    int
		latency time.Duration
		status  string
	}{
		{delivered, 200, 10 * time.Millisecond, recon.DeliveryDelivered},
		{dead, 500, 30 * time.Millisecond, recon.DeliveryDead},
		{failing, 0, 20 * time.Millisecond, recon.DeliveryPending},
		{hub, 503, 40 * time.Millisecond, recon.DeliveryDead},
		{theirs, 500, time.Millisecond, recon.DeliveryDead},
	} {
		outcomes = append(outcomes, recon.AttemptOutcome{Attempt: &recon.DeliveryAttempt{DeliveryID: o.d.ID, At: now, URL: "https://x.example.vn",
			StatusCode: o.code, Latency: o.latency}, Status: o.status, Next: now.Add(time.Hour)})
	}
	if err := ds.RecordAttempts(t.Context(), outcomes); err != nil {
		t.Fatal(err)
	}
	// D failed once, then was claimed again: its attempt is on its way.
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: leased.ID, At: now, URL: "https://x.example.vn"}, recon.DeliveryPending, now); err != nil {
		t.Fatal(err)
	}
	if got, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 10, time.Minute); err != nil || len(got) != 1 || got[0].ID != leased.ID {
		t.Fatalf("claim D: %v %v", ids(got), err)
	}
	return &failedDeliveries{ops: ops, now: now, other: other,
		delivered: delivered, dead: dead, failing: failing, leased: leased, fresh: fresh, hub: hub, theirs: theirs}
}

// The per-kind figures of the outbox, since a time, under a bound.
func testDeliveryTargetStats(t *testing.T, bundle *deliveryBundle) {
	fx := newFailedDeliveries(t, bundle)
	ops, now, c := fx.ops, fx.now, bundle.c
	stats, err := ops.DeliveryTargetStats(t.Context(), c.Tenant(), time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stats", []recon.TargetStats{
		{Kind: recon.DeliveryIPN, Delivered: 1, Pending: 3, Failing: 2, Dead: 1, Attempts: 4, Succeeded: 1, LatencyP50: 10 * time.Millisecond, LatencyP95: 20 * time.Millisecond},
		{Kind: recon.DeliveryWebhook, Dead: 1, Attempts: 1, LatencyP50: 40 * time.Millisecond, LatencyP95: 40 * time.Millisecond},
	}, stats)
	if stats, err := ops.DeliveryTargetStats(t.Context(), c.Tenant(), now.Add(time.Hour), 100); err != nil || len(stats) != 0 {
		t.Fatalf("stats since later: %v %v", stats, err)
	}
	// Under a bound of 2: the newest two deliveries with their attempts.
	recent, err := ops.DeliveryTargetStats(t.Context(), c.Tenant(), time.Time{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var read, tried int64
	for _, s := range recent {
		read += s.Delivered + s.Pending + s.Dead
		tried += s.Attempts
	}
	if read != 2 || tried > 2 {
		t.Errorf("stats of 2 deliveries: %+v", recent)
	}
	_, err = ops.DeliveryTargetStats(t.Context(), c.Tenant(), time.Time{}, 0)
	wantCode(t, err, recon.EINVALID, "max must be positive")
}

// Replaying every failed delivery since a time, of a kind or of all kinds.
func testDeliveryReplayFailed(t *testing.T, bundle *deliveryBundle) {
	fx := newFailedDeliveries(t, bundle)
	ds, c, ops, now := bundle.ds, bundle.c, fx.ops, fx.now
	// Since after everything: nothing; then the IPNs only; then the rest.
	// Each time CountFailed counts first what ReplayFailed then replays.
	replay := func(f recon.FailedFilter, want int64, why string) {
		t.Helper()
		if n, err := ops.CountFailed(t.Context(), c.Tenant(), f, now, 100); err != nil || n != want {
			t.Fatalf("count %s: %d %v, want %d", why, n, err, want)
		}
		if n, err := ops.ReplayFailed(t.Context(), c.Tenant(), f, now); err != nil || n != want {
			t.Fatalf("replay %s: %d %v, want %d", why, n, err, want)
		}
	}
	replay(recon.FailedFilter{Since: fx.fresh.CreatedAt.Add(time.Hour)}, 0, "since later")
	replay(recon.FailedFilter{Kind: recon.DeliveryIPN}, 2, "IPNs: B and C (D is in flight)")
	if n, err := ops.CountFailed(t.Context(), c.Tenant(), recon.FailedFilter{}, now, 1); err != nil || n != 1 {
		t.Fatalf("count up to 1: %d %v", n, err)
	}
	replay(recon.FailedFilter{}, 3, "all: B and C again and the webhook")
	for _, d := range []*recon.Delivery{fx.dead, fx.failing, fx.hub} {
		got, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
		if err != nil || got.Status != recon.DeliveryPending || !got.NextAttemptAt.Equal(micro(now)) || got.LeaseUntil != (time.Time{}) {
			t.Fatalf("replayed %d: %+v %v", d.ID, got, err)
		}
	}
	if got, _ := ds.Delivery(t.Context(), c.Tenant(), fx.leased.ID); got.LeaseUntil.IsZero() {
		t.Fatalf("the delivery in flight lost its claim: %+v", got)
	}
	if got, _ := ds.Delivery(t.Context(), fx.other.Tenant(), fx.theirs.ID); got.Status != recon.DeliveryDead {
		t.Fatalf("another company's delivery was replayed: %+v", got)
	}
	_, err := ops.ReplayFailed(t.Context(), c.Tenant(), recon.FailedFilter{Kind: "sms"}, now)
	wantCode(t, err, recon.EINVALID, "")
	_, err = ops.CountFailed(t.Context(), c.Tenant(), recon.FailedFilter{Kind: "sms"}, now, 100)
	wantCode(t, err, recon.EINVALID, "")
}

// A test notification goes to an active target only (live mode).
func testDeliveryTestNotification(t *testing.T, bundle *deliveryBundle) {
	s, c := bundle.s, bundle.c
	ops := storeAs[recon.DeliveryOpsStore](t, s)
	_, err := ops.SendTestNotification(t.Context(), c.Tenant(), recon.DeliveryIPN)
	wantCode(t, err, recon.EINVALID, "there is no active ipn target to send a test notification to: set one first")
	if err := s.(recon.MerchantStore).SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	d, err := ops.SendTestNotification(t.Context(), c.Tenant(), recon.DeliveryIPN)
	if err != nil || d.ID == 0 || d.Event != recon.TestNotificationEvent || d.Status != recon.DeliveryPending || !d.NextAttemptAt.Equal(d.CreatedAt) ||
		!strings.Contains(string(d.Payload), `"notification_type":"TEST_NOTIFICATION"`) {
		t.Fatalf("test notification: %+v %v", d, err)
	}
	_, err = ops.SendTestNotification(t.Context(), c.Tenant(), "sms")
	wantCode(t, err, recon.EINVALID, "")
}

func testDeliveryLapsedLeaseIsClaimedAgain(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	now := time.Now().Add(time.Second)
	if got, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 10, time.Minute); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v, %v", ids(got), err)
	}
	// The claimer "crashes": it never records an attempt.
	if got, err := ds.ClaimDeliveries(t.Context(), nodeA, now.Add(59*time.Second), 10, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("claim under lease: %v, %v; want nothing", ids(got), err)
	}
	got, err := ds.ClaimDeliveries(t.Context(), nodeA, now.Add(time.Minute), 10, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "claim after the lease lapsed", []int64{d.ID}, ids(got))
	if !got[0].LeaseUntil.Equal(micro(now.Add(3 * time.Minute))) {
		t.Fatalf("LeaseUntil = %v, want %v", got[0].LeaseUntil, micro(now.Add(3*time.Minute)))
	}
}

func testDeliveryDeadNodesClaimsAreReleased(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	list := []*recon.Delivery{enqueue(t, ds, c.ID, "A1"), enqueue(t, ds, c.ID, "A2"), enqueue(t, ds, c.ID, "B1")}
	now := time.Now().Add(time.Second)
	const timeout = 5 * time.Second
	beat := func(node string, at time.Time) recon.NodeBeat {
		t.Helper()
		b, err := ds.BeatDeliveryNode(t.Context(), node, at, at.Add(-timeout))
		if err != nil {
			t.Fatalf("BeatDeliveryNode(%s): %v", node, err)
		}
		return b
	}
	if b := beat("a", now); !b.Joined || b.Released != 0 {
		t.Fatalf("first beat of a: %+v", b)
	}
	if b := beat("b", now); !b.Joined || b.Released != 0 {
		t.Fatalf("first beat of b: %+v", b)
	}
	if b := beat("a", now.Add(time.Second)); b.Joined || b.Released != 0 {
		t.Fatalf("second beat of a: %+v", b)
	}
	claim := func(node string, at time.Time, n int) []int64 {
		t.Helper()
		got, err := ds.ClaimDeliveries(t.Context(), node, at, n, time.Hour)
		if err != nil {
			t.Fatalf("ClaimDeliveries(%s): %v", node, err)
		}
		return ids(got)
	}
	diff(t, "a's claim", []int64{list[0].ID, list[1].ID}, claim("a", now.Add(time.Second), 2))
	diff(t, "b's claim", []int64{list[2].ID}, claim("b", now.Add(time.Second), 2))
	// b beats on; a stopped at now+1s. Within the timeout a is alive:
	// its claims stay, and nothing is due for another node.
	if b := beat("b", now.Add(timeout)); b.Joined || b.Released != 0 {
		t.Fatalf("b's beat while a is alive: %+v", b)
	}
	beat("c", now.Add(timeout))
	diff(t, "claim while a is alive", []int64{}, claim("c", now.Add(timeout), 10))
	// Past the timeout, b's beat declares a dead and frees its claims,
	// due again for any node; b's own claim stays.
	later := now.Add(timeout + 2*time.Second)
	if b := beat("b", later); b.Joined || b.Released != 2 {
		t.Fatalf("b's beat after a's timeout: %+v, want 2 released", b)
	}
	got, err := ds.Delivery(t.Context(), c.Tenant(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClaimedBy != "" || !got.LeaseUntil.IsZero() || got.Status != recon.DeliveryPending || got.Attempts != 0 {
		t.Fatalf("a dead node's delivery: %+v", got)
	}
	if got, _ := ds.Delivery(t.Context(), c.Tenant(), list[2].ID); got.ClaimedBy != "b" {
		t.Fatalf("b's claim after its own beat: %+v", got)
	}
	diff(t, "claim of a's deliveries", []int64{list[0].ID, list[1].ID}, claim("c", later, 10))

	// a was only slow: its next beat finds its row gone. It joins again,
	// and its claims made since it was declared dead are released too.
	if err := ds.ReplayDelivery(t.Context(), recon.TenantID{}, list[0].ID, later); err != nil {
		t.Fatal(err)
	}
	diff(t, "a's claim after it was declared dead", []int64{list[0].ID}, claim("a", later, 10))
	if b := beat("a", later); !b.Joined || b.Released != 1 {
		t.Fatalf("a's beat after it was declared dead: %+v, want joined and 1 released", b)
	}
	if got, _ := ds.Delivery(t.Context(), c.Tenant(), list[0].ID); got.ClaimedBy != "" || !got.LeaseUntil.IsZero() {
		t.Fatalf("a's claim after it joined again: %+v", got)
	}

	// A node that leaves releases what it still holds, at once.
	n, err := ds.LeaveDeliveryNode(t.Context(), "b")
	if err != nil || n != 1 {
		t.Fatalf("LeaveDeliveryNode(b) = %d, %v; want 1", n, err)
	}
	diff(t, "claim after b left (the replayed one due last)", []int64{list[2].ID, list[0].ID}, claim("a", later, 10))
	if b := beat("b", later); !b.Joined {
		t.Fatalf("b's beat after it left: %+v, want joined", b)
	}
	// Recording an attempt ends the claim.
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: list[2].ID, StatusCode: 200}, recon.DeliveryDelivered, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ds.Delivery(t.Context(), c.Tenant(), list[2].ID); got.ClaimedBy != "" || !got.LeaseUntil.IsZero() {
		t.Fatalf("a delivered delivery's claim: %+v", got)
	}
}

// Claims and beats name their node.
func testDeliveryNodeNameRequired(t *testing.T, bundle *deliveryBundle) {
	ds := bundle.ds
	later := time.Now().Add(time.Second + 7*time.Second)
	_, err := ds.ClaimDeliveries(t.Context(), "", later, 1, time.Minute)
	wantCode(t, err, recon.EINVALID, "")
	_, err = ds.BeatDeliveryNode(t.Context(), "", later, later)
	wantCode(t, err, recon.EINVALID, "")
}

func testDeliveryClaimsOfANodeThatNeverJoinedAreReleased(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	now := time.Now().Add(time.Second)
	if got, err := ds.ClaimDeliveries(t.Context(), "ghost", now, 1, time.Hour); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v, %v", ids(got), err)
	}
	b, err := ds.BeatDeliveryNode(t.Context(), "a", now, now.Add(-time.Minute))
	if err != nil || !b.Joined || b.Released != 1 {
		t.Fatalf("first beat of a: %+v, %v; want the ghost's claim released", b, err)
	}
	if got, err := ds.ClaimDeliveries(t.Context(), "a", now, 1, time.Hour); err != nil || len(got) != 1 || got[0].ID != d.ID {
		t.Fatalf("claim after the sweep: %v, %v", ids(got), err)
	}
	// A node declared dead that claims before its next beat (its claim
	// loop resumed first after an outage), then dies: the next beat of any
	// node releases the claim, though it declares no node dead.
	later := now.Add(time.Minute)
	if b, err := ds.BeatDeliveryNode(t.Context(), "b", later, later.Add(-5*time.Second)); err != nil || b.Released != 1 {
		t.Fatalf("b's beat declaring a dead: %+v, %v; want a's claim released", b, err)
	}
	if got, err := ds.ClaimDeliveries(t.Context(), "a", later, 1, time.Hour); err != nil || len(got) != 1 {
		t.Fatalf("the claim of a declared dead: %v, %v", ids(got), err)
	}
	if b, err := ds.BeatDeliveryNode(t.Context(), "b", later.Add(time.Second), later.Add(-4*time.Second)); err != nil || b.Joined || b.Released != 1 {
		t.Fatalf("b's next beat: %+v, %v; want the claim of a, which has no row, released", b, err)
	}
}

// A node whose database answers again after an outage releases its claims
// but the ones it still works on; the other nodes' claims stay.
func testDeliveryReleaseClaimsKeepsTheKept(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	list := []*recon.Delivery{enqueue(t, ds, c.ID, "K1"), enqueue(t, ds, c.ID, "K2"), enqueue(t, ds, c.ID, "K3"), enqueue(t, ds, c.ID, "K4")}
	now := time.Now().Add(time.Second)
	for _, node := range []string{"a", "b"} {
		if _, err := ds.BeatDeliveryNode(t.Context(), node, now, now.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(node string, n int) []int64 {
		t.Helper()
		got, err := ds.ClaimDeliveries(t.Context(), node, now, n, time.Hour)
		if err != nil {
			t.Fatalf("ClaimDeliveries(%s): %v", node, err)
		}
		return ids(got)
	}
	diff(t, "a's claim", []int64{list[0].ID, list[1].ID, list[2].ID}, claim("a", 3))
	diff(t, "b's claim", []int64{list[3].ID}, claim("b", 1))
	n, err := ds.ReleaseDeliveryClaims(t.Context(), "a", []int64{list[1].ID, list[3].ID})
	if err != nil || n != 2 {
		t.Fatalf("ReleaseDeliveryClaims(a, keep %d) = %d, %v; want 2", list[1].ID, n, err)
	}
	for i, want := range []string{"", "a", "", "b"} {
		if got, _ := ds.Delivery(t.Context(), c.Tenant(), list[i].ID); got.ClaimedBy != want || got.LeaseUntil.IsZero() != (want == "") {
			t.Fatalf("delivery %d after a's release: claimed by %q until %v, want %q", i, got.ClaimedBy, got.LeaseUntil, want)
		}
	}
	diff(t, "claim after a's release", []int64{list[0].ID, list[2].ID}, claim("b", 10))
	// Nothing kept: every claim of the node goes.
	if n, err := ds.ReleaseDeliveryClaims(t.Context(), "a", nil); err != nil || n != 1 {
		t.Fatalf("ReleaseDeliveryClaims(a, nil) = %d, %v; want 1", n, err)
	}
	_, err = ds.ReleaseDeliveryClaims(t.Context(), "", nil)
	wantCode(t, err, recon.EINVALID, "")
}

func testDeliveryConcurrentClaimersNeverShareARow(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	const total = 300
	for i := range total {
		enqueue(t, ds, c.ID, fmt.Sprint("E", i))
	}
	now := time.Now().Add(time.Second)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			for {
				got, err := ds.ClaimDeliveries(context.Background(), nodeA, now, 7, time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("ClaimDeliveries: %v", err)
	}
	if len(seen) != total {
		t.Fatalf("claimed %d distinct deliveries, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %d claimed %d times", id, n)
		}
	}
}

func testDeliveryRecordAttempts(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	now := time.Now().Add(time.Second)
	if _, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	failed := &recon.DeliveryAttempt{DeliveryID: d.ID, At: now, URL: "https://shop.example/ipn", StatusCode: 500,
		Latency: 1234567 * time.Microsecond, Response: "oops\x00 \xff", Error: "HTTP 500"}
	next := now.Add(time.Minute)
	if err := recordAttempt(t, ds, failed, recon.DeliveryPending, next); err != nil {
		t.Fatal(err)
	}
	got, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *d
	want.Attempts, want.NextAttemptAt, want.LastError = 1, micro(next), "HTTP 500"
	diff(t, "delivery after a failed attempt", &want, got)
	// Not due before next, due at next.
	if list, err := ds.ClaimDeliveries(t.Context(), nodeA, next.Add(-time.Second), 1, time.Minute); err != nil || len(list) != 0 {
		t.Fatalf("claim before next: %v, %v", ids(list), err)
	}
	if list, err := ds.ClaimDeliveries(t.Context(), nodeA, next, 1, time.Minute); err != nil || len(list) != 1 {
		t.Fatalf("claim at next: %v, %v", ids(list), err)
	}

	ok := &recon.DeliveryAttempt{DeliveryID: d.ID, At: next.Add(time.Second), URL: "https://shop.example/ipn", StatusCode: 200,
		Latency: 20 * time.Millisecond, Response: `{"ok":true}`}
	if err := recordAttempt(t, ds, ok, recon.DeliveryDelivered, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, err = ds.Delivery(t.Context(), c.Tenant(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.Attempts, want.Status, want.LastError, want.DeliveredAt = 2, recon.DeliveryDelivered, "", micro(ok.At)
	diff(t, "delivery after delivery", &want, got)
	if list, err := ds.ClaimDeliveries(t.Context(), nodeA, next.Add(time.Hour), 10, time.Minute); err != nil || len(list) != 0 {
		t.Fatalf("claim of a delivered delivery: %v, %v", ids(list), err)
	}

	attempts, err := ds.DeliveryAttempts(t.Context(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 2 || attempts[0].ID <= 0 || attempts[1].ID <= attempts[0].ID {
		t.Fatalf("attempts %+v", attempts)
	}
	failed.At, failed.Response = micro(failed.At), "oops \uFFFD" // NUL dropped, invalid UTF-8 replaced
	ok.At = micro(ok.At)
	failed.ID, ok.ID = attempts[0].ID, attempts[1].ID
	diff(t, "attempts", []*recon.DeliveryAttempt{failed, ok}, attempts)
	if attempts, err = ds.DeliveryAttempts(t.Context(), d.ID+1000); err != nil || len(attempts) != 0 {
		t.Fatalf("attempts of an unknown delivery: %v, %v", attempts, err)
	}
}

// An attempt recorded dead ends the delivery undelivered.
func testDeliveryRecordDeadAttempt(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	dead := enqueue(t, ds, c.ID, "TRANSACTION_VOID")
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: dead.ID, URL: "https://shop.example/ipn", Error: "timeout"}, recon.DeliveryDead, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, err := ds.Delivery(t.Context(), c.Tenant(), dead.ID); err != nil || got.Status != recon.DeliveryDead || got.Attempts != 1 || !got.DeliveredAt.IsZero() {
		t.Fatalf("dead delivery: %+v, %v", got, err)
	}
}

// An attempt of a delivery that does not exist is dropped.
func testDeliveryAttemptOfAnUnknownDeliveryIsDropped(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: d.ID + 1000}, recon.DeliveryDead, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if attempts, err := ds.DeliveryAttempts(t.Context(), d.ID+1000); err != nil || len(attempts) != 0 {
		t.Fatalf("attempts of an unknown delivery: %v, %v", attempts, err)
	}
}

// An attempt with an unknown status is refused.
func testDeliveryUnknownStatusRefused(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: d.ID}, "lost", time.Time{})
	wantCode(t, err, recon.EINVALID, "")
}

// Node A's claim was taken up by node B, which delivered; A's late
// failure is logged as an attempt but leaves the delivery delivered.
func testDeliveryLateResultNeverUndoesADelivery(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	now := time.Now().Add(time.Second)
	if _, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	ok := &recon.DeliveryAttempt{DeliveryID: d.ID, At: now, URL: "https://shop.example/ipn", StatusCode: 200}
	if err := recordAttempt(t, ds, ok, recon.DeliveryDelivered, time.Time{}); err != nil {
		t.Fatal(err)
	}
	late := &recon.DeliveryAttempt{DeliveryID: d.ID, At: now.Add(time.Second), URL: "https://shop.example/ipn", StatusCode: 500, Error: "HTTP 500"}
	if err := recordAttempt(t, ds, late, recon.DeliveryPending, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != recon.DeliveryDelivered || got.DeliveredAt.IsZero() || got.Attempts != 1 || got.LastError != "" {
		t.Fatalf("delivery after a late failure: %s, delivered at %v, %d attempts, last error %q; want it delivered, untouched",
			got.Status, got.DeliveredAt, got.Attempts, got.LastError)
	}
	attempts, err := ds.DeliveryAttempts(t.Context(), d.ID)
	if err != nil || len(attempts) != 2 {
		t.Fatalf("attempts: %d, %v; want both logged", len(attempts), err)
	}
}

func testDeliveryRecordAttemptsInABatch(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	ok1, retry, dead := enqueue(t, ds, c.ID, "A"), enqueue(t, ds, c.ID, "B"), enqueue(t, ds, c.ID, "C")
	now := time.Now().Add(time.Second)
	if list, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 3, time.Minute); err != nil || len(list) != 3 {
		t.Fatalf("claim: %v, %v", ids(list), err)
	}
	next := now.Add(time.Minute)
	attempts := []*recon.DeliveryAttempt{
		{DeliveryID: ok1.ID, At: now, URL: "https://shop.example/ipn", StatusCode: 204, Latency: time.Millisecond},
		{DeliveryID: retry.ID, At: now, URL: "https://shop.example/ipn", StatusCode: 503, Latency: 2 * time.Millisecond, Response: "busy\x00", Error: "HTTP 503"},
		{DeliveryID: dead.ID, At: now, URL: "https://shop.example/ipn", Error: "timeout"},
		{DeliveryID: dead.ID + 1000, At: now, URL: "https://shop.example/ipn", StatusCode: 200}, // no such delivery: dropped
	}
	type outcome = recon.AttemptOutcome
	err := ds.RecordAttempts(t.Context(), []outcome{
		{Attempt: attempts[0], Status: recon.DeliveryDelivered, Next: time.Time{}},
		{Attempt: attempts[1], Status: recon.DeliveryPending, Next: next},
		{Attempt: attempts[2], Status: recon.DeliveryDead, Next: time.Time{}},
		{Attempt: attempts[3], Status: recon.DeliveryDelivered, Next: time.Time{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d      *recon.Delivery
		status string
		next   time.Time
		err    string
		a      *recon.DeliveryAttempt
	}{
		{ok1, recon.DeliveryDelivered, ok1.NextAttemptAt, "", attempts[0]},
		{retry, recon.DeliveryPending, next, "HTTP 503", attempts[1]},
		{dead, recon.DeliveryDead, dead.NextAttemptAt, "timeout", attempts[2]},
	} {
		got, err := ds.Delivery(t.Context(), c.Tenant(), tc.d.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := *tc.d
		want.Status, want.Attempts, want.NextAttemptAt, want.LastError = tc.status, 1, micro(tc.next), tc.err
		if tc.status == recon.DeliveryDelivered {
			want.DeliveredAt = micro(now)
		}
		diff(t, "delivery "+tc.d.Event, &want, got)
		list, err := ds.DeliveryAttempts(t.Context(), tc.d.ID)
		if err != nil || len(list) != 1 {
			t.Fatalf("attempts of %s: %v, %v", tc.d.Event, list, err)
		}
		wantA := *tc.a
		wantA.ID, wantA.At, wantA.Response = list[0].ID, micro(now), strings.ReplaceAll(wantA.Response, "\x00", "")
		diff(t, "attempt of "+tc.d.Event, &wantA, list[0])
	}
	err = ds.RecordAttempts(t.Context(), []outcome{{Attempt: attempts[1], Status: recon.DeliveryDelivered, Next: time.Time{}}, {Attempt: attempts[0], Status: "lost", Next: time.Time{}}})
	wantCode(t, err, recon.EINVALID, "")
	if got, _ := ds.Delivery(t.Context(), c.Tenant(), retry.ID); got.Status != recon.DeliveryPending || got.Attempts != 1 {
		t.Fatalf("a batch with an unknown status changed a delivery: %+v", got)
	}
}

func testDeliveryReplay(t *testing.T, bundle *deliveryBundle) {
	s, ds, c := bundle.s, bundle.ds, bundle.c
	other := newCompany(t, s, 2)
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: d.ID, StatusCode: 200}, recon.DeliveryDelivered, time.Time{}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Hour)
	err := ds.ReplayDelivery(t.Context(), other.Tenant(), d.ID, now)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("delivery %d not found", d.ID))
	if got, _ := ds.Delivery(t.Context(), c.Tenant(), d.ID); got.Status != recon.DeliveryDelivered {
		t.Fatalf("another company's replay changed the delivery: %+v", got)
	}
	if err := ds.ReplayDelivery(t.Context(), c.Tenant(), d.ID, now); err != nil {
		t.Fatal(err)
	}
	got, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != recon.DeliveryPending || !got.NextAttemptAt.Equal(micro(now)) || !got.LeaseUntil.IsZero() ||
		!got.DeliveredAt.IsZero() || got.Attempts != 1 {
		t.Fatalf("replayed delivery %+v", got)
	}
	// A claimed (leased) delivery replayed by an operator (company 0) is due again at once.
	if _, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := ds.ReplayDelivery(t.Context(), recon.TenantID{}, d.ID, now); err != nil {
		t.Fatal(err)
	}
	if list, err := ds.ClaimDeliveries(t.Context(), nodeA, now, 1, time.Hour); err != nil || len(list) != 1 {
		t.Fatalf("claim after replay: %v, %v", ids(list), err)
	}
	err = ds.ReplayDelivery(t.Context(), recon.TenantID{}, d.ID+1000, now)
	wantCode(t, err, recon.ENOTFOUND, "")
}

func testDeliveryList(t *testing.T, bundle *deliveryBundle) {
	s, ds, c := bundle.s, bundle.ds, bundle.c
	other := newCompany(t, s, 2)
	var mine []*recon.Delivery
	for i := range 55 {
		d := enqueue(t, ds, c.ID, fmt.Sprint("E", i))
		mine = append(mine, d)
	}
	theirs := enqueue(t, ds, other.ID, "ORDER_PAID")
	hook := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryWebhook, Event: "BANK_ACCOUNT_LINKED", Payload: []byte(`{}`)}
	if err := ds.EnqueueDelivery(t.Context(), hook); err != nil {
		t.Fatal(err)
	}
	if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: mine[3].ID, Error: "refused"}, recon.DeliveryDead, time.Time{}); err != nil {
		t.Fatal(err)
	}

	list, err := ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{hook.ID}
	for i := 54; len(want) < 50; i-- {
		want = append(want, mine[i].ID)
	}
	diff(t, "default page (50, newest first)", want, ids(list))
	if list[0].Kind != recon.DeliveryWebhook || string(list[0].Payload) != `{}` {
		t.Fatalf("first listed %+v", list[0])
	}

	list, err = ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Limit: 3, BeforeID: mine[10].ID})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "page before an id", []int64{mine[9].ID, mine[8].ID, mine[7].ID}, ids(list))

	list, err = ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Status: recon.DeliveryDead})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "dead", []int64{mine[3].ID}, ids(list))
	list, err = ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryWebhook})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "webhooks", []int64{hook.ID}, ids(list))

	list, err = ds.Deliveries(t.Context(), other.Tenant(), recon.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "the other company's", []int64{theirs.ID}, ids(list))
	list, err = ds.Deliveries(t.Context(), recon.TenantID{}, recon.DeliveryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 57 || list[0].ID != hook.ID || !slices.ContainsFunc(list, func(d *recon.Delivery) bool { return d.ID == theirs.ID }) {
		t.Fatalf("all companies: %v", ids(list))
	}

	_, err = ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Status: "in_flight"})
	wantCode(t, err, recon.EINVALID, "")
	_, err = ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Kind: "sms"})
	wantCode(t, err, recon.EINVALID, "")
}

func testDeliveryStats(t *testing.T, bundle *deliveryBundle) {
	ds := bundle.ds
	stats, err := ds.DeliveryStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stats of an empty outbox", map[string]int64{"pending": 0, "dead": 0, "in_flight": 0}, stats)
	newDeliveryMix(t, bundle)
	stats, err = ds.DeliveryStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stats", map[string]int64{"pending": 3, "dead": 1, "in_flight": 1}, stats)
}

// newDeliveryMix enqueues six deliveries of the bundle's company: two
// delivered, one dead, one claimed with a lease that runs (in flight), one
// claimed long ago (not), and one pending.
func newDeliveryMix(t *testing.T, bundle *deliveryBundle) []*recon.Delivery {
	t.Helper()
	ds, c := bundle.ds, bundle.c
	var list []*recon.Delivery
	for i := range 6 {
		list = append(list, enqueue(t, ds, c.ID, fmt.Sprint("E", i)))
	}
	record := func(d *recon.Delivery, status string) {
		if err := recordAttempt(t, ds, &recon.DeliveryAttempt{DeliveryID: d.ID}, status, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	record(list[0], recon.DeliveryDelivered)
	record(list[1], recon.DeliveryDelivered)
	record(list[2], recon.DeliveryDead)
	// Claimed with a lease that runs: in flight. Claimed long ago: not.
	if _, err := ds.ClaimDeliveries(t.Context(), nodeA, time.Now().Add(time.Second), 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.ClaimDeliveries(t.Context(), nodeA, time.Now(), 1, time.Microsecond); err != nil {
		t.Fatal(err)
	}
	return list
}

// Retention: delivered rows older than the cut are deleted, with their
// attempts; pending and dead ones stay.
func testDeliveryDeleteDeliveredBefore(t *testing.T, bundle *deliveryBundle) {
	ds, c := bundle.ds, bundle.c
	list := newDeliveryMix(t, bundle)
	n, err := ds.DeleteDeliveredBefore(t.Context(), time.Now().Add(time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("DeleteDeliveredBefore = %d, %v; want 2", n, err)
	}
	_, err = ds.Delivery(t.Context(), c.Tenant(), list[0].ID)
	wantCode(t, err, recon.ENOTFOUND, "")
	if attempts, err := ds.DeliveryAttempts(t.Context(), list[0].ID); err != nil || len(attempts) != 0 {
		t.Fatalf("attempts of a deleted delivery: %v %v", attempts, err)
	}
	left, _ := ds.Deliveries(t.Context(), c.Tenant(), recon.DeliveryFilter{Limit: 10})
	if len(left) != 4 {
		t.Fatalf("%d deliveries left, want 4", len(left))
	}
	if n, _ := ds.DeleteDeliveredBefore(t.Context(), time.Now().Add(time.Minute)); n != 0 {
		t.Fatalf("second retention run deleted %d", n)
	}
}

// ipnSetter is the part of a store that sets a company's IPN target.
type ipnSetter interface {
	SetIPN(ctx context.Context, tenant recon.TenantID, t *recon.Target) error
}

func testDeliveryTarget(t *testing.T, bundle *deliveryBundle) {
	s, ds, c := bundle.s, bundle.ds, bundle.c
	other := newCompany(t, s, 2)
	_, err := ds.DeliveryTarget(t.Context(), c.Tenant().ID(), recon.DeliveryIPN)
	wantCode(t, err, recon.ENOTFOUND, "")
	ipn, ok := s.(ipnSetter)
	if !ok {
		t.Skip("the store has no SetIPN: only DeliveryTarget's ENOTFOUND is tested")
	}
	want := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthSecretKey, Secret: "s3cret-ключ", Active: true}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), want); err != nil {
		t.Fatal(err)
	}
	got, err := ds.DeliveryTarget(t.Context(), c.Tenant().ID(), recon.DeliveryIPN)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "target", want, got)
	_, err = ds.DeliveryTarget(t.Context(), other.Tenant().ID(), recon.DeliveryIPN)
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = ds.DeliveryTarget(t.Context(), c.Tenant().ID(), recon.DeliveryWebhook)
	wantCode(t, err, recon.ENOTFOUND, "")

	off := &recon.Target{URL: "https://shop.example/ipn2", AuthType: recon.AuthNone, Active: false}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), off); err != nil {
		t.Fatal(err)
	}
	if got, err = ds.DeliveryTarget(t.Context(), c.Tenant().ID(), recon.DeliveryIPN); err != nil {
		t.Fatal(err)
	}
	diff(t, "replaced target", off, got)
}

// hubIPNSetter is the part of a store that sets a company's hub IPN target.
type hubIPNSetter interface {
	SetHubIPN(ctx context.Context, tenant recon.TenantID, t *recon.Target) error
}

// testDeliveryTargetSettings: an IPN target's settings JSON (its
// notification types: docs/api-v2.md, Notifications) round-trips as given; a
// save without settings keeps the stored ones ("{}" for a new target), so a
// v1 save or a rotation never resets them; another kind's and another
// company's targets keep their own.
func testDeliveryTargetSettings(t *testing.T, bundle *deliveryBundle) {
	s, c := bundle.s, bundle.c
	ipn, ok := s.(ipnSetter)
	if !ok {
		t.Skip("the store has no SetIPN")
	}
	v1 := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), v1); err != nil {
		t.Fatal(err)
	}
	if v1.Settings != "{}" || bundle.target(t, c.ID, recon.DeliveryIPN).Settings != "{}" {
		t.Fatalf("a new target saved without settings: %q, want {}", v1.Settings)
	}
	const chosen = `{"future":{"a":[1,2]},"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`
	set := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true, Settings: chosen}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), set); err != nil {
		t.Fatal(err)
	}
	if got := bundle.target(t, c.ID, recon.DeliveryIPN); set.Settings != chosen || got.Settings != chosen {
		t.Fatalf("settings saved %q, read %q; want %q", set.Settings, got.Settings, chosen)
	}
	// A save without settings (URL, auth type, state, a rotation) keeps them.
	keep := &recon.Target{URL: "https://shop.example/ipn2", AuthType: recon.AuthSecretKey, Active: false}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), keep); err != nil {
		t.Fatal(err)
	}
	got := bundle.target(t, c.ID, recon.DeliveryIPN)
	if keep.Settings != chosen || got.Settings != chosen || got.URL != keep.URL || got.Active {
		t.Fatalf("after a save without settings: told %q, read %+v; want the settings kept", keep.Settings, got)
	}
	if hub, ok := s.(hubIPNSetter); ok {
		h := &recon.Target{URL: "https://shop.example/hub-ipn", AuthType: recon.AuthNone, Active: true}
		if err := hub.SetHubIPN(t.Context(), c.Tenant(), h); err != nil {
			t.Fatal(err)
		}
		if h.Settings != "{}" || bundle.target(t, c.ID, recon.DeliveryHubIPN).Settings != "{}" || bundle.target(t, c.ID, recon.DeliveryIPN).Settings != chosen {
			t.Fatalf("hub IPN settings %q: the kinds' settings are not apart", h.Settings)
		}
	}
	other := newCompany(t, s, 2)
	o := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), other.Tenant(), o); err != nil {
		t.Fatal(err)
	}
	if o.Settings != "{}" || bundle.target(t, c.ID, recon.DeliveryIPN).Settings != chosen {
		t.Fatalf("another company's target: %q", o.Settings)
	}
}

func testDeliverySigningSecret(t *testing.T, bundle *deliveryBundle) {
	s, ds, c := bundle.s, bundle.ds, bundle.c
	ipn, ok := s.(ipnSetter)
	if !ok {
		t.Skip("the store has no SetIPN")
	}
	// Every target gets its own signing secret, whatever its auth type.
	none := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), none); err != nil {
		t.Fatal(err)
	}
	if len(none.SigningSecret) != recon.SecretLen {
		t.Fatalf("SetIPN without a signing secret made %q, want %d characters", none.SigningSecret, recon.SecretLen)
	}
	got, err := ds.DeliveryTarget(t.Context(), c.Tenant().ID(), recon.DeliveryIPN)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "target with a generated signing secret", none, got)
	// Saving the settings with the signing secret read keeps it.
	got.URL = "https://shop.example/ipn2"
	kept := got.SigningSecret
	if err := ipn.SetIPN(t.Context(), c.Tenant(), got); err != nil {
		t.Fatal(err)
	}
	if again, err := ds.DeliveryTarget(t.Context(), c.Tenant().ID(), recon.DeliveryIPN); err != nil || again.SigningSecret != kept || again.URL != got.URL {
		t.Fatalf("after saving with the signing secret: %+v, %v; want the secret kept", again, err)
	}
	// Another company's target gets another secret.
	d := newCompany(t, s, 2)
	other := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), d.Tenant(), other); err != nil {
		t.Fatal(err)
	}
	if other.SigningSecret == kept {
		t.Fatal("two targets got the same signing secret")
	}
}

// A save that replaces the signing secret keeps the one it replaced for
// recon.SigningOverlap (docs/design.md, D7, "Standard Webhooks."); saves that
// keep the signing secret keep it too; a second rotation drops the oldest;
// the hub webhook's rotation does the same; no other company sees any of it.
func testDeliverySigningSecretRotation(t *testing.T, bundle *deliveryBundle) {
	s, c := bundle.s, bundle.c
	ipn, ok := s.(ipnSetter)
	if !ok {
		t.Skip("the store has no SetIPN")
	}
	first := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), first); err != nil {
		t.Fatal(err)
	}
	if first.PreviousSigningSecret != "" || bundle.target(t, c.ID, recon.DeliveryIPN).PreviousSigningSecret != "" {
		t.Fatalf("a new target has a previous signing secret: %+v", first)
	}
	// The store's clock is its own: the end is a day after some instant
	// between before and after.
	before := time.Now()
	second := &recon.Target{URL: first.URL, AuthType: recon.AuthNone, Active: true, SigningSecret: recon.NewSecret()}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), second); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got := bundle.target(t, c.ID, recon.DeliveryIPN)
	if got.SigningSecret != second.SigningSecret || got.PreviousSigningSecret != first.SigningSecret ||
		second.PreviousSigningSecret != first.SigningSecret || !second.PreviousSigningUntil.Equal(got.PreviousSigningUntil) ||
		got.PreviousSigningUntil.Before(micro(before.Add(recon.SigningOverlap))) || got.PreviousSigningUntil.After(after.Add(recon.SigningOverlap)) {
		t.Fatalf("rotated: %+v, told %+v; want the first secret %q kept a day", got, second, first.SigningSecret)
	}
	until := got.PreviousSigningUntil
	// A save that keeps the signing secret keeps the previous one and its end.
	keep := &recon.Target{URL: "https://shop.example/ipn2", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), keep); err != nil {
		t.Fatal(err)
	}
	if got := bundle.target(t, c.ID, recon.DeliveryIPN); got.SigningSecret != second.SigningSecret || got.PreviousSigningSecret != first.SigningSecret ||
		!got.PreviousSigningUntil.Equal(until) || keep.PreviousSigningSecret != first.SigningSecret {
		t.Fatalf("after a save keeping the signing secret: %+v", got)
	}
	// Rotating again within the day: the first is dropped, at most two sign.
	third := &recon.Target{URL: keep.URL, AuthType: recon.AuthNone, Active: true, SigningSecret: recon.NewSecret()}
	if err := ipn.SetIPN(t.Context(), c.Tenant(), third); err != nil {
		t.Fatal(err)
	}
	if got := bundle.target(t, c.ID, recon.DeliveryIPN); got.SigningSecret != third.SigningSecret || got.PreviousSigningSecret != second.SigningSecret ||
		len(got.SigningSecrets(time.Now())) != 2 {
		t.Fatalf("rotated twice: %+v; want the second secret %q as the previous one", got, second.SigningSecret)
	}
	// The hub webhook rotates the same way.
	hub, ok := s.(recon.HubStore)
	if !ok {
		return
	}
	url := "https://hooks.example.vn/hub"
	w, _, err := hub.ChangeHubWebhook(t.Context(), c.Tenant(), recon.HubWebhookChange{URL: &url})
	if err != nil || w.PreviousSigningSecret != "" {
		t.Fatalf("new webhook: %+v, %v", w, err)
	}
	w2, _, err := hub.ChangeHubWebhook(t.Context(), c.Tenant(), recon.HubWebhookChange{RotateSigningSecret: true})
	if err != nil || w2.SigningSecret == w.SigningSecret || w2.PreviousSigningSecret != w.SigningSecret || w2.PreviousSigningUntil.IsZero() {
		t.Fatalf("rotated webhook: %+v, %v; want %q kept", w2, err, w.SigningSecret)
	}
	if got, err := hub.HubWebhook(t.Context(), c.Tenant()); err != nil || got.PreviousSigningSecret != w.SigningSecret ||
		!got.PreviousSigningUntil.Equal(w2.PreviousSigningUntil) || bundle.target(t, c.ID, recon.DeliveryWebhook).PreviousSigningSecret != w.SigningSecret {
		t.Fatalf("webhook read back: %+v, %v", got, err)
	}
	// Another company's targets have none.
	d := newCompany(t, s, 2)
	other := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthNone, Active: true}
	if err := ipn.SetIPN(t.Context(), d.Tenant(), other); err != nil {
		t.Fatal(err)
	}
	if got := bundle.target(t, d.ID, recon.DeliveryIPN); got.PreviousSigningSecret != "" {
		t.Fatalf("another company's target: %+v", got)
	}
}

// Two first saves at once, neither with secrets: both are told the
// secrets that were stored, the same ones (the store decides under
// the row's lock, not each caller from what it read before).
func testDeliveryConcurrentFirstSavesAgreeOnSecrets(t *testing.T, bundle *deliveryBundle) {
	s, ds := bundle.s, bundle.ds
	ipn, ok := s.(ipnSetter)
	if !ok {
		t.Skip("the store has no SetIPN")
	}
	e := newCompany(t, s, 3)
	var wg sync.WaitGroup
	saves := make([]*recon.Target, 2)
	errs := make([]error, 2)
	for i := range saves {
		saves[i] = &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthSecretKey, Active: true}
		wg.Go(func() { errs[i] = ipn.SetIPN(t.Context(), e.Tenant(), saves[i]) })
	}
	wg.Wait()
	stored, err := ds.DeliveryTarget(t.Context(), e.Tenant().ID(), recon.DeliveryIPN)
	if err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("concurrent first saves: %v, %v, %v", errs[0], errs[1], err)
	}
	for i, sv := range saves {
		if sv.SigningSecret != stored.SigningSecret || sv.Secret != stored.Secret || len(sv.Secret) != recon.SecretLen {
			t.Errorf("save %d was told secrets %q/%q, stored are %q/%q", i, sv.Secret, sv.SigningSecret, stored.Secret, stored.SigningSecret)
		}
	}
}
