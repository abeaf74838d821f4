package sqlstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// healthFixture is a company whose IPN target answers a real receiver that
// fails (ipn) and whose hub webhook answers one that accepts (hook), a
// store on a settable clock, and a dispatcher (one worker: the order of
// sends is the claim's) sending on that clock.
type healthFixture struct {
	db        *sqlstore.DB
	clock     *testkit.Clock
	company   *recon.Company
	ipn, hook *testkit.Receiver
	webhook   *recon.HubWebhook
	disp      *delivery.Dispatcher
}

// openClocked opens the database at url on clock, migrated when migrate,
// with the test key (dbtest.OpenURL's).
func openClocked(t *testing.T, url string, clock recon.Clock, migrate bool) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), url, sqlstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if migrate {
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	src := sqlstore.KeySource{File: db.DefaultKeyFile()}
	if src.File == "" {
		src = sqlstore.KeySource{Keys: dbtest.TestSecretKey}
	}
	if err := db.UseSecretKey(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	return db
}

var healthT0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func newHealthFixture(t *testing.T, engine string) *healthFixture {
	f := &healthFixture{clock: testkit.NewClock(healthT0)}
	db := openClocked(t, dbtest.NewURL(t, engine), f.clock, true)
	f.db = db
	var err error
	ctx := t.Context()
	f.company = &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive}
	if err := db.CreateCompany(ctx, f.company); err != nil {
		t.Fatal(err)
	}
	f.ipn, f.hook = testkit.NewReceiver(t), testkit.NewReceiver(t)
	f.ipn.Answer(func(int) int { return http.StatusInternalServerError })
	if err := db.SetIPN(ctx, f.company.Tenant(), &recon.Target{URL: f.ipn.URL + "/ipn?token=abc", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	url, none := f.hook.URL+"/hook", recon.AuthNone
	if f.webhook, _, err = db.ChangeHubWebhook(ctx, f.company.Tenant(), recon.HubWebhookChange{URL: &url, AuthType: &none}); err != nil {
		t.Fatal(err)
	}
	f.disp = &delivery.Dispatcher{Store: db, Client: delivery.NewClient(delivery.ClientOptions{AllowPrivate: true}), Clock: f.clock,
		// MaxAge 1 ns: a failed delivery is due again 1 ns after it was made,
		// so retried once when the test moves the clock, then dead.
		Schedule: delivery.Schedule{MaxAge: time.Nanosecond}, Workers: 1, Poll: 5 * time.Millisecond, NodeID: "node-" + engine}
	db.OnEnqueue(f.disp.Kick)
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- f.disp.Run(run) }()
	t.Cleanup(func() { stop(); <-done })
	return f
}

func (f *healthFixture) enqueueIPN(t *testing.T, n int) *recon.Delivery {
	t.Helper()
	d := &recon.Delivery{CompanyID: f.company.ID, Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid,
		Payload: []byte(`{"n":` + string(rune('0'+n)) + `}`)}
	if err := f.db.EnqueueDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// settled waits for the delivery to leave the attempt in flight: its
// attempt count reaches n.
func (f *healthFixture) attempted(t *testing.T, id int64, n int) *recon.Delivery {
	t.Helper()
	var d *recon.Delivery
	testkit.WaitFor(t, "the attempt of a delivery", 10*time.Second, func() bool {
		var err error
		d, err = f.db.Delivery(t.Context(), recon.TenantID{}, id)
		return err == nil && d.Attempts >= n && d.ClaimedBy == ""
	})
	return d
}

// dead waits for the delivery to be dead (its retry made) and unclaimed.
func (f *healthFixture) dead(t *testing.T, id int64) {
	t.Helper()
	testkit.WaitFor(t, "a delivery dead", 10*time.Second, func() bool {
		d, err := f.db.Delivery(t.Context(), recon.TenantID{}, id)
		return err == nil && d.Status == recon.DeliveryDead && d.ClaimedBy == ""
	})
}

func (f *healthFixture) health(t *testing.T) *recon.TargetHealth {
	t.Helper()
	h, err := f.db.TargetHealth(t.Context(), f.company.Tenant(), recon.DeliveryIPN)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEndpointHealth: an IPN target whose receiver always fails is
// disabled exactly when its first failure since the last success is 72 h
// old (a success at 71 h resets the streak), once; the audit log records it
// with Recon as the actor, the hub webhook receives ENDPOINT_DISABLED signed,
// the IPN target's notifications are held without an attempt while it is
// disabled, the replay is refused until it is re-enabled, and re-enabling
// with the replay sends what it missed, in order.
func TestEndpointHealth(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newHealthFixture(t, engine)
		ctx := t.Context()
		tenant := f.company.Tenant()

		d1 := f.enqueueIPN(t, 1)
		f.attempted(t, d1.ID, 1)
		if h := f.health(t); !h.FailingSince.Equal(healthT0) || !h.Active {
			t.Fatalf("after the first failure: %+v", h)
		}

		// 71 h on, a success resets the streak.
		f.clock.Advance(71 * time.Hour)
		f.dead(t, d1.ID) // retried, failing, at 71 h
		if got, err := f.db.DisableFailingTargets(ctx, f.clock.Now()); err != nil || len(got) != 0 {
			t.Fatalf("at 71 h: %v, %v", got, err)
		}
		f.ipn.Answer(nil)
		d2 := f.enqueueIPN(t, 2)
		if d := f.attempted(t, d2.ID, 1); d.Status != recon.DeliveryDelivered {
			t.Fatalf("d2: %+v", d)
		}
		if h := f.health(t); !h.FailingSince.IsZero() {
			t.Fatalf("a success leaves the streak at %v", h.FailingSince)
		}

		// From t1 every attempt fails: not disabled a second before 72 h, then disabled.
		f.ipn.Answer(func(int) int { return http.StatusBadGateway })
		f.clock.Advance(time.Minute)
		t1 := f.clock.Now()
		d3 := f.enqueueIPN(t, 3)
		f.attempted(t, d3.ID, 1)
		if h := f.health(t); !h.FailingSince.Equal(t1) {
			t.Fatalf("streak from %v, want %v", h.FailingSince, t1)
		}
		f.clock.Set(t1.Add(72*time.Hour - time.Second))
		f.dead(t, d3.ID)
		if got, err := f.db.DisableFailingTargets(ctx, f.clock.Now()); err != nil || len(got) != 0 {
			t.Fatalf("a second before 72 h: %v, %v", got, err)
		}
		f.clock.Set(t1.Add(72 * time.Hour))
		sentBefore := len(f.ipn.Got())
		got, err := f.db.DisableFailingTargets(ctx, f.clock.Now())
		if err != nil || len(got) != 1 || got[0].Kind != recon.DeliveryIPN || got[0].Tenant != tenant {
			t.Fatalf("at 72 h: %v, %v", got, err)
		}
		if again, err := f.db.DisableFailingTargets(ctx, f.clock.Now()); err != nil || len(again) != 0 {
			t.Fatalf("run again: %v, %v", again, err)
		}
		h := f.health(t)
		if h.Active || h.DisabledBy != recon.DisabledByRecon || !h.DisabledAt.Equal(f.clock.Now()) || h.Held != 1 ||
			h.DisabledWhy == "" {
			t.Fatalf("disabled target: %+v", h)
		}
		// The audit log, Recon the actor.
		entries, _, err := f.db.AuditEntries(ctx, tenant, recon.AuditFilter{Action: recon.AuditTargetDisabled, Page: 1, PerPage: 50})
		if err != nil || len(entries) != 1 || entries[0].Actor.Via != recon.AuditViaRecon || entries[0].Actor.UserID != 0 {
			t.Fatalf("audit: %+v, %v", entries, err)
		}
		// ENDPOINT_DISABLED to the hub webhook, signed with its secret.
		var note testkit.Received
		testkit.WaitFor(t, "ENDPOINT_DISABLED at the webhook", 10*time.Second, func() bool {
			for _, r := range f.hook.Got() {
				if r.Header.Get("X-Recon-Event") == recon.EndpointDisabled {
					note = r
					return true
				}
			}
			return false
		})
		if err := delivery.Verify(f.webhook.SigningSecret, note.Header.Get("X-Recon-Timestamp"), note.Header.Get("X-Recon-Signature"),
			note.Body, f.clock.Now(), 5*time.Minute); err != nil {
			t.Fatalf("signature: %v", err)
		}
		var body struct {
			Event    string                        `json:"event"`
			Metadata map[string]recon.EndpointInfo `json:"metadata"`
		}
		if err := json.Unmarshal(note.Body, &body); err != nil {
			t.Fatal(err)
		}
		ep := body.Metadata["endpoint"]
		if body.Event != recon.EndpointDisabled || ep.Kind != recon.DeliveryIPN || ep.URL != recon.TargetHost(f.ipn.URL) ||
			ep.Since != t1.Format(time.RFC3339) || ep.LastError == "" {
			t.Fatalf("ENDPOINT_DISABLED body: %s", note.Body)
		}

		// While disabled: a new notification is enqueued (notifyAt) but held, not attempted.
		d4 := f.enqueueIPN(t, 4)
		if d := f.attempted(t, d4.ID, 1); d.Status != recon.DeliveryDead || d.LastError != recon.HeldError {
			t.Fatalf("d4 while disabled: %+v", d)
		}
		if n := len(f.ipn.Got()); n != sentBefore {
			t.Fatalf("the receiver got %d requests while disabled (had %d)", n, sentBefore)
		}
		if _, err := f.db.ReplayMissed(ctx, tenant, recon.DeliveryIPN, f.clock.Now()); recon.ErrorCode(err) != recon.ECONFLICT {
			t.Fatalf("replay while disabled: %v", err)
		}

		// Failure paths: another company's tenant, the other mode, a bad kind.
		other := &recon.Company{FullName: "Other", ShortName: "other", Status: recon.CompanyActive}
		if err := f.db.CreateCompany(ctx, other); err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.EnableTarget(ctx, other.Tenant(), recon.DeliveryIPN, true, f.clock.Now()); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("another company's: %v", err)
		}
		if _, err := f.db.ReplayMissed(ctx, other.Tenant(), recon.DeliveryIPN, f.clock.Now()); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("another company's replay: %v", err)
		}
		if _, err := f.db.EnableTarget(ctx, tenant, "sms", false, f.clock.Now()); recon.ErrorCode(err) != recon.EINVALID {
			t.Fatalf("bad kind: %v", err)
		}
		if h := f.health(t); h.Active {
			t.Fatal("a failed re-enable enabled it")
		}

		// Re-enable and replay: what it missed goes, in its order.
		f.ipn.Answer(nil)
		n, err := f.db.EnableTarget(ctx, tenant, recon.DeliveryIPN, true, f.clock.Now())
		if err != nil || n != 2 {
			t.Fatalf("re-enable and replay: %d, %v", n, err)
		}
		testkit.WaitFor(t, "the replayed notifications", 10*time.Second, func() bool {
			return f.ipn.Seen(itoa(d3.ID)) == 1 && f.ipn.Seen(itoa(d4.ID)) == 1
		})
		var order []string
		for _, r := range f.ipn.Got()[sentBefore:] {
			order = append(order, r.Header.Get("X-Recon-Delivery"))
		}
		if !slices.Equal(order, []string{itoa(d3.ID), itoa(d4.ID)}) {
			t.Fatalf("replayed in the order %v", order)
		}
		if h := f.health(t); !h.Active || h.DisabledBy != "" || !h.DisabledAt.IsZero() || h.Held != 0 {
			t.Fatalf("re-enabled: %+v", h)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestEndpointHealthTwoNodes: two nodes running the step at once on one
// PostgreSQL disable the target once, notify once and audit once.
func TestEndpointHealthTwoNodes(t *testing.T) {
	url := dbtest.NewURL(t, sqlstore.EnginePostgres)
	clock := testkit.NewClock(healthT0)
	var nodes [2]*sqlstore.DB
	for i := range nodes {
		nodes[i] = openClocked(t, url, clock, i == 0)
	}
	db, ctx := nodes[0], t.Context()
	c := &recon.Company{FullName: "Sao Mai", ShortName: "saomai", Status: recon.CompanyActive}
	if err := db.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := db.SetIPN(ctx, c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
		t.Fatal(err)
	}
	hook, none := "https://shop.example.vn/hook", recon.AuthNone
	if _, _, err := db.ChangeHubWebhook(ctx, c.Tenant(), recon.HubWebhookChange{URL: &hook, AuthType: &none}); err != nil {
		t.Fatal(err)
	}
	d := &recon.Delivery{CompanyID: c.ID, Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{}`)}
	if err := db.EnqueueDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	err := db.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, At: healthT0,
		URL: "https://shop.example.vn/ipn", StatusCode: 500, Error: "500 Internal Server Error"}, Status: recon.DeliveryPending, Next: healthT0.Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	now := healthT0.Add(recon.EndpointDisableAfter)
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var disabled int
	var errs []error
	for _, node := range nodes {
		wg.Go(func() {
			<-start
			got, err := node.DisableFailingTargets(ctx, now)
			mu.Lock()
			defer mu.Unlock()
			disabled += len(got)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if disabled != 1 || len(errs) != 0 {
		t.Fatalf("disabled %d times, errors %v", disabled, errs)
	}
	notes, err := db.Deliveries(ctx, c.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryWebhook})
	if err != nil || len(notes) != 1 || notes[0].Event != recon.EndpointDisabled {
		t.Fatalf("ENDPOINT_DISABLED: %+v, %v", notes, err)
	}
	entries, _, err := db.AuditEntries(ctx, c.Tenant(), recon.AuditFilter{Action: recon.AuditTargetDisabled, Page: 1, PerPage: 50})
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit: %+v, %v", entries, err)
	}
}
