package delivery_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// loopback is the client of the tests: their receivers listen on 127.0.0.1.
func loopback() *delivery.Client {
	return delivery.NewClient(delivery.ClientOptions{AllowPrivate: true})
}

func TestDispatcherDelivers(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.Write([]byte("OK")) })
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL+"/ipn", "s3cret")
		d := enqueue(t, db, c, 1)[0]
		reg := prometheus.NewRegistry()
		start(t, &delivery.Dispatcher{Store: db, Client: loopback(), Metrics: delivery.NewMetrics(reg), Poll: 10 * time.Millisecond})

		testkit.WaitFor(t, "the delivery to be delivered", 30*time.Second, func() bool { return status(t, db, d.ID).Status == recon.DeliveryDelivered })
		got := status(t, db, d.ID)
		if got.Attempts != 1 || got.LastError != "" || !got.LeaseUntil.IsZero() || got.DeliveredAt.IsZero() {
			t.Fatalf("delivered %+v", got)
		}
		attempts, err := db.DeliveryAttempts(t.Context(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 1 || attempts[0].StatusCode != 200 || attempts[0].URL != rc.URL+"/ipn" || attempts[0].Response != "OK" ||
			attempts[0].Error != "" || attempts[0].Latency <= 0 || !attempts[0].At.Equal(got.DeliveredAt) {
			t.Fatalf("attempts %+v", attempts)
		}
		calls := rc.calls(d.ID)
		if len(calls) != 1 {
			t.Fatalf("receiver got %d requests", len(calls))
		}
		h := calls[0].header
		if h.Get(delivery.HeaderSecretKey) != "s3cret" || h.Get(delivery.HeaderEvent) != "ORDER_PAID" ||
			delivery.Verify(signingSecret(t, db, d.CompanyID), h.Get(delivery.HeaderTimestamp), h.Get(delivery.HeaderSignature), calls[0].body, time.Now(), time.Minute) != nil {
			t.Fatalf("headers %v", h)
		}
		testkit.WaitFor(t, "the attempt to be counted", 30*time.Second, func() bool {
			return counter(t, reg, "recon_delivery_attempts_total", "delivered") == 1
		})
	})
}

// counter returns the value of a counter registered on reg, by name and label value.
func counter(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if f.GetName() == name && l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no metric %s{%s}", name, label)
	return 0
}

func TestDispatcherRetriesThenDelivers(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, call int) {
			if call < 3 {
				http.Error(w, "try later", http.StatusInternalServerError)
			}
		})
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		d := enqueue(t, db, c, 1)[0]
		start(t, &delivery.Dispatcher{Store: db, Client: loopback(), Poll: 5 * time.Millisecond,
			Schedule: delivery.Schedule{Waits: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond}, MaxAge: time.Hour}})

		testkit.WaitFor(t, "the delivery to be delivered", 30*time.Second, func() bool { return status(t, db, d.ID).Status == recon.DeliveryDelivered })
		attempts, err := db.DeliveryAttempts(t.Context(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 3 || attempts[0].StatusCode != 500 || attempts[0].Error != "HTTP 500" ||
			!strings.HasPrefix(attempts[0].Response, "try later") || attempts[2].StatusCode != 200 {
			t.Fatalf("attempts %+v", attempts)
		}
		if got := status(t, db, d.ID); got.Attempts != 3 || got.LastError != "" {
			t.Fatalf("delivery %+v", got)
		}
		// The schedule's waits lie between the attempts.
		calls := rc.calls(d.ID)
		if gap := calls[1].at.Sub(calls[0].at); gap < 20*time.Millisecond {
			t.Errorf("second attempt %s after the first, want at least 20ms", gap)
		}
		if gap := calls[2].at.Sub(calls[1].at); gap < 40*time.Millisecond {
			t.Errorf("third attempt %s after the second, want at least 40ms", gap)
		}
	})
}

