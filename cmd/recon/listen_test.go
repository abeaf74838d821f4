package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/recon-vn/recon/client"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// testModeOf sets up the test mode of live's company: test merchant
// credentials, a test bank account with the live one's number and a test
// bank-feed token.
func testModeOf(t testing.TB, live *merchantSetup) *merchantSetup {
	t.Helper()
	m := &merchantSetup{base: live.base, dbURL: live.dbURL, company: live.company}
	creds := cliJSON(t, m.dbURL, "merchant", "credentials", "--company", m.company, "--test")
	m.merchantID, m.secret = creds["merchant_id"].(string), creds["secret_key"].(string)
	if !strings.HasPrefix(m.merchantID, "TEST-") || !strings.HasPrefix(m.secret, "test_") {
		t.Fatalf("test merchant credentials %v: want TEST- and test_ prefixes", creds)
	}
	m.account = fmt.Sprint(cliJSON(t, m.dbURL, "bank-account", "create", "--company", m.company, "--test",
		"--bank", "Vietcombank", "--number", "0071000123456", "--holder", "CONG TY TNHH SAO MAI")["id"])
	client := cliJSON(t, m.dbURL, "client", "create", "--company", m.company, "--test", "--name", "feed (test)", "--scopes", "transaction:write")
	if id := client["client_id"].(string); !strings.HasPrefix(id, "test_") || client["livemode"] != false {
		t.Fatalf("test client %v", client)
	}
	m.feedToken = cliJSON(t, m.dbURL, "token", "issue", "--client", client["client_id"].(string), "--user", "", "--scopes", "transaction:write", "--ttl", "24h")["access_token"].(string)
	return m
}

