package delivery_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/ipn"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// rotationRun is what a receiver got from the dispatcher around a rotation
// of the IPN signing secret (docs/design.md, D7, "Standard Webhooks."):
// before it (the first attempt failed, so it came twice), during the day
// both secrets sign, and after that day.
type rotationRun struct {
	oldSecret, newSecret  string
	before, during, after []received
}

// runRotation delivers three IPNs to a loopback receiver on the engine,
// the store and the dispatcher on one injected clock: one under the first
// signing secret (answered 500 once, then retried a minute later), one
// after the rotation (ipn.Service, rotate_signing_secret), and one after
// the clock moved past recon.SigningOverlap. The clock starts at the
// present, so that the first two are within the libraries' timestamp
// tolerance.
func runRotation(t *testing.T, engine string) *rotationRun {
	t.Helper()
	clock := testkit.NewClock(time.Now().Truncate(time.Second))
	db := dbtest.OpenURL(t, dbtest.NewMigratedURL(t, engine), sqlstore.WithClock(clock))
	rc := newReceiver(t, nil)
	refuse := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, call int) {
		if call == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	c := newCompany(t, db, 1)
	svc := &ipn.Service{Store: db}
	save := func(url string, rotate bool) *recon.Target {
		t.Helper()
		saved, err := svc.Save(t.Context(), recon.LiveTenant(c), ipn.Change{URL: url, AuthType: recon.AuthNone, Active: true, RotateSigningSecret: rotate})
		if err != nil {
			t.Fatal(err)
		}
		return saved.Target
	}
	deliver := func(rc *receiver, attempts int) []received {
		t.Helper()
		d := enqueue(t, db, c, 1)[0]
		stop := start(t, &delivery.Dispatcher{Store: db, Client: loopback(), Clock: clock, Poll: 10 * time.Millisecond})
		defer stop()
		for n := 1; n < attempts; n++ {
			testkit.WaitFor(t, "a failed attempt to be recorded", 30*time.Second, func() bool { return status(t, db, d.ID).Attempts == n })
			clock.Advance(time.Minute) // the retry is due
		}
		testkit.WaitFor(t, "the delivery to be delivered", 30*time.Second, func() bool { return status(t, db, d.ID).Status == recon.DeliveryDelivered })
		return rc.calls(d.ID)
	}
	run := &rotationRun{}
	run.oldSecret = save(refuse.URL+"/ipn", false).SigningSecret
	run.before = deliver(refuse, 2)
	rotated := save(rc.URL+"/ipn", true)
	run.newSecret = rotated.SigningSecret
	if rotated.PreviousSigningSecret != run.oldSecret || run.newSecret == run.oldSecret {
		t.Fatalf("rotated: %+v; want the previous secret %q kept", rotated, run.oldSecret)
	}
	run.during = deliver(rc, 1)
	clock.Advance(recon.SigningOverlap)
	run.after = deliver(rc, 1)
	if len(run.before) != 2 || len(run.during) != 1 || len(run.after) != 1 {
		t.Fatalf("the receivers got %d, %d, %d requests; want 2, 1, 1", len(run.before), len(run.during), len(run.after))
	}
	return run
}

// webhook returns the Standard Webhooks library's verifier of a signing
// secret in the whsec_ form the merchant is shown.
func webhook(t *testing.T, secret string) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(recon.WhsecSecret(secret))
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

// TestStandardWebhooksLibraryVerifiesDeliveries: real deliveries, verified
// by the unmodified Standard Webhooks Go library, before, during and after
// a signing-secret rotation; X-Recon-Signature signs the same way.
func TestStandardWebhooksLibraryVerifiesDeliveries(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		run := runRotation(t, engine)
		old, cur := webhook(t, run.oldSecret), webhook(t, run.newSecret)
		checkHeaders := func(what string, r received) {
			t.Helper()
			h := r.header
			if h.Get("webhook-id") != "msg_"+h.Get(delivery.HeaderDelivery) || h.Get("webhook-timestamp") != h.Get(delivery.HeaderTimestamp) {
				t.Fatalf("%s: webhook-id %q, webhook-timestamp %q; X-Recon-Delivery %q, X-Recon-Timestamp %q", what,
					h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get(delivery.HeaderDelivery), h.Get(delivery.HeaderTimestamp))
			}
		}
		// Before: the first secret verifies, with the timestamp tolerance;
		// the retry carries the same webhook-id, a later timestamp.
		for i, r := range run.before {
			checkHeaders("before", r)
			if err := old.Verify(r.body, r.header); err != nil {
				t.Fatalf("before, attempt %d: %v", i+1, err)
			}
			if n := len(strings.Split(r.header.Get("webhook-signature"), " ")); n != 1 {
				t.Fatalf("before: %d signatures, want 1", n)
			}
		}
		if a, b := run.before[0].header, run.before[1].header; a.Get("webhook-id") != b.Get("webhook-id") || a.Get("webhook-timestamp") == b.Get("webhook-timestamp") {
			t.Fatalf("retry: webhook-id %q then %q, timestamps %q then %q; want the id kept, a new timestamp",
				a.Get("webhook-id"), b.Get("webhook-id"), a.Get("webhook-timestamp"), b.Get("webhook-timestamp"))
		}
		// During the day: a receiver with only the old secret and one with
		// only the new both verify, in both header families.
		r := run.during[0]
		checkHeaders("during", r)
		for name, wh := range map[string]*standardwebhooks.Webhook{"old": old, "new": cur} {
			if err := wh.Verify(r.body, r.header); err != nil {
				t.Fatalf("during, the %s secret: %v", name, err)
			}
		}
		for _, secret := range []string{run.oldSecret, run.newSecret} {
			if err := delivery.Verify(secret, r.header.Get(delivery.HeaderTimestamp), r.header.Get(delivery.HeaderSignature), r.body, time.Now(), time.Minute); err != nil {
				t.Fatalf("during, X-Recon-Signature: %v", err)
			}
		}
		if n, m := len(strings.Split(r.header.Get("webhook-signature"), " ")), len(strings.Split(r.header.Get(delivery.HeaderSignature), ",")); n != 2 || m != 2 {
			t.Fatalf("during: %d and %d signatures, want 2 of each", n, m)
		}
		// After: only the new one. The injected clock is a day ahead of
		// the library's, so its timestamp check is left out here.
		r = run.after[0]
		checkHeaders("after", r)
		if err := cur.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
			t.Fatalf("after, the new secret: %v", err)
		}
		if err := old.VerifyIgnoringTimestamp(r.body, r.header); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Fatalf("after, the old secret: %v; want no matching signature", err)
		}
		ts, _ := strconv.ParseInt(r.header.Get(delivery.HeaderTimestamp), 10, 64)
		if err := delivery.Verify(run.oldSecret, r.header.Get(delivery.HeaderTimestamp), r.header.Get(delivery.HeaderSignature), r.body, time.Unix(ts, 0), time.Minute); err == nil {
			t.Fatal("after: X-Recon-Signature still verifies under the old secret")
		}
		if n := len(strings.Split(r.header.Get("webhook-signature"), " ")); n != 1 {
			t.Fatalf("after: %d signatures, want 1", n)
		}
	})
}
