package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/jackc/pgx/v5"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// These benchmarks drive the real server (recon serve, in-process, on a
// loopback port) over HTTP, on both engines. Run them with `make bench`;
// docs/benchmarks.md records the figures.

// benchRateLimit lifts the per-client rate limit (and the dashboard's per
// session and address) far above what one benchmark client sends, keeping
// the limiter's work in the measurement.
var benchRateLimit = []string{"--rate-limit", "1000000", "--rate-burst", "1000000", "--dashboard-rate-limit", "1000000", "--dashboard-rate-burst", "1000000"}

type benchEnv struct {
	base, token string
	account     int64
	accounts    []int64 // account plus three more, for concurrent pushes
	companyID   int64
	db          *sqlstore.DB
}

// benchServer starts a server on a fresh database of the engine, with a
// company (formats DH 4..8 digits), a bank account and a token allowed to
// push and read.
func benchServer(b *testing.B, engine string, flags ...string) *benchEnv {
	b.Helper()
	url := dbtest.NewURL(b, engine)
	base, _, _ := startServer(b, url, append(slices.Clone(benchRateLimit), flags...)...)
	id := fmt.Sprint(cliJSON(b, url, "company", "create", "--full-name", "Bench", "--short-name", "B")["id"])
	cliJSON(b, url, "user", "create", "--company", id, "--email", "bench@b.vn", "--role", "Admin", "--permission", "view_transactions")
	client := cliJSON(b, url, "client", "create", "--company", id, "--name", "bench", "--scopes", "company transaction:read transaction:write")["client_id"].(string)
	token := cliJSON(b, url, "token", "issue", "--client", client, "--user", "bench@b.vn", "--scopes", "company transaction:read transaction:write", "--ttl", "24h")["access_token"].(string)
	var accounts []int64
	for _, number := range []string{"0071000123456", "190366886868", "19036688001234", "1012345678"} {
		accounts = append(accounts, int64(cliJSON(b, url, "bank-account", "create", "--company", id, "--bank", "Vietcombank", "--number", number)["id"].(float64)))
	}
	status, body := testkit.Call(b, "PATCH", base+"/api/v1/company/configurations", token,
		`{"payment_code_formats":[{"prefix":"DH","suffix_from":4,"suffix_to":8,"character_type":"NumberOnly","is_active":1}]}`)
	if status != 200 {
		b.Fatalf("formats: %d %v", status, body)
	}
	db := dbtest.OpenURL(b, url)
	var companyID int64
	fmt.Sscan(id, &companyID)
	return &benchEnv{base: base, token: token, account: accounts[0], accounts: accounts, companyID: companyID, db: db}
}

// benchDate is the date of a benchmark's seq-th transaction: a feed's
// transactions arrive in time order, a few seconds apart.
func benchDate(seq int) time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(seq) * 3 * time.Second)
}

// benchRow is a raw row with the values batchBody gives the seq-th transaction.
func benchRow(company, account int64, seq, i int, now time.Time) []any {
	code := fmt.Sprintf("DH%06d", seq%1_000_000)
	return []any{company, account, benchDate(seq), int64(10000 + i*1000), int64(0), int64(seq),
		"NGUYEN VAN A chuyen tien " + code + " thanh toan don hang", fmt.Sprintf("R%d", seq), code, nil, now}
}