func TestDispatcherGivesUp(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
		})
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		d := enqueue(t, db, c, 1)[0]
		clock := testkit.NewClock(time.Now())
		store := &claimCounter{DB: db}
		start(t, &delivery.Dispatcher{Store: store, Client: loopback(), Clock: clock, Poll: time.Millisecond,
			Schedule: delivery.Schedule{Waits: []time.Duration{time.Minute}, MaxAge: 150 * time.Second}})
		// Attempts at 0, 1 and 2 minutes, then at 2.5 (the 150 s deadline): dead.
		for i := 1; i <= 3; i++ {
			testkit.WaitFor(t, "an attempt", 30*time.Second, func() bool { return rc.total.Load() == int64(i) && status(t, db, d.ID).Attempts == i })
			clock.Advance(time.Minute)
		}
		testkit.WaitFor(t, "the delivery to be dead", 30*time.Second, func() bool { return status(t, db, d.ID).Status == recon.DeliveryDead })
		got := status(t, db, d.ID)
		if got.Attempts != 4 || got.LastError != "HTTP 302: redirects are not followed" || rc.total.Load() != 4 {
			t.Fatalf("dead delivery %+v after %d requests", got, rc.total.Load())
		}
	})
}

func TestDispatcherWithoutActiveTarget(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc := newReceiver(t, nil)
		none, inactive := newCompany(t, db, 1), newCompany(t, db, 2)
		if err := db.SetIPN(t.Context(), recon.LiveTenant(inactive), &recon.Target{URL: rc.URL, AuthType: recon.AuthNone, Active: false}); err != nil {
			t.Fatal(err)
		}
		list := append(enqueue(t, db, none, 1), enqueue(t, db, inactive, 1)...)
		start(t, &delivery.Dispatcher{Store: db, Client: loopback(), Poll: 5 * time.Millisecond})
		for _, d := range list {
			testkit.WaitFor(t, "the delivery to be dead", 30*time.Second, func() bool { return status(t, db, d.ID).Status == recon.DeliveryDead })
			if got := status(t, db, d.ID); got.LastError != "no active IPN target" || got.Attempts != 1 {
				t.Fatalf("delivery %+v", got)
			}
		}
		if rc.total.Load() != 0 {
			t.Fatalf("an inactive target received %d requests", rc.total.Load())
		}
	})
}

func TestDispatcherRefusesInternalTargets(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	rc := newReceiver(t, nil)
	c := newCompany(t, db, 1)
	// Saved when private targets were allowed, or through a name that
	// resolved elsewhere then: the dispatcher's dialer refuses it now.
	setIPN(t, db, c, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1), "k")
	d := enqueue(t, db, c, 1)[0]
	start(t, &delivery.Dispatcher{Store: db, Client: delivery.NewClient(delivery.ClientOptions{}), Poll: 5 * time.Millisecond})
	testkit.WaitFor(t, "an attempt", 30*time.Second, func() bool { return status(t, db, d.ID).Attempts == 1 })
	if got := status(t, db, d.ID); got.Status != recon.DeliveryPending || got.LastError != "refused to connect to an internal address" {
		t.Fatalf("delivery %+v", got)
	}
	if rc.total.Load() != 0 {
		t.Fatalf("the receiver got %d requests", rc.total.Load())
	}
}

func TestDispatcherKick(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		_, c := companyWithReceiver(t, db)
		store := &claimCounter{DB: db}
		d := &delivery.Dispatcher{Store: store, Client: loopback(), Poll: time.Hour}
		start(t, d)
		testkit.WaitFor(t, "the first claim", 30*time.Second, func() bool { return store.claims.Load() >= 1 })
		// The dispatcher now waits an hour, unless kicked.
		dl := enqueue(t, db, c, 1)[0]
		d.Kick()
		d.Kick() // kicks merge; none blocks
		testkit.WaitFor(t, "the kicked delivery", 30*time.Second, func() bool { return status(t, db, dl.ID).Status == recon.DeliveryDelivered })
	})
}

