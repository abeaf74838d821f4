package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder collects the waits a client would have slept.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return ctx.Err()
}

// scripted answers the n-th request (0-based) with answers[n] (the last
// one repeats) and counts the requests.
type scripted struct {
	answers []answer
	n       atomic.Int32
	bodies  []string
	mu      sync.Mutex
}

type answer struct {
	status int
	header map[string]string
	body   string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	i := int(s.n.Add(1)) - 1
	a := s.answers[min(i, len(s.answers)-1)]
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func newTestClient(t *testing.T, h http.Handler, opts ...Option) (*Client, *recorder) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rec := &recorder{}
	opts = append([]Option{WithSleep(rec.sleep), WithTokenSource(StaticToken("tok")), WithMerchant("M1", "s3cret")}, opts...)
	c, err := New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

const companyOK = `{"status":"success","data":{"id":7,"short_name":"SAOMAI","role":"Admin","configurations":{"paycode":true,"data_storage_time":"0","payment_code_formats":[]}}}`

func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []answer
		call     func(c *Client) error
		requests int
		wantErr  string // the *Error code, "" for success
		// waits: exact waits when exact, else only their count
		waits []time.Duration
		exact bool
	}{
		{name: "429 with Retry-After, then 200",
			answers:  []answer{{429, map[string]string{"Retry-After": "3"}, `{"status":"error","error":"rate_limited","message":"slow down"}`}, {200, nil, companyOK}},
			call:     func(c *Client) error { _, err := c.Company(context.Background()); return err },
			requests: 2, waits: []time.Duration{3 * time.Second}, exact: true},
		{name: "503 twice, then 200",
			answers:  []answer{{503, nil, `{"status":"error","error":"unavailable","message":"busy"}`}, {503, nil, ``}, {200, nil, companyOK}},
			call:     func(c *Client) error { _, err := c.Company(context.Background()); return err },
			requests: 3, waits: make([]time.Duration, 2)},
		{name: "400 is not retried",
			answers:  []answer{{400, nil, `{"status":"error","error":"validation_error","message":"bad"}`}},
			call:     func(c *Client) error { _, err := c.Company(context.Background()); return err },
			requests: 1, wantErr: CodeValidation},
		{name: "500 forever: bounded attempts",
			answers:  []answer{{500, nil, `{"status":"error","error":"internal_error","message":"An internal error occurred."}`}},
			call:     func(c *Client) error { _, err := c.Company(context.Background()); return err },
			requests: 4, wantErr: CodeInternal, waits: make([]time.Duration, 3)},
		{name: "push is idempotent: retried on 502",
			answers: []answer{{502, nil, `bad gateway`}, {200, nil, `{"status":"success","data":[{"id":1,"code":null,"duplicate":false}]}`}},
			call: func(c *Client) error {
				_, err := c.PushTransactions(context.Background(), []TransactionInput{{BankAccountID: 1}})
				return err
			},
			requests: 2, waits: make([]time.Duration, 1)},
		{name: "void is not retried on 503",
			answers:  []answer{{503, nil, `{"error":{"code":"unavailable","message":"busy"},"message":"busy"}`}},
			call:     func(c *Client) error { _, err := c.VoidOrder(context.Background(), "INV-1"); return err },
			requests: 1, wantErr: CodeUnavailable},
		{name: "cancel is retried on 429 (refused before acting)",
			answers:  []answer{{429, map[string]string{"Retry-After": "1"}, `{"error":{"code":"rate_limited","message":"slow"},"message":"slow"}`}, {200, nil, `{"success":true,"data":{"order_status":"CANCELLED"}}`}},
			call:     func(c *Client) error { _, err := c.CancelOrder(context.Background(), "INV-1"); return err },
			requests: 2, waits: []time.Duration{time.Second}, exact: true},
		{name: "Retry-After beyond MaxDelay is not waited for",
			answers:  []answer{{429, map[string]string{"Retry-After": "3600"}, `{"status":"error","error":"rate_limited","message":"later"}`}},
			call:     func(c *Client) error { _, err := c.Company(context.Background()); return err },
			requests: 1, wantErr: CodeRateLimited},
		{name: "upload with a rewindable body is retried on 503 and sent whole again",
			answers: []answer{{503, map[string]string{"Retry-After": "10"}, `{"status":"error","error":"unavailable","message":"too many uploads"}`},
				{200, nil, `{"status":"success","data":{"format":"csv","imported":2}}`}},
			call: func(c *Client) error {
				_, err := c.UploadStatement(context.Background(), 3, strings.NewReader("a,b\n1,2\n"), StatementOptions{})
				return err
			},
			requests: 2, waits: []time.Duration{10 * time.Second}, exact: true},
		{name: "upload with a one-shot body is sent once",
			answers: []answer{{503, map[string]string{"Retry-After": "10"}, `{"status":"error","error":"unavailable","message":"too many uploads"}`}},
			call: func(c *Client) error {
				_, err := c.UploadStatement(context.Background(), 3, io.MultiReader(strings.NewReader("a,b\n")), StatementOptions{})
				return err
			},
			requests: 1, wantErr: CodeUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{answers: tc.answers}
			c, rec := newTestClient(t, s)
			err := tc.call(c)
			if got := int(s.n.Load()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			var e *Error
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && (!errors.As(err, &e) || e.Code != tc.wantErr):
				t.Fatalf("err = %v, want code %s", err, tc.wantErr)
			}
			if len(rec.waits) != len(tc.waits) {
				t.Fatalf("waits %v, want %d", rec.waits, len(tc.waits))
			}
			for i, w := range rec.waits {
				if tc.exact && w != tc.waits[i] {
					t.Errorf("wait %d = %s, want %s", i, w, tc.waits[i])
				}
				// Backoff: full jitter below BaseDelay·2^i.
				if !tc.exact && (w <= 0 || w > DefaultRetryPolicy.BaseDelay<<i) {
					t.Errorf("wait %d = %s, want (0, %s]", i, w, DefaultRetryPolicy.BaseDelay<<i)
				}
			}
			for i, b := range s.bodies[1:] {
				if b != s.bodies[0] {
					t.Errorf("attempt %d sent %q, the first %q", i+2, b, s.bodies[0])
				}
			}
		})
	}
}

