package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"recon"
	"recon/api"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/statement"
	"recon/web"
)

// gateStore is the real store whose every IngestAtomically announces
// itself on entered and then waits until open is closed: imports held in
// their slots for as long as a test needs. Once open, it holds nobody.
type gateStore struct {
	*sqlstore.DB
	entered chan string // the tenant of each import that reached the store
	open    chan struct{}
}

func (s *gateStore) IngestAtomically(ctx context.Context, tenant recon.TenantID, fill func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error) error {
	select {
	case s.entered <- fmt.Sprint(tenant.ID()):
		<-s.open
	case <-s.open: // open: nobody needs to hear of it
	}
	return s.DB.IngestAtomically(ctx, tenant, fill)
}

// anyPassword signs in any user it knows, whatever the password.
type anyPassword map[string]*recon.User

func (p anyPassword) VerifyPassword(_ context.Context, _ int64, email, _, _ string) (*recon.User, error) {
	if u := p[strings.ToLower(email)]; u != nil {
		return u, nil
	}
	return nil, recon.Errorf(recon.EUNAUTHORIZED, "wrong")
}

func (p anyPassword) VerifyEmailPassword(ctx context.Context, email, password, address string) ([]*recon.User, error) {
	u, err := p.VerifyPassword(ctx, 0, email, password, address)
	if err != nil {
		return nil, err
	}
	return []*recon.User{u}, nil
}