// TestDispatchersShareTheOutbox: two dispatchers on one database deliver
// every delivery exactly once.
func TestDispatchersShareTheOutbox(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		url := dbtest.NewMigratedURL(t, engine)
		db, other := dbtest.OpenURL(t, url), dbtest.OpenURL(t, url) // two nodes
		// The receiver answers nothing until both dispatchers have claimed:
		// a dispatcher holds at most Workers × 3 deliveries, so the first
		// to start cannot take all 200 however the machine schedules them.
		gate := make(chan struct{})
		var open sync.Once
		opened := func() { open.Do(func() { close(gate) }) }
		rc := newReceiver(t, func(http.ResponseWriter, *http.Request, int) { <-gate })
		t.Cleanup(opened) // before the receiver closes (cleanups run last first)
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		list := enqueue(t, db, c, 200)
		one, two := &claimCounter{DB: db}, &claimCounter{DB: other}
		start(t, &delivery.Dispatcher{Store: one, Client: loopback(), Workers: 4, Batch: 8, Poll: 5 * time.Millisecond})
		start(t, &delivery.Dispatcher{Store: two, Client: loopback(), Workers: 4, Batch: 8, Poll: 5 * time.Millisecond})
		testkit.WaitFor(t, "a claim by each dispatcher", 30*time.Second, func() bool { return one.claims.Load() > 0 && two.claims.Load() > 0 })
		opened()
		testkit.WaitFor(t, "every delivery", 30*time.Second, func() bool { return countStatus(t, db, recon.DeliveryDelivered) == int64(len(list)) })
		counts := rc.counts()
		for _, d := range list {
			if counts[d.ID] != 1 {
				t.Fatalf("delivery %d received %d times", d.ID, counts[d.ID])
			}
		}
		if len(counts) != len(list) || rc.total.Load() != int64(len(list)) {
			t.Fatalf("%d requests for %d deliveries", rc.total.Load(), len(list))
		}
		if one.claims.Load() == 0 || two.claims.Load() == 0 {
			t.Fatalf("claims: %d and %d; both dispatchers should have claimed", one.claims.Load(), two.claims.Load())
		}
	})
}

// crashedNode joins as a dispatcher node, claims every due delivery at
// clock's time, and never records an attempt or beats again: a node
// killed with its claims in flight.
func crashedNode(t *testing.T, db *sqlstore.DB, clock *testkit.Clock, want int) {
	t.Helper()
	if _, err := db.BeatDeliveryNode(t.Context(), "crashed", clock.Now(), clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimDeliveries(t.Context(), "crashed", clock.Now(), 1000, delivery.DefaultLease)
	if err != nil || len(claimed) != want {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
}

// TestDispatcherTakesUpADeadNodesClaims: rows claimed by a node that died
// are sent by another once the dead node's heartbeat is older than the node
// timeout, long before their lease lapses, and not while it is fresh.
func TestDispatcherTakesUpADeadNodesClaims(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc, c := companyWithReceiver(t, db)
		list := enqueue(t, db, c, 50)
		clock := testkit.NewClock(time.Now())
		crashedNode(t, db, clock, len(list))
		store := &claimCounter{DB: db}
		start(t, &delivery.Dispatcher{Store: store, Client: loopback(), Clock: clock, Poll: time.Millisecond,
			Heartbeat: 10 * time.Millisecond, NodeTimeout: 5 * time.Second})
		testkit.WaitFor(t, "a few claims", 30*time.Second, func() bool { return store.claims.Load() >= 5 })
		if n := rc.total.Load(); n != 0 {
			t.Fatalf("%d deliveries sent while the crashed node's heartbeat is fresh", n)
		}
		clock.Advance(5*time.Second + time.Microsecond) // a minute and more before the lease lapses
		testkit.WaitFor(t, "every delivery", 30*time.Second, func() bool { return countStatus(t, db, recon.DeliveryDelivered) == int64(len(list)) })
		for id, n := range rc.counts() {
			if n != 1 {
				t.Fatalf("delivery %d received %d times", id, n)
			}
		}
	})
}