// startListener runs `recon listen` in process until the test ends or stop
// is called, and returns its output and the signing secret it printed.
func startListener(t *testing.T, m *merchantSetup, forwardTo string, extra ...string) (out *testkit.Buffer, secret string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &testkit.Buffer{}
	done := make(chan error, 1)
	getenv := func(k string) string { return testEnv(m.dbURL, k) }
	go func() {
		done <- run(ctx, append([]string{"listen", "--server", m.base, "--merchant-id", m.merchantID, "--merchant-secret", m.secret,
			"--forward-to", forwardTo}, extra...), getenv, strings.NewReader(""), out, out)
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("recon listen: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	re := regexp.MustCompile(`Signing secret: (\S+)`)
	testkit.WaitFor(t, "the listener to be ready", 20*time.Second, func() bool { return re.MatchString(out.String()) })
	return out, re.FindStringSubmatch(out.String())[1], stop
}

// TestListen runs `recon listen` against a real server on both engines: test
// notifications reach the local URL with the headers a target gets (valid
// signatures), each exactly once, and are recorded as attempts; live ones
// never do; a listener that stops and comes back misses nothing; two
// listeners each get every notification; a live credential is refused.
func TestListen(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		liveRC, local, local2 := testkit.NewReceiver(t), testkit.NewReceiver(t), testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		live := setupMerchant(t, base, dbURL, liveRC.URL+"/ipn")
		test := testModeOf(t, live)

		// A live credential may not listen.
		out, err := cli(t, dbURL, "listen", "--server", base, "--merchant-id", live.merchantID, "--merchant-secret", live.secret, "--forward-to", local.URL)
		if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "test mode only") {
			t.Fatalf("listen with live credentials: %q, %v", out, err)
		}

		lout, secret, stop := startListener(t, test, local.URL+"/hook")
		paid := func(rc *testkit.Receiver) map[string]int { // invoice → ORDER_PAID received
			got := map[string]int{}
			for _, n := range rc.IPNs("ORDER_PAID") {
				got[n["order"].(map[string]any)["order_invoice_number"].(string)]++
			}
			return got
		}
		test.pay(t, test.checkout(t, "T-1", 100000), 100000)
		live.pay(t, live.checkout(t, "INV-1", 200000), 200000)
		testkit.WaitFor(t, "T-1 at the listener", 20*time.Second, func() bool { return paid(local)["T-1"] == 1 })
		testkit.WaitFor(t, "INV-1 at the live URL", 20*time.Second, func() bool { return paid(liveRC)["INV-1"] == 1 })

		// What the listener forwarded carries a target's headers, signed
		// under the secret it printed.
		g := local.Got()[0]
		if err := delivery.Verify(secret, g.Header.Get(delivery.HeaderTimestamp), g.Header.Get(delivery.HeaderSignature), g.Body, time.Now(), 5*time.Minute); err != nil {
			t.Fatalf("forwarded signature: %v (headers %v)", err, g.Header)
		}
		if g.Header.Get(delivery.HeaderEvent) != "ORDER_PAID" || g.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("forwarded headers %v", g.Header)
		}
		// And the Standard Webhooks headers, under the whsec_ form it printed.
		whsec := regexp.MustCompile(`Signing secret, whsec form: (\S+)`).FindStringSubmatch(lout.String())
		if len(whsec) != 2 || whsec[1] != recon.WhsecSecret(secret) {
			t.Fatalf("recon listen printed no whsec_ form of %q:\n%s", secret, lout.String())
		}
		if err := client.VerifyStandardWebhook(whsec[1], g.Header.Get("webhook-id"), g.Header.Get("webhook-timestamp"), g.Header.Get("webhook-signature"),
			g.Body, time.Now(), 5*time.Minute); err != nil {
			t.Fatalf("forwarded webhook-signature: %v (headers %v)", err, g.Header)
		}
		// The listener prints its line once the forward has been answered,
		// which may come after the local URL received it.
		id := g.Header.Get(delivery.HeaderDelivery)
		testkit.WaitFor(t, "the listener to name delivery "+id, 20*time.Second, func() bool {
			return strings.Contains(lout.String(), "ORDER_PAID") && strings.Contains(lout.String(), "delivery "+id)
		})
		// Recorded as an attempt: delivered, with the listener's answer.
		var shown map[string]any
		testkit.WaitFor(t, "the answer to be recorded", 20*time.Second, func() bool {
			shown = cliJSON(t, dbURL, "deliveries", "show", id)
			return shown["status"] == "delivered"
		})
		log := shown["attempt_log"].([]any)
		a := log[len(log)-1].(map[string]any)
		if a["status_code"] != 200.0 || !strings.HasPrefix(a["url"].(string), "listen l_") || !strings.HasSuffix(a["url"].(string), local.URL+"/hook") {
			t.Fatalf("attempt %v", a)
		}

		// Stopped, the listener misses nothing: what happens meanwhile waits.
		stop()
		test.pay(t, test.checkout(t, "T-2", 50000), 50000)
		_, _, _ = startListener(t, test, local.URL+"/hook")
		testkit.WaitFor(t, "T-2 after the restart", 20*time.Second, func() bool { return paid(local)["T-2"] == 1 })

		// A second listener: both get every notification.
		startListener(t, test, local2.URL+"/hook")
		test.pay(t, test.checkout(t, "T-3", 70000), 70000)
		testkit.WaitFor(t, "T-3 at both listeners", 20*time.Second, func() bool { return paid(local)["T-3"] == 1 && paid(local2)["T-3"] == 1 })

		// Exactly once each at a listener; nothing of test mode at the live
		// URL, nothing of live mode at the listeners.
		if got := paid(local); len(got) != 3 || got["T-1"] != 1 || got["T-2"] != 1 || got["T-3"] != 1 {
			t.Fatalf("listener got %v; want T-1, T-2 and T-3 once each", got)
		}
		if got := paid(liveRC); len(got) != 1 || got["INV-1"] != 1 {
			t.Fatalf("live URL got %v; want INV-1 only", got)
		}
		for d, n := range local.Deliveries() {
			if n != 1 {
				t.Errorf("delivery %s reached the listener %d times", d, n)
			}
		}

		// The listen secret is no IPN target: the test mode still has none.
		if status, body := basicCall(t, test, "GET", "/v1/ipn", ""); status != 200 || body["data"] != nil {
			t.Fatalf("test GET /v1/ipn after listening: %d %v; want data null", status, body)
		}

		// Malformed answers are refused with the field named.
		status, body := basicCall(t, test, "POST", "/v1/listen/answers", `{"delivery_id":1,"listener_id":"x","status_code":700}`)
		if status != 400 || !strings.Contains(fmt.Sprint(body), "status_code") {
			t.Fatalf("bad answer: %d %v", status, body)
		}
		status, body = basicCall(t, test, "GET", "/v1/listen?events=NOPE", "")
		if status != 400 || !strings.Contains(fmt.Sprint(body), "NOPE") {
			t.Fatalf("unknown event: %d %v", status, body)
		}
		// A live delivery cannot be answered in test mode.
		liveID := liveRC.Got()[0].Header.Get(delivery.HeaderDelivery)
		status, body = basicCall(t, test, "POST", "/v1/listen/answers", `{"delivery_id":`+liveID+`,"listener_id":"x","status_code":200}`)
		if status != 404 {
			t.Fatalf("answer to live delivery %s: %d %v", liveID, status, body)
		}
	})
}

