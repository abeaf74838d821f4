package client

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"testing"
)

// headerScripted is scripted that also records each request's
// X-Idempotency-Key.
type headerScripted struct {
	scripted
	mu   sync.Mutex
	keys []string
}

func (s *headerScripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.keys = append(s.keys, r.Header.Get("X-Idempotency-Key"))
	s.mu.Unlock()
	s.scripted.ServeHTTP(w, r)
}

const v2Created = `{"status":"success","data":{"id":"x"},"meta":{}}`

// TestV2Idempotency checks WithIdempotencyKey: the header is sent on every
// attempt; with a key a POST is retried on 5xx and on 409
// idempotency_key_in_use, without one it is not; Replayed reports the
// server's Idempotent-Replayed.
func TestV2Idempotency(t *testing.T) {
	inUse := answer{409, nil, `{"status":"error","error_code":"idempotency_key_in_use","message":"still running"}`}
	for _, tc := range []struct {
		name     string
		answers  []answer
		opts     func(replayed *bool) []V2CallOption
		requests int
		wantErr  string
		replayed bool
	}{
		{"5xx with a key: retried", []answer{{503, nil, ``}, {201, nil, v2Created}},
			func(*bool) []V2CallOption { return []V2CallOption{WithIdempotencyKey("k1")} }, 2, "", false},
		{"in use with a key: retried, then replayed", []answer{inUse, {201, map[string]string{"Idempotent-Replayed": "true"}, v2Created}},
			func(r *bool) []V2CallOption { return []V2CallOption{WithIdempotencyKey("k1"), Replayed(r)} }, 2, "", true},
		{"5xx without a key: not retried", []answer{{503, nil, ``}, {201, nil, v2Created}},
			func(*bool) []V2CallOption { return nil }, 1, CodeUnavailable, false},
		{"reused: not retried", []answer{{409, nil, `{"status":"error","error_code":"idempotency_key_reused","message":"another body"}`}},
			func(*bool) []V2CallOption { return []V2CallOption{WithIdempotencyKey("k1")} }, 1, CodeIdempotencyKeyReused, false},
		{"required", []answer{{422, nil, `{"status":"error","error_code":"idempotency_key_required","message":"send one","errors":{"X-Idempotency-Key":["required"]}}`}},
			func(*bool) []V2CallOption { return nil }, 1, CodeIdempotencyKeyRequired, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &headerScripted{scripted: scripted{answers: tc.answers}}
			c, _ := newTestClient(t, s)
			var replayed bool
			var out struct {
				ID string `json:"id"`
			}
			_, err := c.V2().call(context.Background(), "POST", "/v2/test", nil, map[string]int{"amount": 1}, &out, tc.opts(&replayed)...)
			var e *Error
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err %v", err)
			case tc.wantErr != "" && (!errors.As(err, &e) || e.Code != tc.wantErr):
				t.Fatalf("err %v, want code %s", err, tc.wantErr)
			case tc.wantErr == "" && out.ID != "x":
				t.Errorf("data %+v", out)
			}
			if int(s.n.Load()) != tc.requests || replayed != tc.replayed {
				t.Errorf("%d requests (replayed %v), want %d (%v)", s.n.Load(), replayed, tc.requests, tc.replayed)
			}
			for _, k := range s.keys {
				if want := map[bool]string{true: "k1", false: ""}[len(tc.opts(new(bool))) > 0]; k != want {
					t.Errorf("X-Idempotency-Key %q, want %q", k, want)
				}
			}
		})
	}
	if k := NewIdempotencyKey(); len(k) != 32 || k == NewIdempotencyKey() {
		t.Errorf("NewIdempotencyKey: %q", k)
	}
}

// TestV2Errors checks that a v2 error body becomes an *Error with its
// error_code, message and fields.
func TestV2Errors(t *testing.T) {
	s := &scripted{answers: []answer{{422, nil, `{"status":"error","error_code":"amount_exceeds_refundable","message":"too much","errors":{"amount":["too much"]}}`}}}
	c, _ := newTestClient(t, s)
	_, err := c.V2().call(context.Background(), "GET", "/v2/x", nil, nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 422 || e.Code != "amount_exceeds_refundable" || e.Message != "too much" ||
		!reflect.DeepEqual(e.Fields, map[string][]string{"amount": {"too much"}}) {
		t.Fatalf("%#v", err)
	}
}

// TestV2Pages checks the list iterator over a v2 list's pages and meta.
func TestV2Pages(t *testing.T) {
	s := &scripted{answers: []answer{
		{200, nil, `{"status":"success","data":[1,2],"meta":{"page":1,"per_page":2,"total":3}}`},
		{200, nil, `{"status":"success","data":[3],"meta":{"page":2,"per_page":2,"total":3}}`},
	}}
	c, _ := newTestClient(t, s)
	var got []int
	for n, err := range v2Pages(context.Background(), func(ctx context.Context, page int) ([]int, V2PageMeta, error) {
		var items []int
		meta, err := c.V2().call(ctx, "GET", "/v2/x", nil, nil, &items)
		return items, meta, err
	}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if !reflect.DeepEqual(got, []int{1, 2, 3}) || s.n.Load() != 2 {
		t.Errorf("%v in %d requests", got, s.n.Load())
	}
}

// TestV2Sync checks the sync iterator: pages until has_more is false, each
// cursor sent as the previous page gave it.
func TestV2Sync(t *testing.T) {
	var mu sync.Mutex
	var cursors []string
	pages := []string{
		`{"status":"success","data":{"added":[{"id":1,"amount_in":5,"code":"DH1"}],"modified":[],"removed":[],"next_cursor":"c1","has_more":true},"meta":{}}`,
		`{"status":"success","data":{"added":[],"modified":[{"id":1,"match_outcome":"matched","order_id":9}],"removed":[4],"next_cursor":"c2","has_more":false},"meta":{}}`,
	}
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cursors = append(cursors, r.URL.Query().Get("cursor"))
		n := len(cursors)
		mu.Unlock()
		w.Write([]byte(pages[n-1]))
	}))
	var got []*V2SyncPage
	for p, err := range c.V2().Sync(context.Background(), "c0") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if len(got) != 2 || !reflect.DeepEqual(cursors, []string{"c0", "c1"}) || got[0].Added[0].ID != 1 || *got[0].Added[0].Code != "DH1" ||
		*got[1].Modified[0].MatchOutcome != "matched" || *got[1].Modified[0].OrderID != 9 || got[1].Removed[0] != 4 || got[1].NextCursor != "c2" {
		t.Errorf("pages %+v, cursors %v", got, cursors)
	}
}