// TestDispatcherRecoversALapsedLease: a claim whose lease lapsed is taken
// up even while its node beats (a node cut off from the database, say, but
// not from the others' view for that long): the lease is the last resort.
func TestDispatcherRecoversALapsedLease(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc, c := companyWithReceiver(t, db)
		list := enqueue(t, db, c, 20)
		clock := testkit.NewClock(time.Now())
		crashedNode(t, db, clock, len(list))
		store := &claimCounter{DB: db}
		// A node timeout longer than the lease: only the lease can free them.
		start(t, &delivery.Dispatcher{Store: store, Client: loopback(), Clock: clock, Poll: time.Millisecond,
			Heartbeat: 10 * time.Millisecond, NodeTimeout: time.Hour})
		testkit.WaitFor(t, "a few claims", 30*time.Second, func() bool { return store.claims.Load() >= 5 })
		clock.Advance(delivery.DefaultLease - time.Second)
		before := store.claims.Load()
		testkit.WaitFor(t, "a few more claims", 30*time.Second, func() bool { return store.claims.Load() >= before+5 })
		if n := rc.total.Load(); n != 0 {
			t.Fatalf("%d deliveries sent while the crashed claim's lease runs", n)
		}
		clock.Advance(time.Second)
		testkit.WaitFor(t, "every delivery", 30*time.Second, func() bool { return countStatus(t, db, recon.DeliveryDelivered) == int64(len(list)) })
	})
}

// TestDispatcherDeclaredDeadStartsNothingItHeld: a node that was only slow
// but declared dead by another (its claims released and taken up) starts
// none of the attempts it still had queued once it learns it, so that they
// are not sent twice.
func TestDispatcherDeclaredDeadStartsNothingItHeld(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		arrived, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			once.Do(func() {
				close(arrived)
				<-release
			})
		})
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		list := enqueue(t, db, c, 2)
		clock := testkit.NewClock(time.Now())
		var logs testkit.Buffer
		// One worker: the second delivery waits in the queue while the first
		// is sent. No poll after the first claim (nothing kicks it): the
		// slow node does not claim back what the other node's beat releases.
		start(t, &delivery.Dispatcher{Store: db, Client: loopback(), Clock: clock, Workers: 1, Poll: time.Hour,
			NodeID: "slow", Heartbeat: 10 * time.Millisecond, NodeTimeout: 5 * time.Second,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		var released sync.Once
		unblock := func() { released.Do(func() { close(release) }) }
		t.Cleanup(unblock) // before the dispatcher stops, should the test fail
		<-arrived
		// Another node, whose clock runs ahead, declares "slow" dead and
		// takes up both claims.
		later := clock.Now().Add(time.Minute)
		if b, err := db.BeatDeliveryNode(t.Context(), "other", later, later.Add(-5*time.Second)); err != nil || b.Released != 2 {
			t.Fatalf("the other node's beat: %+v, %v; want 2 released", b, err)
		}
		if got, err := db.ClaimDeliveries(t.Context(), "other", later, 10, time.Hour); err != nil || len(got) != 2 {
			t.Fatalf("the other node's claim: %v, %v", len(got), err)
		}
		testkit.WaitFor(t, "the slow node to learn it was declared dead", 30*time.Second, func() bool { return strings.Contains(logs.String(), "declared dead") })
		unblock()
		testkit.WaitFor(t, "the queued delivery to be dropped", 30*time.Second, func() bool { return strings.Contains(logs.String(), "attempt not started") })
		testkit.WaitFor(t, "the first delivery to be recorded", 30*time.Second, func() bool { return status(t, db, list[0].ID).Attempts == 1 })
		if got := status(t, db, list[1].ID); got.Attempts != 0 || got.ClaimedBy != "other" || rc.total.Load() != 1 {
			t.Fatalf("second delivery %+v after %d requests", got, rc.total.Load())
		}
	})
}