func TestRetryStopsWhenTheContextEnds(t *testing.T) {
	s := &scripted{answers: []answer{{503, nil, `{}`}}}
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := newTestClient(t, s, WithSleep(func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}))
	_, err := c.Company(ctx)
	if !errors.Is(err, context.Canceled) || s.n.Load() != 1 {
		t.Fatalf("err = %v after %d requests", err, s.n.Load())
	}
}

func TestErrorEnvelopes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   Error
	}{
		{"api/v1 with field errors", 400, map[string]string{"X-Request-Id": "req-1"},
			`{"status":"error","error":"validation_error","message":"transactions[0].amount_in must be a non-negative whole number of VND","errors":{"transactions[0].amount_in":["transactions[0].amount_in must be a non-negative whole number of VND"]}}`,
			Error{StatusCode: 400, Code: "validation_error", Message: "transactions[0].amount_in must be a non-negative whole number of VND",
				Fields: map[string][]string{"transactions[0].amount_in": {"transactions[0].amount_in must be a non-negative whole number of VND"}}, RequestID: "req-1"}},
		{"api/v1 rate limited", 429, map[string]string{"Retry-After": "7"},
			`{"status":"error","error":"rate_limited","message":"too many requests"}`,
			Error{StatusCode: 429, Code: "rate_limited", Message: "too many requests", RetryAfter: 7 * time.Second}},
		{"gateway with reason", 400, nil,
			`{"error":{"code":"validation_error","message":"ipn_url points to an internal address","reason":"BLOCKED_ADDRESS"},"message":"ipn_url points to an internal address"}`,
			Error{StatusCode: 400, Code: "validation_error", Message: "ipn_url points to an internal address", Reason: "BLOCKED_ADDRESS"}},
		{"gateway conflict", 409, nil,
			`{"error":{"code":"conflict","message":"order INV-1 is not paid"},"message":"order INV-1 is not paid"}`,
			Error{StatusCode: 409, Code: "conflict", Message: "order INV-1 is not paid"}},
		{"oauth", 400, nil,
			`{"error":"invalid_grant","error_description":"The refresh token has been used."}`,
			Error{StatusCode: 400, Code: "invalid_grant", Message: "The refresh token has been used."}},
		{"company configuration rule", 400, nil,
			`{"status":"success","data":{"status":false,"message":"Format #1: suffix_from must be less than or equal to suffix_to"}}`,
			Error{StatusCode: 400, Code: "validation_error", Message: "Format #1: suffix_from must be less than or equal to suffix_to"}},
		{"hub", 400, nil, `{"code":400,"message":"bad","errors":{"company_xid":"is required"}}`,
			Error{StatusCode: 400, Code: "validation_error", Message: "bad", Fields: map[string][]string{"company_xid": {"is required"}}}},
		{"not JSON", 502, nil, `<html>bad gateway</html>`,
			Error{StatusCode: 502, Code: "internal_error", Message: "<html>bad gateway</html>"}},
		{"empty", 404, nil, ``, Error{StatusCode: 404, Code: "not_found", Message: "Not Found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, &scripted{answers: []answer{{tc.status, tc.header, tc.body}}}, WithRetry(RetryPolicy{MaxAttempts: 1}))
			_, err := c.Company(context.Background())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if !reflect.DeepEqual(*e, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", *e, tc.want)
			}
			if !strings.Contains(e.Error(), tc.want.Message) {
				t.Errorf("Error() = %q lacks the message", e.Error())
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	if got := retryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); got != 90*time.Second {
		t.Fatalf("retryAfter = %s", got)
	}
	for _, v := range []string{"", "soon", "-3"} {
		if got := retryAfter(v, now); got != 0 {
			t.Errorf("retryAfter(%q) = %s", v, got)
		}
	}
}

// pager serves the transaction list over n transactions with ids n..1.
func pager(t *testing.T, n int, insertAfterFirstPage bool) http.Handler {
	var mu sync.Mutex
	ids := make([]int, n)
	for i := range ids {
		ids[i] = n - i
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/api/v1/transactions" || r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("request %s %s", r.URL.Path, r.Header.Get("Authorization"))
		}
		q := r.URL.Query()
		page, limit := 1, 20
		if v := q.Get("page"); v != "" {
			page, _ = strconv.Atoi(v)
		}
		if v := q.Get("limit"); v != "" {
			limit, _ = strconv.Atoi(v)
		}
		if q.Get("from_date") != "2025-01-01" {
			t.Errorf("from_date = %q", q.Get("from_date"))
		}
		var items []string
		for i := (page - 1) * limit; i < min(page*limit, len(ids)); i++ {
			items = append(items, fmt.Sprintf(`{"id":%d,"amount_in":1000,"code":null}`, ids[i]))
		}
		last := max(1, (len(ids)+limit-1)/limit)
		fmt.Fprintf(w, `{"status":"success","data":[%s],"meta":{"pagination":{"total":%d,"per_page":%d,"current_page":%d,"last_page":%d}}}`,
			strings.Join(items, ","), len(ids), limit, page, last)
		if insertAfterFirstPage && page == 1 {
			ids = append([]int{1000}, ids...) // a newer transaction shifts the pages
		}
	})
}

