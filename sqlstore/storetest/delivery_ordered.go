package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
)

// Ordered targets (recon.Target.Ordered; docs/design.md, D7, "Ordered
// targets"): the deliveries of an ordered target's company and kind are
// claimed one at a time, lowest id first, the next only once the one before
// it is delivered or dead.

// orderedBundle is a delivery bundle whose company has an ordered IPN target,
// and another company with an unordered one.
type orderedBundle struct {
	*deliveryBundle
	other *recon.Company
	now   time.Time
}

func orderedSetup(open Open) func(t *testing.T) *orderedBundle {
	return func(t *testing.T) *orderedBundle {
		s := open(t)
		b := &orderedBundle{deliveryBundle: &deliveryBundle{s: s, ds: storeAs[recon.DeliveryStore](t, s), c: newCompany(t, s, 1)},
			// An hour past the real clock, which stamps the deliveries
			// enqueued: under load, the enqueues of a test could outlast a
			// smaller margin, and a head not yet due would hold the others
			// back (ConcurrentClaimersOneInFlight's claimers then spun for
			// ever instead of failing). Every time the tests use is b.now's.
			now: time.Now().Add(time.Hour)}
		b.other = newCompany(t, s, 2)
		setter, ok := s.(ipnSetter)
		if !ok {
			t.Skip("the store has no SetIPN")
		}
		for _, co := range []*recon.Company{b.c, b.other} {
			if err := setter.SetIPN(t.Context(), co.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone,
				Active: true, Ordered: co == b.c}); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
}

func testDeliveryOrdered(t *testing.T, open Open) {
	setup := orderedSetup(open)
	run(t, "OneAtATimeInIDOrder", setup, testOrderedOneAtATime)
	run(t, "FailingHeadHoldsTheRest", setup, testOrderedFailingHeadHolds)
	run(t, "EarlierPendingWaitsForTheOneInFlight", setup, testOrderedEarlierWaitsForInFlight)
	run(t, "TurnedOffClaimsTogether", setup, testOrderedTurnedOff)
	run(t, "ConcurrentClaimersOneInFlight", setup, testOrderedConcurrentClaimers)
	run(t, "SavedAndRead", setup, testOrderedSavedAndRead)
}

func (b *orderedBundle) claim(t *testing.T, at time.Time, node string, want ...*recon.Delivery) []*recon.Delivery {
	t.Helper()
	got, err := b.ds.ClaimDeliveries(t.Context(), node, at, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "claim", ids(want), ids(got))
	return got
}

func (b *orderedBundle) record(t *testing.T, d *recon.Delivery, status string, next time.Time) {
	t.Helper()
	if err := recordAttempt(t, b.ds, &recon.DeliveryAttempt{DeliveryID: d.ID, At: b.now, URL: "https://shop.example.vn/ipn", StatusCode: 200}, status, next); err != nil {
		t.Fatal(err)
	}
}

// testOrderedOneAtATime: of the ordered company's IPNs, one is claimed
// at a time, in id order, while the other company's (unordered) are
// claimed together and its webhook (another kind, no target) is not held
// back; a delivered one frees the next, a lapsed lease is claimed again.
func testOrderedOneAtATime(t *testing.T, b *orderedBundle) {
	ds, c := b.ds, b.c
	a1, a2, a3 := enqueue(t, ds, c.ID, "A1"), enqueue(t, ds, c.ID, "A2"), enqueue(t, ds, c.ID, "A3")
	o1, o2 := enqueue(t, ds, b.other.ID, "O1"), enqueue(t, ds, b.other.ID, "O2")
	hook := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryWebhook, Event: "W1", Payload: []byte(`{}`)}
	if err := ds.EnqueueDelivery(t.Context(), hook); err != nil {
		t.Fatal(err)
	}
	b.claim(t, b.now, nodeA, a1, o1, o2, hook)
	for _, d := range []*recon.Delivery{o1, o2, hook} {
		b.record(t, d, recon.DeliveryDelivered, time.Time{})
	}
	b.claim(t, b.now, nodeA) // A1 in flight holds A2 and A3
	b.record(t, a1, recon.DeliveryDelivered, time.Time{})
	b.claim(t, b.now, nodeA, a2)
	// The claimer of A2 dies: once its lease lapses A2 is claimed again,
	// and A3 still waits.
	after := b.now.Add(2 * time.Minute)
	b.claim(t, after, "node-b", a2)
	b.record(t, a2, recon.DeliveryDelivered, time.Time{})
	b.claim(t, after, nodeA, a3)
	b.record(t, a3, recon.DeliveryDelivered, time.Time{})
	b.claim(t, after, nodeA)
}