// batchBody renders a push of 1000 transactions, the batch-th of the
// account: amounts and codes vary, dates follow on from the previous batch.
// Each transfer's memo names its own order code: were the same amounts and
// memos to come back every batch of a day, under new references, each would
// be a possible duplicate of the first (docs/statements.md, Possible
// duplicates), which no bank's feed sends.
func batchBody(account int64, batch int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"transactions":[`)
	for i := range 1000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		seq := batch*1000 + i
		fmt.Fprintf(&buf, `{"bank_account_id":%d,"transaction_date":"%s","amount_in":%d,"transaction_content":"NGUYEN VAN A chuyen tien DH%06d thanh toan don hang","reference_number":"R%d"}`,
			account, benchDate(seq).Format(recon.DateTimeLayout), 10000+i*1000, seq%1_000_000, seq)
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

// BenchmarkIngestHTTP pushes batches of 1000 transactions through
// POST /api/v1/transactions (HTTP, JSON, validation, extraction, dedup,
// storage) from 4 concurrent clients, each feeding one of the company's four
// bank accounts (as bank feeds do: one stream per account; pushes to one
// account are serialized by its lock), and reports transactions per second.
//
// SQLite runs with its durable default, synchronous=FULL, and once more with
// the operator's faster choice, --sqlite-synchronous=normal.
func BenchmarkIngestHTTP(b *testing.B) {
	type variant struct {
		name, engine string
		flags        []string
		// exceptions: the company has an order (no memo names it), so every
		// row is an unmatched exception, queued in the ingestion's transaction.
		exceptions bool
	}
	var variants []variant
	for _, engine := range dbtest.Engines() {
		variants = append(variants, variant{engine, engine, nil, false})
		if engine == "sqlite" {
			variants = append(variants, variant{"sqlite-sync-normal", engine, []string{"--sqlite-synchronous", "normal"}, false})
		}
		variants = append(variants, variant{engine + "-all-exceptions", engine, nil, true})
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			env := benchServer(b, v.engine, v.flags...)
			if v.exceptions {
				o := &recon.Order{CompanyID: env.companyID, InvoiceNumber: "BENCH", PaymentCode: "DH99999999", Amount: 1, BankAccountID: env.account}
				if err := env.db.CreateOrder(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
			// The bodies are made before the clock starts (the clients' work
			// is not the server's), each with new references.
			bodies := make([][][]byte, len(env.accounts))
			for a, account := range env.accounts {
				for n := range b.N {
					bodies[a] = append(bodies[a], batchBody(account, n))
				}
			}
			var clients atomic.Int64
			next := make([]atomic.Int64, len(env.accounts))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			b.SetParallelism(2) // 2 × GOMAXPROCS clients
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				a := int(clients.Add(1)-1) % len(env.accounts)
				for pb.Next() {
					body := bodies[a][next[a].Add(1)-1]
					req, _ := http.NewRequest("POST", env.base+"/api/v1/transactions", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+env.token)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("push: %d", resp.StatusCode)
						return
					}
				}
			})
			b.StopTimer()
			var stored int
			if err := env.db.SQL().QueryRow(`SELECT COUNT(*) FROM transactions`).Scan(&stored); err != nil || stored != b.N*1000 {
				b.Fatalf("%d transactions stored (%v), want %d", stored, err, b.N*1000)
			}
			var queued int
			if err := env.db.SQL().QueryRow(`SELECT COUNT(*) FROM exceptions`).Scan(&queued); err != nil || (queued == stored) != v.exceptions {
				b.Fatalf("%d exceptions queued for %d transactions (%v)", queued, stored, err)
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "tx/s")
		})
	}
}

// BenchmarkRawInsert is the physical limit of the same engine: the same rows,
// 1000 per database transaction, by the engine's fastest way in (COPY on
// PostgreSQL, a prepared multi-row INSERT of 500 rows on SQLite), with no HTTP, JSON,
// validation, extraction, locks or duplicate checks.
func BenchmarkRawInsert(b *testing.B) {
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			db := dbtest.OpenStore(b, engine)
			co := &recon.Company{FullName: "Raw", ShortName: "R", Status: recon.CompanyActive}
			if err := db.CreateCompany(context.Background(), co); err != nil {
				b.Fatal(err)
			}
			acct := &recon.BankAccount{CompanyID: co.ID, BankName: "VCB", AccountNumber: "1"}
			if err := db.CreateBankAccount(context.Background(), acct); err != nil {
				b.Fatal(err)
			}
			now := time.Now().UTC()
			var insert *sql.Stmt // SQLite: one multi-row INSERT, parsed once
			if engine == "sqlite" {
				var sb strings.Builder
				sb.WriteString(`INSERT INTO transactions (company_id, bank_account_id, transaction_date, amount_in, amount_out, accumulated, content, reference_number, code, sub_account, created_at) VALUES `)
				for i := range sqliteRowsPer {
					if i > 0 {
						sb.WriteByte(',')
					}
					sb.WriteString("(?,?,?,?,?,?,?,?,?,?,?)") // anonymous, as sqlstore does
				}
				var err error
				if insert, err = db.SQL().Prepare(sb.String()); err != nil {
					b.Fatal(err)
				}
				defer insert.Close()
			}
			var seq int
			b.ResetTimer()
			for b.Loop() {
				if engine == "postgres" {
					seq = copyRows(b, db, co.ID, acct.ID, now, seq)
					continue
				}
				tx, err := db.SQL().Begin()
				if err != nil {
					b.Fatal(err)
				}
				for chunk := 0; chunk < 1000/sqliteRowsPer; chunk++ {
					args := make([]any, 0, sqliteRowsPer*11)
					for i := range sqliteRowsPer {
						seq++
						args = append(args, benchRow(co.ID, acct.ID, seq, chunk*sqliteRowsPer+i, now)...)
					}
					if _, err := tx.Stmt(insert).Exec(args...); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// sqliteRowsPer is the rows of one multi-row INSERT in the SQLite raw benchmark.
const sqliteRowsPer = 500

// copyRows COPYs 1000 rows in one transaction: PostgreSQL's fastest way in.
func copyRows(b *testing.B, db *sqlstore.DB, company, account int64, now time.Time, seq int) int {
	conn, err := db.SQL().Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rows := make([][]any, 1000)
	for i := range rows {
		seq++
		rows[i] = benchRow(company, account, seq, i, now)
	}
	err = conn.Raw(func(dc any) error {
		// pgx's connection under the store's (sqlstore/pipeline.go).
		pc := dc.(interface{ Conn() *pgx.Conn }).Conn()
		tx, err := pc.Begin(context.Background())
		if err != nil {
			return err
		}
		if _, err := tx.CopyFrom(context.Background(), pgx.Identifier{"transactions"},
			[]string{"company_id", "bank_account_id", "transaction_date", "amount_in", "amount_out", "accumulated", "content", "reference_number", "code", "sub_account", "created_at"},
			pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		return tx.Commit(context.Background())
	})
	if err != nil {
		b.Fatal(err)
	}
	return seq
}

var (
	listEnvOnce = map[string]*sync.Once{"sqlite": {}, "postgres": {}}
	listEnvs    = map[string]*benchEnv{}
)

// listingRows is how many transactions the listing benchmark loads into one company.
const listingRows = 1_000_000

// BenchmarkListTransactions loads 1,000,000 transactions into one company
// (through the ingestion pipeline, 1000 per batch) once per engine, then
// measures GET /api/v1/transactions under 8 concurrent clients for several
// filter sets, reporting p50 and p99 latency and requests per second.
func BenchmarkListTransactions(b *testing.B) {
	queries := []struct{ name, query string }{
		{"page1", "limit=20"},
		{"page500", "limit=20&page=500"},
		{"page1-account", "limit=20&bank_account_id=%d"},
		{"page1-dates", "limit=20&from_date=2026-02-01&to_date=2026-02-07"},
		{"page500-dates", "limit=20&page=500&from_date=2026-01-01&to_date=2026-06-30"},
		{"page1-amount_in", "limit=20&amount_in=150000"},
		{"page1-reference", "limit=20&reference_number=L-77-123"},
	}
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			listEnvOnce[engine].Do(func() { listEnvs[engine] = loadListing(b, engine) })
			env := listEnvs[engine]
			if env == nil {
				b.Fatal("listing data failed to load")
			}
			for _, q := range queries {
				query := q.query
				if strings.Contains(query, "%d") {
					query = fmt.Sprintf(query, env.account)
				}
				b.Run(q.name, func(b *testing.B) { measureGets(b, env, "/api/v1/transactions?"+query) })
			}
		})
	}
}

func loadListing(b *testing.B, engine string) *benchEnv {
	// The data outlives one benchmark run: the server and database live
	// until the process ends (dbtest cleans the PostgreSQL cluster in Main).
	env := benchServer(b, engine)
	start := time.Now()
	loc := time.UTC
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
	for batch := 0; batch < listingRows/1000; batch++ {
		in := make([]recon.TransactionInput, 1000)
		for i := range in {
			n := batch*1000 + i
			in[i] = recon.TransactionInput{
				BankAccountID:   env.account,
				TransactionDate: day0.Add(time.Duration(n) * 15 * time.Second), // ~174 days
				AmountIn:        int64(1+n%500) * 1000,
				Content:         fmt.Sprintf("NGUYEN VAN A chuyen tien DH%06d", n%1_000_000),
				ReferenceNumber: fmt.Sprintf("L-%d-%d", batch, i),
			}
		}
		if _, err := recon.Ingest(context.Background(), env.db, recon.LiveTenant(env.companyID), in[len(in)-1].TransactionDate, in); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: loaded %d transactions in %s", engine, listingRows, time.Since(start).Round(time.Second))
	// What recon serve's hourly maintenance (and PostgreSQL's autovacuum)
	// does after such a load.
	if err := env.db.Optimize(context.Background()); err != nil {
		b.Fatal(err)
	}
	if engine == "postgres" {
		// What autovacuum does within a minute of such a load (an insert-only
		// table is vacuumed past autovacuum_vacuum_insert_threshold): set the
		// visibility map, without which every index entry an amount filter's
		// COUNT(*) reads costs a heap visit.
		if _, err := env.db.SQL().Exec(`VACUUM (ANALYZE) transactions`); err != nil {
			b.Fatal(err)
		}
	}
	return env
}

func measureGets(b *testing.B, env *benchEnv, path string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(4) // 4 × GOMAXPROCS clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			req, _ := http.NewRequest("GET", env.base+path, nil)
			req.Header.Set("Authorization", "Bearer "+env.token)
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mine = append(mine, time.Since(t0))
			if resp.StatusCode != 200 {
				b.Errorf("GET %s: %d", path, resp.StatusCode)
				return
			}
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkIPNLatency measures, on the real server, the time from a bank
// transaction's push (POST /api/v1/transactions) to its ORDER_PAID IPN
// arriving at a local receiver, at a steady 500 transactions/s for 4 s over
// the company's four bank accounts, each transfer paying an order. Two feeds:
// one transfer per request (batch1), and batches of 10 every 20 ms per the
// whole feed (batch10), as a feed that groups what arrived in the last 20 ms.
// Run with -benchtime 1x.
func BenchmarkIPNLatency(b *testing.B) {
	const rate, seconds = 500, 4
	for _, engine := range dbtest.Engines() {
		for _, batch := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/batch%d", engine, batch), func(b *testing.B) { ipnLatency(b, engine, rate, seconds, batch) })
		}
	}
}

func ipnLatency(b *testing.B, engine string, rate, seconds, batch int) {
	rc := testkit.NewReceiver(b)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	rc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ipn struct {
			Order struct {
				Invoice string `json:"order_invoice_number"`
			} `json:"order"`
		}
		_ = json.NewDecoder(r.Body).Decode(&ipn)
		mu.Lock()
		arrived[ipn.Order.Invoice] = time.Now()
		mu.Unlock()
	})
	dbURL := dbtest.NewURL(b, engine)
	base, _, _ := startServer(b, dbURL, append([]string{"--sandbox", "--allow-private-targets"}, benchRateLimit...)...)
	m := setupMerchant(b, base, dbURL, rc.URL+"/ipn")
	db := dbtest.OpenURL(b, dbURL)
	var companyID, accountID int64
	fmt.Sscan(m.company, &companyID)
	fmt.Sscan(m.account, &accountID)
	// The company's transfers arrive on four bank accounts (pushes to one
	// account are serialised by its lock; see docs/benchmarks.md).
	accounts := []int64{accountID}
	for _, number := range []string{"190366886868", "19036688001234", "1012345678"} {
		a := &recon.BankAccount{CompanyID: companyID, BankName: "MBBank", AccountNumber: number}
		if err := db.CreateBankAccount(context.Background(), a); err != nil {
			b.Fatal(err)
		}
		accounts = append(accounts, a.ID)
	}
	n := rate * seconds
	for i := range n {
		code := fmt.Sprintf("DH%07d", i)
		if err := db.CreateOrder(context.Background(), &recon.Order{CompanyID: companyID, InvoiceNumber: code,
			PaymentCode: code, Amount: 10000, BankAccountID: accountID}); err != nil {
			b.Fatal(err)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	sent := make([]time.Time, n)
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		tick := time.NewTicker(time.Second * time.Duration(batch) / time.Duration(rate))
		for first := 0; first < n; first += batch {
			<-tick.C
			wg.Go(func() {
				var items []string
				for i := first; i < first+batch; i++ {
					items = append(items, fmt.Sprintf(`{"bank_account_id":%d,"transaction_date":"2026-03-01 10:00:00","amount_in":10000,"transaction_content":"chuyen tien DH%07d","reference_number":"LAT-%d"}`,
						accounts[(first/batch)%len(accounts)], i, i))
				}
				req, _ := http.NewRequest("POST", base+"/api/v1/transactions", strings.NewReader(`{"transactions":[`+strings.Join(items, ",")+`]}`))
				req.Header.Set("Authorization", "Bearer "+m.feedToken)
				req.Header.Set("Content-Type", "application/json")
				at := time.Now()
				for i := first; i < first+batch; i++ {
					sent[i] = at
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("push %d: %d %s", first, resp.StatusCode, raw)
				}
			})
		}
		tick.Stop()
		wg.Wait()
		testkit.WaitFor(b, "every IPN", 120*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(arrived) == n
		})
	}
	b.StopTimer()
	lat := make([]time.Duration, 0, n)
	for i := range n {
		lat = append(lat, arrived[fmt.Sprintf("DH%07d", i)].Sub(sent[i]))
	}
	slices.Sort(lat)
	ms := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(ms(1), "max_ms")
}

// BenchmarkListExceptions loads 1,000,000 incoming transfers into one
// company that has orders (through the ingestion pipeline, 1000 per batch),
// so that every transfer whose code names no order is queued: the worst case
// of a queue nobody works, 1,000,000 open exceptions (990,000 unmatched,
// 10,000 underpaid). It then measures GET /api/v1/exceptions, each page with
// its suggestions, under 8 concurrent clients, reporting p50 and p99 latency.
func BenchmarkListExceptions(b *testing.B) {
	queries := []struct{ name, query string }{
		{"page1", "limit=20"},
		{"page1-underpaid", "limit=20&kind=underpaid"},
		{"page1-account", "limit=20&bank_account_id=%d"},
		{"page1-dates", "limit=20&from_date=2026-02-01&to_date=2026-02-07"},
		{"deep-after", "limit=20&after=%a"},
		{"page1-resolved", "limit=20&status=resolved"},
	}
	envs := map[string]*benchEnv{}
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			env := envs[engine]
			if env == nil {
				env = loadExceptions(b, engine)
				envs[engine] = env
			}
			var deep int64 // an exception in the middle of the queue
			if err := env.db.SQL().QueryRow(`SELECT MIN(transaction_id) + 500000 FROM exceptions`).Scan(&deep); err != nil {
				b.Fatal(err)
			}
			for _, q := range queries {
				query := strings.ReplaceAll(q.query, "%a", fmt.Sprint(deep))
				if strings.Contains(query, "%d") {
					query = fmt.Sprintf(query, env.account)
				}
				b.Run(q.name, func(b *testing.B) { measureGets(b, env, "/api/v1/exceptions?"+query) })
			}
		})
	}
}

func loadExceptions(b *testing.B, engine string) *benchEnv {
	env := benchServer(b, engine)
	ctx := context.Background()
	for k := range 100 { // open orders: one in 100 transfers pays part of one
		o := &recon.Order{CompanyID: env.companyID, InvoiceNumber: fmt.Sprintf("INV-%d", k), PaymentCode: fmt.Sprintf("DH9%07d", k),
			Amount: 1_000_000_000, BankAccountID: env.account}
		if err := env.db.CreateOrder(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for batch := 0; batch < listingRows/1000; batch++ {
		in := make([]recon.TransactionInput, 1000)
		for i := range in {
			n := batch*1000 + i
			code := fmt.Sprintf("DH%06d", n%1_000_000)
			if n%100 == 0 {
				code = fmt.Sprintf("DH9%07d", (n/100)%100)
			}
			in[i] = recon.TransactionInput{
				BankAccountID:   env.accounts[n%2],
				TransactionDate: day0.Add(time.Duration(n) * 15 * time.Second),
				AmountIn:        int64(1+n%500) * 1000,
				Content:         "NGUYEN VAN A chuyen tien " + code,
				ReferenceNumber: fmt.Sprintf("E-%d-%d", batch, i),
			}
		}
		if _, err := recon.Ingest(ctx, env.db, recon.LiveTenant(env.companyID), in[len(in)-1].TransactionDate, in); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: loaded %d transactions in %s", engine, listingRows, time.Since(start).Round(time.Second))
	if err := env.db.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	if engine == "postgres" {
		if _, err := env.db.SQL().Exec(`VACUUM (ANALYZE) exceptions`); err != nil {
			b.Fatal(err)
		}
	}
	return env
}