func TestTransactionsIterator(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		insert bool
		want   int
	}{
		{"several pages", 7, false, 7},
		{"exactly one page", 3, false, 3},
		{"empty", 0, false, 0},
		{"a row stored meanwhile is not yielded twice", 7, true, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, pager(t, tc.n, tc.insert))
			var got []int64
			for tx, err := range c.Transactions(context.Background(), TransactionFilter{FromDate: "2025-01-01", Limit: 3}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, tx.ID)
			}
			if len(got) != tc.want {
				t.Fatalf("got %v, want %d transactions", got, tc.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i] >= got[i-1] {
					t.Fatalf("got %v: not newest first or repeated", got)
				}
			}
		})
	}
	t.Run("break stops fetching", func(t *testing.T) {
		var requests atomic.Int32
		h := pager(t, 50, false)
		c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1); h.ServeHTTP(w, r) }))
		for range c.Transactions(context.Background(), TransactionFilter{FromDate: "2025-01-01", Limit: 3}) {
			break
		}
		if requests.Load() != 1 {
			t.Fatalf("%d requests after a break on the first item", requests.Load())
		}
	})
	t.Run("an error ends the iteration", func(t *testing.T) {
		c, _ := newTestClient(t, &scripted{answers: []answer{{403, nil, `{"status":"error","error":"forbidden","message":"no"}`}}})
		n := 0
		for _, err := range c.Transactions(context.Background(), TransactionFilter{}) {
			n++
			if e := (*Error)(nil); !errors.As(err, &e) || e.Code != CodeForbidden {
				t.Fatalf("err = %v", err)
			}
		}
		if n != 1 {
			t.Fatalf("%d iterations", n)
		}
	})
}

