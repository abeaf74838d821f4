package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// The load generator of `make bench-external` (external_test.go): it drives
// a server over HTTP only, the way a bank feed and an ERP meet it, and knows
// nothing of the server's process. TestLoadGeneratorSmoke runs it at a tiny
// size in the suite, so that it keeps working.

// loadConfig sizes one run of the generator.
type loadConfig struct {
	rows     int           // transactions ingested in 1000-row batches
	accounts int           // bank accounts the batches mix, two at a time
	inFlight int           // batches in flight
	listFor  time.Duration // how long each listing query runs
	clients  int           // closed-loop listing clients
	ipnRate  int           // single-transfer pushes a second
	ipnFor   time.Duration // how long the pushes last
	queries  []string      // names of the listing queries to run (listQueries); none: all
	cpu      *cpuSampler   // who used the CPU during each listing measure; nil: not said
}

// loadTarget is a company ready for the generator: its bank accounts, the
// DH format, and a token that may push and read.
type loadTarget struct {
	base, token string
	company     int64
	accounts    []int64
	numbers     []string
	offset      int // rows of the feed already stored (seedFeed): pushes continue after them
}

// setupLoad makes the generator's company on a running server at base,
// through the admin CLI on its database (an operator's setup, not measured).
func setupLoad(t testing.TB, base, dbURL string, accounts int) *loadTarget {
	t.Helper()
	id := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Bình Minh", "--short-name", "BINHMINH")["id"])
	tg := &loadTarget{base: base, token: companyToken(t, dbURL, id, "feed@binhminh.vn")}
	fmt.Sscan(id, &tg.company)
	for i := range max(2, accounts) {
		number := fmt.Sprintf("00710001%05d", i)
		tg.numbers = append(tg.numbers, number)
		tg.accounts = append(tg.accounts, int64(cliJSON(t, dbURL, "bank-account", "create", "--company", id, "--bank", "Vietcombank", "--number", number)["id"].(float64)))
	}
	if status, body := testkit.Call(t, "PATCH", base+"/api/v1/company/configurations", tg.token,
		`{"payment_code_formats":[{"prefix":"DH","suffix_from":6,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`); status != 200 {
		t.Fatalf("formats: %d %v", status, body)
	}
	return tg
}

// companyToken makes a user with email and a client in company id, and
// issues them a token that may push and read.
func companyToken(t testing.TB, dbURL, id, email string) string {
	t.Helper()
	cliJSON(t, dbURL, "user", "create", "--company", id, "--email", email, "--role", "Admin", "--permission", "view_transactions")
	scopes := "company transaction:read transaction:write"
	client := cliJSON(t, dbURL, "client", "create", "--company", id, "--name", "feed", "--scopes", scopes)["client_id"].(string)
	return cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", email, "--scopes", scopes, "--ttl", "24h")["access_token"].(string)
}

// feedRow is the seq-th transaction of the feed: every tenth goes out,
// amounts cycle over 500 values (a filter on one selects 1/500 of the
// account's rows), references are unique per feed.
type feedRow struct {
	account  int64
	date     time.Time
	in, out  int64
	memo     string
	ref      string
	sequence int
}

func loadFeedRow(account int64, seq int) feedRow {
	r := testkit.Feed(seq)
	return feedRow{account: account, date: r.Date, in: r.In, out: r.Out, memo: r.Memo, ref: r.Ref, sequence: seq}
}

// loadRow renders the seq-th transaction of the feed on account as JSON.
func loadRow(buf *bytes.Buffer, account int64, seq int) {
	r := loadFeedRow(account, seq)
	memo, _ := json.Marshal(r.memo)
	fmt.Fprintf(buf, `{"bank_account_id":%d,"transaction_date":"%s","amount_in":%d,"amount_out":%d,"transaction_content":%s,"reference_number":"%s"}`,
		account, r.date.Format(recon.DateTimeLayout), r.in, r.out, memo, r.ref)
}

// batchAccount is the account of row i of batch n: two accounts mixed
// 60/40 (rows 3 and 4 of every 5 go to the second), accounts n and n+1
// modulo their number, so with two accounts every batch writes both.
func batchAccount(accounts []int64, n, i int) int64 {
	return accounts[(n+min(1, i%5/3))%len(accounts)]
}