// testOrderedFailingHeadHolds: a head waiting for its retry holds the
// ones after it (unlike the hub's own event order); due again, it is
// claimed again; dead, it frees the next.
func testOrderedFailingHeadHolds(t *testing.T, b *orderedBundle) {
	ds, c := b.ds, b.c
	a1, a2 := enqueue(t, ds, c.ID, "A1"), enqueue(t, ds, c.ID, "A2")
	b.claim(t, b.now, nodeA, a1)
	retry := b.now.Add(time.Hour)
	b.record(t, a1, recon.DeliveryPending, retry)
	b.claim(t, b.now, nodeA) // A1 waits for its retry: A2 waits behind it
	b.claim(t, b.now.Add(30*time.Minute), nodeA)
	b.claim(t, retry, nodeA, a1)
	b.record(t, a1, recon.DeliveryPending, retry.Add(time.Hour))
	b.claim(t, retry, nodeA)
	b.claim(t, retry.Add(time.Hour), nodeA, a1)
	b.record(t, a1, recon.DeliveryDead, time.Time{})
	b.claim(t, retry.Add(time.Hour), nodeA, a2)
}

// testOrderedEarlierWaitsForInFlight: a delivery with a lower id that
// becomes pending while a later one is in flight (replayed here; an
// enqueue that commits after a later one would be the same) waits until
// the one in flight ends: never two in flight.
func testOrderedEarlierWaitsForInFlight(t *testing.T, b *orderedBundle) {
	ds, c := b.ds, b.c
	a1, a2 := enqueue(t, ds, c.ID, "A1"), enqueue(t, ds, c.ID, "A2")
	b.claim(t, b.now, nodeA, a1)
	b.record(t, a1, recon.DeliveryDelivered, time.Time{})
	b.claim(t, b.now, nodeA, a2)
	if err := ds.ReplayDelivery(t.Context(), c.Tenant(), a1.ID, b.now); err != nil {
		t.Fatal(err)
	}
	b.claim(t, b.now, nodeA) // A2 in flight: A1, now the lowest, waits
	b.record(t, a2, recon.DeliveryDelivered, time.Time{})
	b.claim(t, b.now, nodeA, a1)
}

// testOrderedTurnedOff: a target saved unordered again has its pending
// deliveries claimed together at once.
func testOrderedTurnedOff(t *testing.T, b *orderedBundle) {
	ds, c := b.ds, b.c
	a1, a2, a3 := enqueue(t, ds, c.ID, "A1"), enqueue(t, ds, c.ID, "A2"), enqueue(t, ds, c.ID, "A3")
	b.claim(t, b.now, nodeA, a1)
	if err := b.s.(ipnSetter).SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	b.claim(t, b.now, nodeA, a2, a3)
}