// tokenServer is an /oauth/token endpoint that issues numbered tokens and
// rotates refresh tokens: each refresh token works once.
type tokenServer struct {
	mu       sync.Mutex
	issued   int
	valid    map[string]bool // refresh tokens not used yet
	grants   []string
	ttl      int
	requests int
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	w.Header().Set("Content-Type", "application/json")
	id, secret, _ := r.BasicAuth()
	if r.URL.Path != "/oauth/token" || id != "rc_1" || secret != "sec" {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":"invalid_client","error_description":"Client authentication failed."}`)
		return
	}
	grant := r.PostFormValue("grant_type")
	s.grants = append(s.grants, grant)
	s.issued++
	switch grant {
	case "client_credentials":
		fmt.Fprintf(w, `{"access_token":"at%d","token_type":"bearer","expires_in":%d,"scope":%q}`, s.issued, s.ttl, r.PostFormValue("scope"))
	case "refresh_token":
		rt := r.PostFormValue("refresh_token")
		if !s.valid[rt] {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"The refresh token was used already."}`)
			return
		}
		delete(s.valid, rt)
		next := fmt.Sprintf("rt%d", s.issued)
		s.valid[next] = true
		fmt.Fprintf(w, `{"access_token":"at%d","token_type":"bearer","expires_in":%d,"refresh_token":%q}`, s.issued, s.ttl, next)
	}
}

func TestClientCredentialsRefreshBeforeExpiry(t *testing.T) {
	ts := &tokenServer{ttl: 3600, valid: map[string]bool{}}
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c, _ := newTestClient(t, ts, WithClock(clock))
	src := c.ClientCredentials("rc_1", "sec", "transaction:write")
	get := func() string {
		tok, err := src.Token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	// Concurrent callers share one fetch.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { get() })
	}
	wg.Wait()
	if ts.requests != 1 || get() != "at1" {
		t.Fatalf("%d token requests, token %s", ts.requests, get())
	}
	mu.Lock()
	now = now.Add(3600*time.Second - expiryLeeway - time.Second) // still fresh
	mu.Unlock()
	if get() != "at1" {
		t.Fatal("a fresh token was replaced")
	}
	mu.Lock()
	now = now.Add(2 * time.Second) // within the leeway: replaced before it expires
	mu.Unlock()
	if got := get(); got != "at2" {
		t.Fatalf("token %s, want at2", got)
	}
	// A wrong secret is an *Error with the OAuth code.
	_, err := c.ClientCredentials("rc_1", "wrong").Token(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 401 || e.Code != "invalid_client" {
		t.Fatalf("err = %v", err)
	}
}

func TestRefreshTokenRotation(t *testing.T) {
	ts := &tokenServer{ttl: 60, valid: map[string]bool{"rt0": true}}
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var rotated []string
	c, _ := newTestClient(t, ts, WithClock(clock))
	src := c.RefreshTokenSource("rc_1", "sec", &Token{AccessToken: "at0", RefreshToken: "rt0", Expiry: now.Add(time.Hour)},
		func(t *Token) { rotated = append(rotated, t.RefreshToken) })
	tok, err := src.Token(context.Background())
	if err != nil || tok.AccessToken != "at0" || ts.requests != 0 {
		t.Fatalf("fresh token: %v %v, %d requests", tok, err, ts.requests)
	}
	for round := 1; round <= 2; round++ {
		mu.Lock()
		now = now.Add(2 * time.Hour) // expired
		mu.Unlock()
		// Many concurrent callers: one refresh, which rotates the refresh
		// token; a second refresh with the old one would fail (invalid_grant).
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		got := make(chan string, 10)
		for range 10 {
			wg.Go(func() {
				tok, err := src.Token(context.Background())
				if err != nil {
					errs <- err
					return
				}
				got <- tok.AccessToken
			})
		}
		wg.Wait()
		close(errs)
		close(got)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		want := fmt.Sprintf("at%d", round)
		for g := range got {
			if g != want {
				t.Fatalf("round %d: token %s, want %s", round, g, want)
			}
		}
	}
	if want := []string{"rt1", "rt2"}; !reflect.DeepEqual(rotated, want) || !reflect.DeepEqual(ts.grants, []string{"refresh_token", "refresh_token"}) {
		t.Fatalf("rotated %v (want %v), grants %v", rotated, want, ts.grants)
	}
	// The token source authenticates API calls.
	api := http.NewServeMux()
	api.Handle("/oauth/token", ts)
	api.HandleFunc("/api/v1/company", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at2" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, companyOK)
	})
	c2, _ := newTestClient(t, api)
	c2.tokens = src
	if co, err := c2.Company(context.Background()); err != nil || co.ShortName != "SAOMAI" {
		t.Fatalf("company: %v %v", co, err)
	}
}

func TestRefreshIsNotRetriedOn5xx(t *testing.T) {
	s := &scripted{answers: []answer{{503, nil, `{"error":"temporarily_unavailable"}`}}}
	c, _ := newTestClient(t, s)
	_, err := c.RefreshToken(context.Background(), "rc_1", "sec", "rt0")
	var e *Error
	if !errors.As(err, &e) || e.Code != "temporarily_unavailable" || s.n.Load() != 1 {
		t.Fatalf("err = %v after %d requests", err, s.n.Load())
	}
}

func TestPaymentCodeFormatJSON(t *testing.T) {
	s := &scripted{answers: []answer{{200, nil, `{"status":"success","data":{"status":true,"data":{"paycode":true,"data_storage_time":"0","payment_code_formats":[{"prefix":"DH","suffix_from":6,"suffix_to":8,"character_type":"NumberOnly","is_active":true}]}}}`}}}
	c, _ := newTestClient(t, s)
	cfg, err := c.SetPaymentCodeFormats(context.Background(), []PaymentCodeFormat{{"dh", 6, 8, NumberOnly, true}})
	if err != nil || len(cfg.PaymentCodeFormats) != 1 || !cfg.PaymentCodeFormats[0].IsActive {
		t.Fatalf("%+v %v", cfg, err)
	}
	if want := `{"payment_code_formats":[{"prefix":"dh","suffix_from":6,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`; s.bodies[0] != want {
		t.Fatalf("sent %s\nwant %s", s.bodies[0], want)
	}
}

func TestMissingCredentials(t *testing.T) {
	c, err := New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Company(context.Background()); err == nil || !strings.Contains(err.Error(), "token source") {
		t.Errorf("no token source: %v", err)
	}
	if _, err := c.GetOrder(context.Background(), "X"); err == nil || !strings.Contains(err.Error(), "merchant") {
		t.Errorf("no merchant: %v", err)
	}
	if _, err := New("recon.example.vn"); err == nil {
		t.Error("a base URL without a scheme was accepted")
	}
}

func TestUpdateSeller(t *testing.T) {
	s := &scripted{answers: []answer{{200, nil, `{"status":"success","data":{"id":1,"seller":{"legal_name":"Sao Mai","tax_code":"0100112437-001"},"invoicing":{"invoice_template":"1","invoice_series":"C26TAA","auto_invoice":true}}}`}}}
	c, _ := newTestClient(t, s)
	code, auto := "0100112437001", true
	co, err := c.UpdateSeller(context.Background(), SellerUpdate{TaxCode: &code, AutoInvoice: &auto})
	if err != nil || co.Seller.TaxCode != "0100112437-001" || co.Invoicing.InvoiceSeries != "C26TAA" || !co.Invoicing.AutoInvoice {
		t.Fatalf("%+v %v", co, err)
	}
	if want := `{"tax_code":"0100112437001","auto_invoice":true}`; s.bodies[0] != want {
		t.Fatalf("sent %s\nwant %s", s.bodies[0], want)
	}
}