// TestUploadSlotsSharedByAPIAndDashboard: the API's and the dashboard's
// statement uploads take the same slots (as cmd/recon wires them: one
// web.Slots for both): with 2 slots and a share of 1 a company, one
// company's import refuses its next upload from the other surface (and from
// its test mode) while another company still gets the second slot; then
// every way in is refused until a slot is free, the API with 503,
// Retry-After and its envelope, the dashboard with a 503 page in the
// user's language. Imports are held in the store and released by channel.
func TestUploadSlotsSharedByAPIAndDashboard(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		db := dbtest.OpenStore(t, engine)
		gate := &gateStore{DB: db, entered: make(chan string), open: make(chan struct{})}
		type tenant struct {
			co      *recon.Company
			account int64
			testAcc int64
			testID  int64
		}
		mk := func(name string) *tenant {
			co := &recon.Company{FullName: "Công ty " + name, ShortName: name, Status: recon.CompanyActive, Subscription: "Business",
				BeginDate: "2026-01-01", EndDate: "2027-01-01", Config: recon.CompanyConfig{DataStorageDays: 365}}
			if err := db.CreateCompany(ctx, co); err != nil {
				t.Fatal(err)
			}
			ba := &recon.BankAccount{CompanyID: co.ID, BankName: "Vietcombank", AccountNumber: "10123456789" + name[:1]}
			if err := db.CreateBankAccount(ctx, ba); err != nil {
				t.Fatal(err)
			}
			tt, err := db.TestTenant(ctx, co.ID)
			if err != nil {
				t.Fatal(err)
			}
			tba := &recon.BankAccount{CompanyID: tt.ID.ID(), BankName: "Vietcombank", AccountNumber: "20123456789" + name[:1]}
			if err := db.CreateBankAccount(ctx, tba); err != nil {
				t.Fatal(err)
			}
			return &tenant{co: co, account: ba.ID, testAcc: tba.ID, testID: tt.ID.ID()}
		}
		a, b := mk("SAOMAI"), mk("BINHMINH")
		users := anyPassword{}
		for _, tn := range []*tenant{a, b} {
			u := &recon.User{Company: tn.co.ID, Email: "boss@" + tn.co.ShortName + ".vn", Role: recon.RoleAdmin, PasswordHash: "x"}
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			users[strings.ToLower(u.Email)] = u
		}
		auth := tokens{}
		for _, tn := range []*tenant{a, b} {
			auth[tn.co.ShortName] = &recon.Caller{Tenant: recon.LiveTenant(tn.co.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionWrite}}
			auth[tn.co.ShortName+"-test"] = &recon.Caller{Tenant: recon.TenantFromRow(tn.testID, false), ClientID: "c", Scopes: []string{recon.ScopeTransactionWrite}}
		}

		// The server: both surfaces, one set of slots (cmd/recon's routes).
		uploads := web.NewSlots(2, 1)
		logger := slog.New(slog.DiscardHandler)
		mux := web.NewMux()
		(&api.Handler{Store: gate, Auth: auth, Logger: logger, Uploads: uploads}).Register(mux)
		(&dashboard.Handler{Store: gate, Passwords: users, Sandbox: true, Logger: logger, Uploads: uploads,
			ImportStatement: func(ctx context.Context, tenant recon.TenantID, account int64, name string, f io.ReadSeeker) (*dashboard.StatementResult, error) {
				rep, err := statement.ImportFile(ctx, gate, tenant, account, name, f, "auto", statement.Options{}, false)
				if err != nil {
					return nil, err
				}
				return &dashboard.StatementResult{Format: string(rep.Format), Imported: rep.Imported}, nil
			}}).Register(mux)
		srv := httptest.NewServer((&web.Middleware{Logger: logger}).Wrap(mux))
		t.Cleanup(srv.Close)
		var opened sync.Once
		release := func() { opened.Do(func() { close(gate.open) }) }
		t.Cleanup(release) // before srv.Close: a failed test leaves no import held

		type answer struct {
			status int
			header http.Header
			body   string
		}
		apiUpload := func(token string, account int64, ref string) answer {
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/bank-accounts/%d/statements?format=csv", srv.URL, account),
				strings.NewReader("transaction_date,amount_in,transaction_content,reference_number\n2026-03-01 08:00:00,1000,memo,"+ref+"\n"))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return answer{}
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			return answer{resp.StatusCode, resp.Header, string(raw)}
		}
		// A signed-in dashboard browser of the company's admin.
		signIn := func(tn *tenant, lang string) func(ref string) answer {
			br := testkit.NewBrowser(t, srv.URL)
			br.Lang = lang
			br.SignedIn(fmt.Sprint(tn.co.ID), "boss@"+tn.co.ShortName+".vn", "x")
			token := br.CSRF("/dashboard/bank-accounts")
			// The upload runs in the background: it reports with t.Error.
			return func(ref string) answer {
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				_ = mw.WriteField("csrf", token)
				_ = mw.WriteField("account", fmt.Sprint(tn.account))
				fw, _ := mw.CreateFormFile("file", "statement.csv")
				fmt.Fprintf(fw, "transaction_date,amount_in,transaction_content,reference_number\n2026-03-01 08:00:00,1000,memo,%s\n", ref)
				mw.Close()
				req, _ := http.NewRequest("POST", srv.URL+"/dashboard/bank-accounts/statement", &buf)
				req.Header.Set("Accept-Language", lang)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				req.Header.Set("Content-Type", mw.FormDataContentType())
				resp, err := br.Client.Do(req)
				if err != nil {
					t.Error(err)
					return answer{}
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return answer{resp.StatusCode, resp.Header, string(raw)}
			}
		}
		dashA, dashB := signIn(a, "vi"), signIn(b, "en")

		// start runs an upload in the background.
		start := func(up func() answer) chan answer {
			done := make(chan answer, 1)
			go func() { done <- up() }()
			return done
		}
		// refused runs an upload that must be refused: were it admitted, it
		// would reach the store (entered) instead of answering.
		refused := func(what string, up func() answer) answer {
			t.Helper()
			done := start(up)
			select {
			case tenant := <-gate.entered:
				t.Fatalf("%s: admitted to an import (tenant %s) instead of refused", what, tenant)
			case got := <-done:
				if got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") != "10" {
					t.Fatalf("%s: %d %v %s; want 503 with Retry-After", what, got.status, got.header, got.body)
				}
				return got
			}
			return answer{}
		}

		// Company A's API upload takes a slot and is held.
		first := start(func() answer { return apiUpload("SAOMAI", a.account, "A1") })
		if tenant := <-gate.entered; tenant != fmt.Sprint(a.co.ID) {
			t.Fatalf("held import of tenant %s", tenant)
		}
		// A's share is taken: its dashboard upload and its test mode's API
		// upload are refused, though a slot is free.
		page := refused("A's dashboard upload", func() answer { return dashA("A2") })
		if !strings.Contains(page.body, `id="upload-busy"`) || !strings.Contains(page.body, "Máy chủ đang bận nhập các sao kê khác") {
			t.Fatalf("A's busy page: %s", page.body)
		}
		env := refused("A's test-mode API upload", func() answer { return apiUpload("SAOMAI-test", a.testAcc, "A3") })
		var e map[string]any
		if err := json.Unmarshal([]byte(env.body), &e); err != nil || e["error"] != "unavailable" || !strings.Contains(fmt.Sprint(e["message"]), "of this company") {
			t.Fatalf("A's test-mode refusal: %s", env.body)
		}
		// Company B still gets the other slot, from the dashboard.
		second := start(func() answer { return dashB("B1") })
		if tenant := <-gate.entered; tenant != fmt.Sprint(b.co.ID) {
			t.Fatalf("held import of tenant %s", tenant)
		}
		// Both slots are taken: every way in is refused, B's API included.
		env = refused("B's API upload", func() answer { return apiUpload("BINHMINH", b.account, "B2") })
		if !strings.Contains(env.body, "on this server") {
			t.Fatalf("B's API refusal: %s", env.body)
		}
		page = refused("B's dashboard upload", func() answer { return dashB("B3") })
		if !strings.Contains(page.body, "The server is busy importing other statements") {
			t.Fatalf("B's busy page: %s", page.body)
		}
		// The held imports finish, and free their slots.
		release()
		if got := <-first; got.status != 200 || !strings.Contains(got.body, `"imported":1`) {
			t.Fatalf("A's held upload: %d %s", got.status, got.body)
		}
		if got := <-second; got.status != 200 || !strings.Contains(got.body, `id="upload-done"`) {
			t.Fatalf("B's held upload: %d %s", got.status, got.body)
		}
		if got := dashA("A4"); got.status != 200 || !strings.Contains(got.body, `id="upload-done"`) {
			t.Fatalf("A's dashboard upload once a slot is free: %d %s", got.status, got.body)
		}
		if got := apiUpload("SAOMAI-test", a.testAcc, "A5"); got.status != 200 {
			t.Fatalf("A's test-mode upload once a slot is free: %d %s", got.status, got.body)
		}
	})
}