// testOrderedConcurrentClaimers: claimers on several goroutines (nodes),
// released together, each recording what it claimed as delivered: never
// two of the ordered target's deliveries held at once, and they are
// claimed in id order, each once.
func testOrderedConcurrentClaimers(t *testing.T, b *orderedBundle) {
	ds, c := b.ds, b.c
	const total, claimers = 30, 4
	var want []int64
	for i := range total {
		want = append(want, enqueue(t, ds, c.ID, fmt.Sprint("A", i)).ID)
	}
	var (
		mu       sync.Mutex
		held     int
		order    []int64
		problems []string
		start    = make(chan struct{})
		wg       sync.WaitGroup
	)
	// A stall (deliveries left claimed, or not due) fails the test after a
	// minute instead of spinning until the package's timeout.
	stall := time.Now().Add(time.Minute)
	for i := range claimers {
		node := fmt.Sprint("node-", i)
		wg.Go(func() {
			<-start
			for {
				mu.Lock()
				done := len(order) >= total || len(problems) > 0 // more than total: a delivery claimed twice, which diff reports
				if !done && time.Now().After(stall) {
					problems = append(problems, fmt.Sprintf("stalled after %d of %d deliveries claimed", len(order), total))
					done = true
				}
				mu.Unlock()
				if done {
					return
				}
				got, err := ds.ClaimDeliveries(context.Background(), node, b.now, 5, time.Hour)
				if err != nil {
					mu.Lock()
					problems = append(problems, err.Error())
					mu.Unlock()
					return
				}
				for _, d := range got {
					mu.Lock()
					// The count goes up after the claim committed and down
					// before the record commits: a second claim between
					// the two finds it at 1.
					if held++; held > 1 {
						problems = append(problems, fmt.Sprintf("%s claimed %d while another was held", node, d.ID))
					}
					order = append(order, d.ID)
					held--
					mu.Unlock()
					if err := ds.RecordAttempts(context.Background(), []recon.AttemptOutcome{{
						Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: b.now, StatusCode: 200}, Status: recon.DeliveryDelivered}}); err != nil {
						mu.Lock()
						problems = append(problems, err.Error())
						mu.Unlock()
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	diff(t, "claim order", want, order)
}

// testOrderedSavedAndRead: ordered round-trips through SetIPN, SetHubIPN
// and ChangeHubWebhook (kept when the change leaves it out), each target
// its own.
func testOrderedSavedAndRead(t *testing.T, b *orderedBundle) {
	s, ds, c := b.s, b.ds, b.c
	read := func(companyID int64, kind string, want bool) {
		t.Helper()
		got, err := ds.DeliveryTarget(t.Context(), companyID, kind)
		if err != nil {
			t.Fatal(err)
		}
		if got.Ordered != want {
			t.Fatalf("company %d's %s target: ordered %v, want %v", companyID, kind, got.Ordered, want)
		}
	}
	read(c.ID, recon.DeliveryIPN, true)
	read(b.other.ID, recon.DeliveryIPN, false)
	if hs, ok := s.(hubIPNSetter); ok {
		if err := hs.SetHubIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/hub-ipn", AuthType: recon.AuthNone, Active: true, Ordered: true}); err != nil {
			t.Fatal(err)
		}
		read(c.ID, recon.DeliveryHubIPN, true)
		read(c.ID, recon.DeliveryIPN, true)
	}
	hub, ok := s.(recon.HubStore)
	if !ok {
		return
	}
	yes := true
	w, _, err := hub.ChangeHubWebhook(t.Context(), b.other.Tenant(), recon.HubWebhookChange{URL: sptr("https://hooks.example.vn/hub"), Ordered: &yes})
	if err != nil || !w.Ordered {
		t.Fatalf("ChangeHubWebhook ordered: %+v, %v", w, err)
	}
	if w, _, err = hub.ChangeHubWebhook(t.Context(), b.other.Tenant(), recon.HubWebhookChange{Active: sptr(false)}); err != nil || !w.Ordered {
		t.Fatalf("a change without ordered: %+v, %v", w, err)
	}
	if got, err := hub.HubWebhook(t.Context(), b.other.Tenant()); err != nil || !got.Ordered {
		t.Fatalf("HubWebhook: %+v, %v", got, err)
	}
	read(b.other.ID, recon.DeliveryWebhook, true)
	read(b.other.ID, recon.DeliveryIPN, false)
	if _, err := hub.HubWebhook(t.Context(), c.Tenant()); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Fatalf("the other company's webhook: %v", err)
	}
}
