package delivery_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestOrderedTargetAcrossNodes: two dispatchers (two nodes, each with its
// own connections to the database, started together) share an outbox with
// an ordered target and an unordered one. The ordered target's receiver
// never has two of its deliveries in flight and gets them in enqueue order;
// the unordered one's gets several at once (its handler waits until two
// are in flight, which never happens if they go one at a time).
func TestOrderedTargetAcrossNodes(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		url := dbtest.NewMigratedURL(t, engine)
		db, other := dbtest.OpenURL(t, url), dbtest.OpenURL(t, url)
		var (
			mu         sync.Mutex
			inFlight   int
			overlapped []int64
			order      []int64
		)
		ordered := newReceiver(t, func(_ http.ResponseWriter, r *http.Request, _ int) {
			id, _ := strconv.ParseInt(r.Header.Get(delivery.HeaderDelivery), 10, 64)
			mu.Lock()
			if inFlight++; inFlight > 1 {
				overlapped = append(overlapped, id)
			}
			order = append(order, id)
			mu.Unlock()
			// Widen the window in which a second request would overlap
			// (this orders nothing: the dispatchers do).
			time.Sleep(time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
		})
		// The unordered receiver holds each request until two are in flight.
		two := make(chan struct{})
		var parallel sync.Once
		var unorderedInFlight int
		var umu sync.Mutex
		unordered := newReceiver(t, func(http.ResponseWriter, *http.Request, int) {
			umu.Lock()
			if unorderedInFlight++; unorderedInFlight >= 2 {
				parallel.Do(func() { close(two) })
			}
			umu.Unlock()
			<-two
		})
		t.Cleanup(func() { parallel.Do(func() { close(two) }) }) // before the receiver closes
		a, b := newCompany(t, db, 1), newCompany(t, db, 2)
		if err := db.SetIPN(t.Context(), recon.LiveTenant(a), &recon.Target{URL: ordered.URL, AuthType: recon.AuthNone, Active: true, Ordered: true}); err != nil {
			t.Fatal(err)
		}
		setIPN(t, db, b, unordered.URL, "k")
		const n = 40
		listA, listB := enqueue(t, db, a, n), enqueue(t, db, b, n)

		begin := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		var nodes sync.WaitGroup
		for i, store := range []delivery.Store{db, other} {
			d := &delivery.Dispatcher{Store: store, Client: loopback(), Workers: 4, Batch: 8, Poll: 5 * time.Millisecond, NodeID: "node-" + strconv.Itoa(i)}
			nodes.Go(func() {
				<-begin
				if err := d.Run(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		t.Cleanup(func() { cancel(); nodes.Wait() })
		close(begin)
		testkit.WaitFor(t, "every delivery", 60*time.Second, func() bool { return countStatus(t, db, recon.DeliveryDelivered) == 2*n })
		cancel()
		nodes.Wait()

		mu.Lock()
		defer mu.Unlock()
		if len(overlapped) > 0 {
			t.Fatalf("deliveries %v of the ordered target arrived while another was in flight", overlapped)
		}
		want := make([]int64, n)
		for i, d := range listA {
			want[i] = d.ID
		}
		if !slices.Equal(order, want) {
			t.Fatalf("the ordered target received %v, want %v", order, want)
		}
		if got := unordered.total.Load(); got != int64(len(listB)) {
			t.Fatalf("the unordered target got %d requests for %d deliveries", got, len(listB))
		}
	})
}