// loadBatch renders the n-th push of 1000 rows, mixing two accounts 60/40
// (rows 3 and 4 of every 5 go to the second): accounts n and n+1 modulo
// their number, so with two accounts every batch writes both.
func loadBatch(tg *loadTarget, n int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"transactions":[`)
	for i := range 1000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		loadRow(&buf, batchAccount(tg.accounts, n, i), n*1000+i)
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

// loadClient is the generator's HTTP client: keep-alive, enough idle
// connections for every worker.
func loadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}
}

// do sends one request with the token and reads the answer whole.
func (tg *loadTarget) do(c *http.Client, method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, tg.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tg.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// ingest pushes cfg.rows transactions in 1000-row mixed batches, cfg.inFlight
// at a time, checks the listing's total counts them all, and returns tx/s.
// The bodies are rendered before the clock starts.
func ingest(t testing.TB, tg *loadTarget, cfg loadConfig) float64 {
	t.Helper()
	batches := make([][]byte, cfg.rows/1000)
	for n := range batches {
		batches[n] = loadBatch(tg, tg.offset/1000+n)
	}
	c := loadClient()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.inFlight)
	start := time.Now()
	for range cfg.inFlight {
		wg.Go(func() {
			for n := int(next.Add(1) - 1); n < len(batches); n = int(next.Add(1) - 1) {
				status, raw, err := tg.do(c, "POST", "/api/v1/transactions", batches[n])
				if err == nil && status != 200 {
					err = fmt.Errorf("push %d: %d %.300s", n, status, raw)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if total := tg.total(t, c, ""); total != tg.offset+len(batches)*1000 {
		t.Fatalf("the listing counts %d transactions after pushing %d beside %d seeded", total, len(batches)*1000, tg.offset)
	}
	return float64(len(batches)*1000) / elapsed.Seconds()
}

// total returns meta.pagination.total of the listing with the query.
func (tg *loadTarget) total(t testing.TB, c *http.Client, query string) int {
	t.Helper()
	status, raw, err := tg.do(c, "GET", "/api/v1/transactions?limit=1"+query, nil)
	if err != nil || status != 200 {
		t.Fatalf("listing: %d %v %.300s", status, err, raw)
	}
	var page struct {
		Meta struct {
			Pagination struct {
				Total int `json:"total"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	return page.Meta.Pagination.Total
}

// listQuery is one listing the generator measures: page 1, each filter of
// §4.3 on page 1, and deep pages.
type listQuery struct{ name, query string }

func listQueries(tg *loadTarget, rows int) []listQuery {
	mid := testkit.FeedDate(rows / 2)
	return []listQuery{
		{"page1", "limit=20"},
		{"page500", "limit=20&page=500"},
		{"bank_account_id", fmt.Sprintf("limit=20&bank_account_id=%d", tg.accounts[1])},
		{"account_number", "limit=20&account_number=" + tg.numbers[0]},
		{"reference_number", fmt.Sprintf("limit=20&reference_number=FT26%09d", rows/3)},
		{"from_date..to_date", "limit=20&from_date=" + mid.Format(time.DateOnly) + "&to_date=" + mid.AddDate(0, 0, 6).Format(time.DateOnly)},
		{"from_date", "limit=20&from_date=" + mid.Format(time.DateOnly)},
		{"amount_in", "limit=20&amount_in=151000"},
		{"amount_out", "limit=20&amount_out=20000"},
		{"page500+dates", "limit=20&page=500&from_date=" + testkit.FeedDay0.Format(time.DateOnly) + "&to_date=" + mid.Format(time.DateOnly)},
	}
}

// listResult is what one listing query measured.
type listResult struct {
	name     string
	p50, p99 time.Duration
	rps      float64
	cpu      string // who used the CPU meanwhile (cpuSampler.since), with cfg.cpu
}

// listPass runs each listing query, the big company's (cfg.queries; all
// when empty) then the small companies', with a measure of GET /healthz
// before the first and after each: a query's ratio is to the mean of the
// two measures around it, the HTTP stack's rate at that moment, since a
// shared machine's rate drifts within a pass (docs/benchmarks.md, "Where
// the dips came from"). around, when not nil, wraps the first query (a CPU
// profile of it). health has one measure more than results.
func listPass(t testing.TB, tg *loadTarget, small []*loadTarget, cfg loadConfig, around func() func()) (results, health []listResult) {
	t.Helper()
	healthz := listQuery{"healthz", "/healthz"}
	health = []listResult{listOne(t, []*loadTarget{tg}, cfg, healthz)}
	run := func(on []*loadTarget, q listQuery) {
		done := func() {}
		if around != nil && len(results) == 0 {
			done = around()
		}
		results = append(results, listOne(t, on, cfg, q))
		done()
		health = append(health, listOne(t, []*loadTarget{tg}, cfg, healthz))
	}
	for _, q := range listQueries(tg, tg.offset+cfg.rows) {
		if len(cfg.queries) == 0 || slices.Contains(cfg.queries, q.name) {
			run([]*loadTarget{tg}, q)
		}
	}
	for _, q := range smallQueries(small) {
		run(small, q)
	}
	return results, health
}

// listOne runs q for cfg.listFor from cfg.clients closed-loop clients, each
// going round the targets' companies, one request each in turn.
func listOne(t testing.TB, tgs []*loadTarget, cfg loadConfig, q listQuery) listResult {
	t.Helper()
	c := loadClient()
	path := "/api/v1/transactions?" + q.query
	if strings.HasPrefix(q.query, "/") {
		path = q.query // another endpoint: /healthz, the HTTP stack's own limit
	}
	var mu sync.Mutex
	var lat []time.Duration
	var failed atomic.Value
	var wg sync.WaitGroup
	var mark cpuMark
	if cfg.cpu != nil {
		mark = cfg.cpu.mark()
	}
	start := time.Now()
	deadline := start.Add(cfg.listFor)
	for k := range cfg.clients {
		wg.Go(func() {
			var mine []time.Duration
			for j := k; time.Now().Before(deadline); j++ {
				t0 := time.Now()
				status, raw, err := tgs[j%len(tgs)].do(c, "GET", path, nil)
				if err == nil && status != 200 {
					err = fmt.Errorf("GET %s: %d %.300s", path, status, raw)
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	if len(lat) == 0 {
		t.Fatalf("%s: no request finished in %s", q.name, cfg.listFor)
	}
	r := listResult{name: q.name, p50: percentile(lat, 0.50), p99: percentile(lat, 0.99), rps: float64(len(lat)) / elapsed.Seconds()}
	if cfg.cpu != nil {
		r.cpu = cfg.cpu.since(mark)
	}
	return r
}

// percentile sorts lat and returns its p-th quantile.
func percentile(lat []time.Duration, p float64) time.Duration {
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(p*float64(len(lat))))]
}

// ipnTarget is a second company, a merchant with orders and an IPN target
// at a loopback receiver, for the ingest-to-IPN latency.
type ipnTarget struct {
	feed     *loadTarget
	mu       sync.Mutex
	arrived  map[string]time.Time // invoice → IPN received
	received chan struct{}        // one per IPN
}

// setupIPN makes the merchant and n orders DH0000000..; the orders are
// written straight into the database (setup, not measured).
func setupIPN(t testing.TB, base, dbURL string, n int) *ipnTarget {
	t.Helper()
	it := &ipnTarget{arrived: map[string]time.Time{}, received: make(chan struct{}, n)}
	rc := testkit.NewReceiver(t)
	rc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ipn struct {
			Order struct {
				Invoice string `json:"order_invoice_number"`
			} `json:"order"`
		}
		_ = json.NewDecoder(r.Body).Decode(&ipn)
		it.mu.Lock()
		_, again := it.arrived[ipn.Order.Invoice]
		if !again {
			it.arrived[ipn.Order.Invoice] = time.Now()
		}
		it.mu.Unlock()
		if !again {
			it.received <- struct{}{}
		}
	})
	m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
	it.feed = &loadTarget{base: base, token: m.feedToken, accounts: make([]int64, 2)}
	fmt.Sscan(m.account, &it.feed.accounts[0])
	it.feed.accounts[1] = int64(cliJSON(t, dbURL, "bank-account", "create", "--company", m.company, "--bank", "MBBank", "--number", "19036688001234")["id"].(float64))
	db := dbtest.OpenURL(t, dbURL)
	var companyID int64
	fmt.Sscan(m.company, &companyID)
	for i := range n {
		code := fmt.Sprintf("DH%07d", i)
		if err := db.CreateOrder(context.Background(), &recon.Order{CompanyID: companyID, InvoiceNumber: code,
			PaymentCode: code, Amount: 10000, BankAccountID: it.feed.accounts[0]}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	return it
}

// latency pushes one transfer per request at cfg.ipnRate for cfg.ipnFor,
// alternating the two accounts, each paying an order, and returns the
// latencies from push sent to ORDER_PAID received and, apart, from push sent
// to its answer (the ingestion's share: stored, committed), each sorted.
func (it *ipnTarget) latency(t testing.TB, cfg loadConfig) (ipn, answered []time.Duration) {
	t.Helper()
	n := int(float64(cfg.ipnRate) * cfg.ipnFor.Seconds())
	c := loadClient()
	sent := make([]time.Time, n)
	answered = make([]time.Duration, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	tick := time.NewTicker(time.Second / time.Duration(cfg.ipnRate))
	for i := range n {
		<-tick.C
		wg.Go(func() {
			body := fmt.Appendf(nil, `{"transactions":[{"bank_account_id":%d,"transaction_date":"2026-03-01 10:00:00","amount_in":10000,"transaction_content":"NGUYEN THI LAN chuyen tien DH%07d","reference_number":"IPN-%d"}]}`,
				it.feed.accounts[i%2], i, i)
			sent[i] = time.Now()
			status, raw, err := it.feed.do(c, "POST", "/api/v1/transactions", body)
			answered[i] = time.Since(sent[i])
			if err == nil && status != 200 {
				err = fmt.Errorf("push %d: %d %.300s", i, status, raw)
			}
			if err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	tick.Stop()
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(2 * time.Minute)
	for range n {
		select {
		case <-it.received:
		case <-timeout:
			it.mu.Lock()
			defer it.mu.Unlock()
			t.Fatalf("%d of %d IPNs arrived within 2 minutes of the last push", len(it.arrived), n)
		}
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	ipn = make([]time.Duration, n)
	for i := range n {
		ipn[i] = it.arrived[fmt.Sprintf("DH%07d", i)].Sub(sent[i])
	}
	slices.Sort(ipn)
	slices.Sort(answered)
	return ipn, answered
}

// TestLoadGeneratorSmoke runs the generator at a tiny size against a server
// on SQLite: every push stored, every filter answered, every IPN received.
func TestLoadGeneratorSmoke(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	base, _, _ := startServer(t, dbURL, append([]string{"--sandbox", "--allow-private-targets"}, benchRateLimit...)...)
	cfg := loadConfig{rows: 3000, accounts: 2, inFlight: 2, listFor: 50 * time.Millisecond, clients: 2, ipnRate: 200, ipnFor: 100 * time.Millisecond}
	tg := setupLoad(t, base, dbURL, cfg.accounts)
	seedFeed(t, dbURL, tg, 2000)
	small := smallTargets(t, base, dbURL, seedCompanies(t, dbURL, 3, 1000), 2)
	if rate := ingest(t, tg, cfg); rate <= 0 {
		t.Fatalf("ingestion rate %f", rate)
	}
	c := loadClient()
	if a, b := tg.total(t, c, fmt.Sprintf("&bank_account_id=%d", tg.accounts[0])), tg.total(t, c, fmt.Sprintf("&bank_account_id=%d", tg.accounts[1])); a != 2600 || b != 2400 {
		t.Fatalf("the batches put %d and %d rows on the two accounts, want 2600 and 2400 (60/40, 40/60, ...: two seeded, three pushed)", a, b)
	}
	for _, q := range listQueries(tg, tg.offset+cfg.rows) {
		if total := tg.total(t, c, strings.TrimPrefix(q.query, "limit=20")); total == 0 {
			t.Errorf("%s (%s) selects nothing: the generator's filters must find rows", q.name, q.query)
		}
	}
	if len(small) != 2 || small[0].company == small[1].company || small[0].company == tg.company {
		t.Fatalf("small targets %+v", small)
	}
	for _, s := range small {
		if total := s.total(t, c, ""); total != 1000 {
			t.Errorf("small company %d lists %d rows, want its 1000", s.company, total)
		}
		for _, q := range smallQueries(small) {
			if total := s.total(t, c, strings.TrimPrefix(q.query, "limit=20")); total == 0 {
				t.Errorf("%s (%s) selects nothing in company %d", q.name, q.query, s.company)
			}
		}
	}
	cfg.cpu = startCPUSampler(os.Getpid())
	defer cfg.cpu.close()
	wrapped, pass := 0, cfg.cpu.mark()
	results, health := listPass(t, tg, small, cfg, func() func() { return func() { wrapped++ } })
	if want := len(listQueries(tg, cfg.rows)) + len(smallQueries(small)); len(results) != want || len(health) != want+1 || wrapped != 1 {
		t.Fatalf("%d listing results and %d /healthz measures, the first wrapped %d times; want %d, %d and once", len(results), len(health), wrapped, want, want+1)
	}
	for _, r := range append(results, health...) {
		if r.rps <= 0 {
			t.Errorf("%s: %.0f req/s", r.name, r.rps)
		}
	}
	if use := cfg.cpu.since(pass); !strings.Contains(use, "server") {
		t.Errorf("CPU over the listing: %q, want this process (the server here) in it", use)
	}
	if rss, peak, err := processMemory(os.Getpid()); err != nil || rss <= 0 || peak < rss {
		t.Fatalf("memory of this process: rss %f, peak %f, %v", rss, peak, err)
	}
	it := setupIPN(t, base, dbURL, 20)
	lat, answered := it.latency(t, cfg)
	if len(lat) != 20 || lat[0] <= 0 || len(answered) != 20 || answered[0] <= 0 {
		t.Fatalf("latencies %v, answers %v", lat, answered)
	}
}
