package hub_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestWebhookOrderedField: POST /v1/webhook takes ordered as a JSON boolean
// and shows it (also in GET); any other type is a 400 naming the field that
// stores nothing; absent or null keeps it.
func TestWebhookOrderedField(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", `{"webhook_url":"https://hooks.example.vn/hub"}`)
		if status != 200 || body["data"].(map[string]any)["ordered"] != false {
			t.Fatalf("create: %d %v", status, body)
		}
		for _, bad := range []string{`"true"`, `1`, `"yes"`, `[]`, `{}`} {
			status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", `{"ordered":`+bad+`,"active":0}`)
			if status != http.StatusBadRequest || body["error"] != "VALIDATION_ERROR" || !strings.Contains(jsonText(body), "ordered must be true or false") {
				t.Fatalf("ordered %s: %d %v", bad, status, body)
			}
		}
		if _, _, body := b.do(t, "GET", "/v1/webhook", "merchant", ""); body["data"].(map[string]any)["active"] != 1.0 {
			t.Fatalf("a refused change stored something: %v", body)
		}
		if status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", `{"ordered":true}`); status != 200 || body["data"].(map[string]any)["ordered"] != true {
			t.Fatalf("ordered true: %d %v", status, body)
		}
		for _, keep := range []string{`{"active":1}`, `{"ordered":null}`} {
			if status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", keep); status != 200 || body["data"].(map[string]any)["ordered"] != true {
				t.Fatalf("%s: %d %v", keep, status, body)
			}
		}
		if _, _, body := b.do(t, "GET", "/v1/webhook", "merchant", ""); body["data"].(map[string]any)["ordered"] != true {
			t.Fatalf("GET: %v", body)
		}
		// The other company's webhook is its own.
		if status, _, body := b.do(t, "GET", "/v1/webhook", "other", ""); status != 200 || body["data"] != nil {
			t.Fatalf("other company: %d %v", status, body)
		}
		if status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", `{"ordered":false}`); status != 200 || body["data"].(map[string]any)["ordered"] != false {
			t.Fatalf("ordered false: %d %v", status, body)
		}
	})
}

// TestOrderedWebhookEndToEnd: a merchant's ordered webhook receives the
// hub events of a link in the order they were enqueued, one at a time, from
// two dispatchers (two nodes) sending at once: the first attempt of
// LINK_SESSION_STATE_CHANGED (FINISHED_BANK_ACCOUNT_LINK) fails, and
// BANK_ACCOUNT_LINKED still arrives after it (an unordered webhook sends it
// while the failed one waits for its retry).
func TestOrderedWebhookEndToEnd(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		type arrival struct {
			id         int64
			event, st  string
			ok         bool
			concurrent bool
		}
		var (
			mu       sync.Mutex
			inFlight int
			arrivals []arrival
			failed   bool
		)
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			var body recon.HubEventBody
			_ = json.Unmarshal(raw, &body)
			id, _ := strconv.ParseInt(r.Header.Get(delivery.HeaderDelivery), 10, 64)
			mu.Lock()
			inFlight++
			a := arrival{id: id, event: body.Event, st: body.Metadata.State, ok: true, concurrent: inFlight > 1}
			if a.st == "FINISHED_BANK_ACCOUNT_LINK" && !failed {
				failed, a.ok = true, false
			}
			arrivals = append(arrivals, a)
			mu.Unlock()
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			if !a.ok {
				http.Error(w, "not now", http.StatusServiceUnavailable)
			}
		}))
		t.Cleanup(rc.Close)

		cxid := linkSetup(t, b, "ordered")
		if status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", `{"ordered":true}`); status != 200 {
			t.Fatalf("ordered: %d %v", status, body)
		}
		// The hub refuses a loopback URL (SSRF rules): the receiver's is
		// set in the store.
		if _, err := b.store.SQL().ExecContext(t.Context(), `UPDATE delivery_targets SET url = $1 WHERE company_id = $2 AND kind = $3`,
			rc.URL+"/hub", b.company.ID, recon.DeliveryWebhook); err != nil {
			t.Fatal(err)
		}
		_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
		linkMB(p)
		p.post("link_otp", "otp", "12345678").want(200, `id="done"`)
		names, _ := b.events(t)
		want := []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_STATE_CHANGED", "LINK_SESSION_STATE_CHANGED",
			"LINK_SESSION_STATE_CHANGED", "BANK_ACCOUNT_LINKED", "LINK_SESSION_COMPLETED"}
		if !slices.Equal(names, want) {
			t.Fatalf("events enqueued: %v", names)
		}

		client := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true})
		schedule := delivery.Schedule{Waits: []time.Duration{20 * time.Millisecond}, MaxAge: time.Hour}
		begin := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		var nodes sync.WaitGroup
		for _, id := range []string{"node-1", "node-2"} {
			d := &delivery.Dispatcher{Store: b.store, Client: client, Schedule: schedule, NodeID: id, Poll: 5 * time.Millisecond}
			nodes.Go(func() {
				<-begin
				if err := d.Run(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		t.Cleanup(func() { cancel(); nodes.Wait() })
		close(begin)
		testkit.WaitFor(t, "every event delivered", 30*time.Second, func() bool {
			list, err := b.store.Deliveries(t.Context(), b.company.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryWebhook, Status: recon.DeliveryDelivered})
			return err == nil && len(list) == len(want)
		})
		cancel()
		nodes.Wait()

		mu.Lock()
		defer mu.Unlock()
		var got []string
		for _, a := range arrivals {
			if a.concurrent {
				t.Errorf("delivery %d (%s) arrived while another was in flight", a.id, a.event)
			}
			if a.ok {
				got = append(got, a.event)
			}
		}
		if !failed || len(arrivals) != len(want)+1 {
			t.Fatalf("arrivals %+v: want the FINISHED state change failed once", arrivals)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("received in order %v, want %v", got, want)
		}
		// The failed attempt came first, then nothing until its retry.
		for i, a := range arrivals {
			if !a.ok && (i+1 >= len(arrivals) || arrivals[i+1].id != a.id) {
				t.Fatalf("after the failed attempt of %d came %+v, want its retry", a.id, arrivals[i+1:])
			}
		}
	})
}