// basicCall calls a /v1 endpoint with m's Basic credentials and returns the
// status and the decoded body, whatever the status.
func basicCall(t testing.TB, m *merchantSetup, method, path, body string) (int, map[string]any) {
	t.Helper()
	status, raw := testkit.Do(t, method, m.base+path, func(r *http.Request) { r.SetBasicAuth(m.merchantID, m.secret) }, "application/json", body)
	var v map[string]any
	_ = json.Unmarshal(raw, &v)
	return status, v
}

// TestListenFailures: a local URL that never answers within
// --forward-timeout is recorded as a failed attempt and the notification
// stays pending (and comes again to the next listener); wrong credentials
// stop the listener at once with the server's answer.
func TestListenFailures(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		test := testModeOf(t, setupMerchant(t, base, dbURL, testkit.NewReceiver(t).URL+"/ipn"))

		out, err := cli(t, dbURL, "listen", "--server", base, "--merchant-id", test.merchantID, "--merchant-secret", "wrong", "--forward-to", "http://127.0.0.1:1/")
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("listen with a wrong secret: %q, %v", out, err)
		}

		hung := make(chan struct{})
		silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hung:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(silent.Close)
		t.Cleanup(func() { close(hung) })
		lout, _, stop := startListener(t, test, silent.URL+"/hook", "--forward-timeout", "100ms")
		test.pay(t, test.checkout(t, "T-1", 100000), 100000)
		var shown map[string]any
		testkit.WaitFor(t, "the timed-out attempt to be recorded", 20*time.Second, func() bool {
			list, err := cli(t, dbURL, "deliveries", "list", "--company", test.company, "--test", "--json")
			if err != nil || !strings.Contains(list, `"id"`) {
				return false
			}
			var ds []map[string]any
			if json.Unmarshal([]byte(list), &ds) != nil || len(ds) != 1 {
				return false
			}
			shown = cliJSON(t, dbURL, "deliveries", "show", fmt.Sprint(ds[0]["id"]))
			log, _ := shown["attempt_log"].([]any) // absent until the first attempt
			return len(log) == 1
		})
		a := shown["attempt_log"].([]any)[0].(map[string]any)
		if shown["status"] != "pending" || a["status_code"] != 0.0 || !strings.Contains(a["error"].(string), "deadline") {
			t.Fatalf("after a local timeout: %v, attempt %v; want pending with the timeout recorded", shown["status"], a)
		}
		if !strings.Contains(lout.String(), "error:") {
			t.Fatalf("listener output %q shows no error", lout.String())
		}
		// Still pending: the next listener gets it.
		stop()
		ok := testkit.NewReceiver(t)
		startListener(t, test, ok.URL+"/hook")
		testkit.WaitFor(t, "the pending notification at the next listener", 20*time.Second, func() bool { return len(ok.IPNs("ORDER_PAID")) == 1 })
	})
}

// TestListenEndsWhenCredentialsRotate: `recon listen` whose test-mode
// credentials are rotated while it runs is closed by the server at the next
// notification (which it does not get), prints why and exits with an error
// instead of reconnecting (issue 18).
func TestListenEndsWhenCredentialsRotate(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		test := testModeOf(t, setupMerchant(t, base, dbURL, testkit.NewReceiver(t).URL+"/ipn"))
		local := testkit.NewReceiver(t)

		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		out := &testkit.Buffer{}
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"listen", "--server", base, "--merchant-id", test.merchantID, "--merchant-secret", test.secret,
				"--forward-to", local.URL + "/hook"}, func(k string) string { return testEnv(dbURL, k) }, strings.NewReader(""), out, out)
		}()
		testkit.WaitFor(t, "the listener to be ready", 20*time.Second, func() bool { return strings.Contains(out.String(), "Signing secret:") })

		creds := cliJSON(t, dbURL, "merchant", "credentials", "--company", test.company, "--test", "--rotate")
		rotated := *test
		rotated.merchantID, rotated.secret = creds["merchant_id"].(string), creds["secret_key"].(string)
		rotated.pay(t, rotated.checkout(t, "T-1", 100000), 100000)

		err := <-done
		if err == nil || !strings.Contains(err.Error(), "the server closed the stream (unauthorized)") ||
			!strings.Contains(err.Error(), "credentials of this stream were changed or removed") {
			t.Fatalf("recon listen after the rotation: %v, want the server's reason", err)
		}
		if n := len(local.IPNs("ORDER_PAID")); n != 0 {
			t.Fatalf("the listener forwarded %d notifications made after its credentials were rotated", n)
		}
	})
}