// TestDispatcherHandsBackClaimsOnStop: the deliveries a stopping
// dispatcher had claimed but not started are free at once for the next one,
// without waiting for a heartbeat timeout or a lease.
func TestDispatcherHandsBackClaimsOnStop(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		arrived, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			once.Do(func() {
				close(arrived)
				<-release
			})
		})
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		list := enqueue(t, db, c, 3)
		// One worker: the others wait in the queue while the first is sent.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- (&delivery.Dispatcher{Store: db, Client: loopback(), Workers: 1, Poll: time.Millisecond, NodeID: "stopping"}).Run(ctx)
		}()
		var released sync.Once
		unblock := func() { released.Do(func() { close(release) }) }
		t.Cleanup(func() { cancel(); unblock(); <-done })
		<-arrived
		if got := status(t, db, list[2].ID); got.ClaimedBy != "stopping" {
			t.Fatalf("queued delivery %+v, want claimed by the dispatcher", got)
		}
		cancel() // the stop begins while the first attempt is in progress
		unblock()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		done <- nil // for the cleanup
		if got := status(t, db, list[0].ID); got.Status != recon.DeliveryDelivered {
			t.Fatalf("the delivery in progress at the stop: %+v", got)
		}
		for _, d := range list[1:] {
			if got := status(t, db, d.ID); got.ClaimedBy != "" || !got.LeaseUntil.IsZero() || got.Attempts != 0 {
				t.Fatalf("a delivery not started at the stop: %+v, want its claim released", got)
			}
		}
	})
}

// TestDispatcherFinishesAttemptsOnStop: cancelling Run lets the attempts in
// progress finish and be recorded before it returns.
func TestDispatcherFinishesAttemptsOnStop(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		arrived, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			once.Do(func() { close(arrived) })
			<-release
		})
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		d := enqueue(t, db, c, 1)[0]
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- (&delivery.Dispatcher{Store: db, Client: loopback(), Poll: 5 * time.Millisecond}).Run(ctx)
		}()
		<-arrived
		cancel()
		select {
		case err := <-done:
			t.Fatalf("Run returned (%v) with an attempt in progress", err)
		default:
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := status(t, db, d.ID); got.Status != recon.DeliveryDelivered {
			t.Fatalf("after Run returned: %+v", got)
		}
	})
}

func TestDispatcherConfiguration(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	err := (&delivery.Dispatcher{Store: db, Lease: time.Second}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("a lease shorter than the client's timeout: Run = %v", err)
	}
	if err := (&delivery.Dispatcher{}).Run(context.Background()); err == nil {
		t.Fatal("no store: Run = nil")
	}
}

// TestDispatcherDoesNotStartAttemptsPastTheLease: a claimed delivery that
// waited for a worker so long that an attempt could outlive its lease is
// left for the next claim.
func TestDispatcherDoesNotStartAttemptsPastTheLease(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		once.Do(func() {
			close(arrived)
			<-release
		})
	})
	c := newCompany(t, db, 1)
	setIPN(t, db, c, rc.URL, "k")
	list := enqueue(t, db, c, 2)
	clock := testkit.NewClock(time.Now())
	var logs testkit.Buffer
	// One worker: the second delivery waits in the queue while the first is sent.
	start(t, &delivery.Dispatcher{Store: db, Client: loopback(), Clock: clock, Workers: 1, Poll: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	<-arrived
	clock.Advance(100 * time.Second) // past the 2 min lease less the 30 s timeout and the 5 s to record
	close(release)
	testkit.WaitFor(t, "the second delivery to be skipped", 30*time.Second, func() bool { return strings.Contains(logs.String(), "lease too short") })
	if got := status(t, db, list[1].ID); got.Attempts != 0 || rc.total.Load() != 1 {
		t.Fatalf("second delivery %+v after %d requests", got, rc.total.Load())
	}
	testkit.WaitFor(t, "the first delivery to be recorded", 30*time.Second, func() bool { return status(t, db, list[0].ID).Status == recon.DeliveryDelivered })
	clock.Advance(30 * time.Second) // the second's lease lapses: claimed again
	testkit.WaitFor(t, "both deliveries", 30*time.Second, func() bool { return countStatus(t, db, recon.DeliveryDelivered) == 2 })
	if counts := rc.counts(); counts[list[0].ID] != 1 || counts[list[1].ID] != 1 {
		t.Fatalf("requests per delivery: %v", counts)
	}
}

// TestDispatcherBeatsUntilItsAttemptsEnd: a node stopped gracefully while an
// attempt is in progress keeps its heartbeat until the attempt is recorded.
// It used to stop beating at once, so that another node declared it dead and
// sent the delivery again while the first attempt was still running.
func TestDispatcherBeatsUntilItsAttemptsEnd(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		arrived, release := make(chan struct{}), make(chan struct{})
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, call int) {
			if call == 1 {
				close(arrived)
				<-release
			}
		})
		var releaseOnce sync.Once
		unblock := func() { releaseOnce.Do(func() { close(release) }) }
		t.Cleanup(unblock) // a failing test must not leave the receiver hanging
		c := newCompany(t, db, 1)
		setIPN(t, db, c, rc.URL, "k")
		d := enqueue(t, db, c, 1)[0]
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		done := make(chan error, 1)
		go func() {
			done <- (&delivery.Dispatcher{Store: db, Client: loopback(), NodeID: "graceful", Poll: 5 * time.Millisecond,
				Heartbeat: 10 * time.Millisecond, NodeTimeout: time.Minute}).Run(ctx)
		}()
		<-arrived
		beat := func() (at time.Time) {
			t.Helper()
			if err := db.SQL().QueryRowContext(t.Context(), `SELECT heartbeat_at FROM delivery_nodes WHERE id = 'graceful'`).Scan(&at); err != nil {
				t.Fatal(err)
			}
			return at
		}
		cancel() // the stop begins with the attempt in progress
		stoppedAt := beat()
		testkit.WaitFor(t, "a heartbeat after the stop began", 30*time.Second, func() bool { return beat().After(stoppedAt) })
		unblock()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := status(t, db, d.ID); got.Status != recon.DeliveryDelivered {
			t.Fatalf("delivery after the graceful stop: %s", got.Status)
		}
	})
}

// TestDispatcherWithADeadDatabase: when the database goes away under a
// running dispatcher, its heartbeat and claims fail and are logged, nothing
// is sent, and it still stops cleanly when asked.
func TestDispatcherWithADeadDatabase(t *testing.T) {
	db := dbtest.OpenStore(t, "sqlite")
	rc, _ := companyWithReceiver(t, db)
	var logs testkit.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&delivery.Dispatcher{Store: db, Client: loopback(), Poll: 5 * time.Millisecond,
			Heartbeat: 10 * time.Millisecond, NodeTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Run(ctx)
	}()
	testkit.WaitFor(t, "the node to join", 30*time.Second, func() bool { return countNodes(t, db) == 1 })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a logged heartbeat failure", 30*time.Second, func() bool { return strings.Contains(logs.String(), "delivery: node heartbeat") })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after the database went away: %v", err)
	}
	if n := len(rc.counts()); n != 0 {
		t.Fatalf("%d deliveries sent without a database", n)
	}
}

func countNodes(t *testing.T, db *sqlstore.DB) (n int) {
	t.Helper()
	if err := db.SQL().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM delivery_nodes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDispatcherReleasesLostClaimsAfterAnOutage: claims a node holds in the
// database but knows nothing of (a claim whose commit reached the database
// while its answer was lost in a failover) are released when the database
// answers again, and sent at once: not when their lease lapses (an hour
// here). PostgreSQL only: the outage is a dbtest.Outage.
func TestDispatcherReleasesLostClaimsAfterAnOutage(t *testing.T) {
	t.Parallel()
	db, outage, direct := dbtest.OpenOutageStore(t)
	rc, c := companyWithReceiver(t, db)
	var logs testkit.Buffer
	start(t, &delivery.Dispatcher{Store: db, Client: loopback(), NodeID: "n", Poll: 5 * time.Millisecond, Lease: time.Hour,
		Heartbeat: 10 * time.Millisecond, NodeTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	testkit.WaitFor(t, "the node to join", 30*time.Second, func() bool { return countNodes(t, db) == 1 })
	outage.Cut()
	testkit.WaitFor(t, "the outage noticed", 30*time.Second, func() bool { return strings.Contains(logs.String(), "sending paused") })
	// Meanwhile the database got the node's claims, whose answers it
	// never received.
	other := dbtest.OpenURL(t, direct)
	list := enqueue(t, other, c, 3)
	if got, err := other.ClaimDeliveries(t.Context(), "n", time.Now(), 10, time.Hour); err != nil || len(got) != len(list) {
		t.Fatalf("claims in the node's name: %d, %v", len(got), err)
	}
	outage.Restore()
	wantReleasedAndSentOnce(t, other, rc, list, &logs)
}

// wantReleasedAndSentOnce waits until every delivery of list is delivered,
// then fails t unless each was received once and the release of the node's
// lost claims was logged.
func wantReleasedAndSentOnce(t *testing.T, db *sqlstore.DB, rc *receiver, list []*recon.Delivery, logs *testkit.Buffer) {
	t.Helper()
	testkit.WaitFor(t, "every delivery", 30*time.Second, func() bool {
		return countStatus(t, db, recon.DeliveryDelivered) == int64(len(list))
	})
	for _, d := range list {
		if n := len(rc.calls(d.ID)); n != 1 {
			t.Fatalf("delivery %d received %d times", d.ID, n)
		}
	}
	if !strings.Contains(logs.String(), "released the claims this node lost track of") {
		t.Fatalf("the release is not logged:\n%s", logs.String())
	}
}

// failingClaims is the real store whose first claim that takes something
// commits and then fails, as a claim whose rows did not scan or whose
// context ended while they were read.
type failingClaims struct {
	*sqlstore.DB
	failed atomic.Bool
}

func (s *failingClaims) ClaimDeliveries(ctx context.Context, node string, now time.Time, n int, lease time.Duration) ([]*recon.Delivery, error) {
	list, err := s.DB.ClaimDeliveries(ctx, node, now, n, lease)
	if err == nil && len(list) > 0 && s.failed.CompareAndSwap(false, true) {
		return nil, errors.New("claim deliveries: the rows did not scan")
	}
	return list, err
}

// TestDispatcherReleasesAClaimWhoseAnswerFailed: deliveries claimed by a
// claim that committed and still returned an error are released by the next
// beat and sent once, not when their lease lapses (an hour here).
func TestDispatcherReleasesAClaimWhoseAnswerFailed(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		rc, c := companyWithReceiver(t, db)
		list := enqueue(t, db, c, 3)
		var logs testkit.Buffer
		store := &failingClaims{DB: db}
		start(t, &delivery.Dispatcher{Store: store, Client: loopback(), NodeID: "n", Poll: 5 * time.Millisecond, Lease: time.Hour,
			Heartbeat: 10 * time.Millisecond, NodeTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		wantReleasedAndSentOnce(t, db, rc, list, &logs)
		if !store.failed.Load() {
			t.Fatal("no claim failed")
		}
	})
}

// TestDispatcherSpacesKickedClaims: kicks coming faster than claimGap (a
// transfer paying an order every millisecond) wake a claim at most once a
// gap, so that one claim takes what several enqueued (docs/benchmarks.md,
// "PostgreSQL: claims at most every 10 ms"). The gap is a lower bound kept by
// a timer, so the check cannot fail on a slow machine.
func TestDispatcherSpacesKickedClaims(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		store := &claimTimes{DB: dbtest.OpenStore(t, engine)}
		d := &delivery.Dispatcher{Store: store, Client: loopback(), Poll: time.Hour}
		stop := start(t, d)
		for range 200 {
			d.Kick()
			time.Sleep(time.Millisecond)
		}
		stop()
		store.mu.Lock()
		defer store.mu.Unlock()
		if len(store.starts) < 3 {
			t.Fatalf("%d claims for 200 kicks", len(store.starts))
		}
		for i := 1; i < len(store.starts); i++ {
			// A claim's start is noted a moment after the dispatcher took
			// its time, hence the millisecond's slack.
			if gap := store.starts[i].Sub(store.starts[i-1]); gap < delivery.ClaimGap-time.Millisecond {
				t.Errorf("claims %d and %d started %v apart, want at least %v", i-1, i, gap, delivery.ClaimGap)
			}
		}
	})
}
