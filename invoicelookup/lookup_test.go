package invoicelookup_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/invoicelookup"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/web"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var at = time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC) // 26/11/2026 10:00 in Vietnam

type bundle struct {
	srv    *httptest.Server
	db     *sqlstore.DB
	tenant recon.TenantID
}

// setup serves the lookup page on a fresh database of the engine, on
// loopback, with a company that issues invoices.
func setup(t *testing.T, engine string, limiter *web.RateLimiter) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dbtest.NewMigratedURL(t, engine), sqlstore.WithClock(testkit.NewClock(at)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
		Config: recon.CompanyConfig{DataStorageDays: 365}}
	if err := db.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	mux := web.NewMux()
	(&invoicelookup.Handler{Store: db, Limiter: limiter, BaseURL: "https://recon.example.vn/", Logger: slog.New(slog.DiscardHandler)}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &bundle{srv: srv, db: db, tenant: c.Tenant()}
}

func content(buyer string) *recon.Invoice {
	return &recon.Invoice{
		TemplateCode: recon.InvoiceTemplateVAT, Series: "C26TAA", IssuedDate: at, Currency: "VND", ExchangeRate: "1", PaymentMethod: "CK",
		Seller: recon.Seller{LegalName: "Công ty TNHH Sao Mai", TaxCode: "0312345678", Address: "1 Lê Lợi, Quận 1, TP.HCM"},
		Buyer:  recon.Buyer{Name: buyer, LegalName: "Công ty Cổ phần Hưng Thịnh", TaxCode: "0100109106", Address: "Hà Nội"},
		Items: []recon.InvoiceItem{{LineNumber: 1, LineType: recon.LineGoods, ItemName: "Áo thun", Unit: "cái", Quantity: "2",
			UnitPrice: 50000, VATRate: recon.VAT10, Amount: 100000, VATAmount: 10000}},
		Totals: recon.InvoiceTotals{TotalBeforeTax: 100000, ByRate: []recon.RateTotal{{VATRate: recon.VAT10, Amount: 100000, VATAmount: 10000}},
			VATTotal: 10000, TotalAmount: 110000, TotalInWords: "Một trăm mười nghìn đồng"},
	}
}

// issue issues an invoice with its signed XML and the authority's answer.
func (b *bundle) issue(t *testing.T, inv *recon.Invoice, xml string) *recon.Invoice {
	t.Helper()
	ctx := context.Background()
	out, err := b.db.CreateInvoice(ctx, b.tenant, inv, true, "sandbox", at)
	if err != nil {
		t.Fatal(err)
	}
	return b.answer(t, out, xml)
}

func (b *bundle) answer(t *testing.T, inv *recon.Invoice, xml string) *recon.Invoice {
	t.Helper()
	ctx := context.Background()
	if xml != "" {
		if err := b.db.SetInvoiceXML(ctx, b.tenant, inv.ReferenceCode, []byte(xml)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.db.RecordInvoiceAnswer(ctx, b.tenant, inv.ReferenceCode, recon.InvoiceAnswer{CQTCode: "M1-26-SAOMAI-" + inv.LookupCode}, at)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type answer struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, c *http.Client, rawURL string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.StatusCode, res.Header, string(body)}
}

func wantIn(t *testing.T, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the answer does not contain %q:\n%s", w, body)
		}
	}
}

func TestLookupForm(t *testing.T) {
	b := setup(t, sqlstore.EngineSQLite, nil)
	a := get(t, nil, b.srv.URL+"/invoices/lookup")
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", a.status, a.header.Get("Content-Type"))
	}
	wantIn(t, a.body, `<html lang="vi">`, "Tra cứu hóa đơn", "Mã tra cứu", `name="code"`, `action="/invoices/lookup"`, `hreflang="en"`)
	if strings.Contains(a.body, `id="error"`) {
		t.Error("the bare form shows an error")
	}
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy"} {
		if a.header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	// English by Accept-Language, and ?lang= before it.
	en := get(t, nil, b.srv.URL+"/invoices/lookup", "Accept-Language", "en-US,en;q=0.9")
	wantIn(t, en.body, `<html lang="en">`, "Invoice lookup", "Lookup code", `value="en"`)
	vi := get(t, nil, b.srv.URL+"/invoices/lookup?lang=vi", "Accept-Language", "en-US")
	wantIn(t, vi.body, `<html lang="vi">`, "Tra cứu hóa đơn")
	fr := get(t, nil, b.srv.URL+"/invoices/lookup?lang=fr", "Accept-Language", "fr-FR, en;q=0.5")
	wantIn(t, fr.body, `<html lang="en">`)
}

func TestLookupFindsTheInvoice(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, nil)
		inv := b.issue(t, content("Nguyễn Văn Đức"), "<HDon>signed</HDon>")
		for _, code := range []string{inv.LookupCode, strings.ToLower(inv.LookupCode), " " + inv.LookupCode + " "} {
			a := get(t, nil, b.srv.URL+"/invoices/lookup?code="+url.QueryEscape(code))
			if a.status != http.StatusOK {
				t.Fatalf("code %q: %d\n%s", code, a.status, a.body)
			}
			wantIn(t, a.body, "Công ty TNHH Sao Mai", "0312345678", "Công ty Cổ phần Hưng Thịnh (Nguyễn Văn Đức)",
				`id="symbol">1C26TAA<`, `id="number">1<`, `id="date">26/11/2026<`, `id="total">110.000 VND<`,
				`data-status="issued">Đã phát hành<`, "M1-26-SAOMAI-"+inv.LookupCode,
				`href="/invoices/lookup/`+inv.LookupCode+`/pdf"`, `href="/invoices/lookup/`+inv.LookupCode+`/xml"`)
		}
		en := get(t, nil, b.srv.URL+"/invoices/lookup?lang=en&code="+inv.LookupCode)
		wantIn(t, en.body, "VAT invoice", "Seller", "Buyer", "Invoice number", "Total payment", `data-status="issued">Issued<`, "Download the invoice (PDF)")

		pdf := get(t, nil, b.srv.URL+"/invoices/lookup/"+inv.LookupCode+"/pdf")
		if pdf.status != http.StatusOK || pdf.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(pdf.body, "%PDF-") {
			t.Fatalf("PDF: %d %s %.20q", pdf.status, pdf.header.Get("Content-Type"), pdf.body)
		}
		if cd := pdf.header.Get("Content-Disposition"); cd != `inline; filename="1C26TAA-1.pdf"` {
			t.Errorf("PDF's Content-Disposition %q", cd)
		}
		if text := pdfText(t, pdf.body); text != "" {
			wantIn(t, text, "HÓA ĐƠN GIÁ TRỊ GIA TĂNG", "Số: 1", "Nguyễn Văn Đức", "Mã tra cứu: "+inv.LookupCode,
				"Tra cứu hóa đơn tại: https://recon.example.vn/invoices/lookup", "Một trăm mười nghìn đồng")
		}
		xml := get(t, nil, b.srv.URL+"/invoices/lookup/"+inv.LookupCode+"/xml")
		if xml.status != http.StatusOK || xml.body != "<HDon>signed</HDon>" || !strings.HasPrefix(xml.header.Get("Content-Type"), "application/xml") {
			t.Fatalf("XML: %d %s %q", xml.status, xml.header.Get("Content-Type"), xml.body)
		}
	})
}

// A replacement's page and PDF name the original; the original shows as
// replaced; a cancelled invoice shows as cancelled with its reason.
func TestLookupCorrections(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, nil)
		ctx := context.Background()
		orig := b.issue(t, content("Nguyễn Văn Đức"), "<HDon>1</HDon>")
		rep := content("Nguyễn Văn Đức")
		rep.Relation, rep.Buyer.Address = recon.InvoiceRelReplace, "Hà Nội, Việt Nam"
		rep, err := b.db.CorrectInvoice(ctx, b.tenant, orig.ReferenceCode, rep, "sandbox", at)
		if err != nil {
			t.Fatal(err)
		}
		wantIn(t, get(t, nil, b.srv.URL+"/invoices/lookup?code="+orig.LookupCode).body, `data-status="replaced">Đã bị thay thế<`)
		a := get(t, nil, b.srv.URL+"/invoices/lookup?code="+rep.LookupCode)
		wantIn(t, a.body, `id="number">2<`, `data-status="pending">Đang gửi cơ quan thuế<`,
			"Hóa đơn này thay thế hóa đơn ký hiệu 1C26TAA số 1 ngày 26/11/2026")
		if strings.Contains(a.body, "/xml") {
			t.Error("an invoice without its signed XML links to it")
		}
		if x := get(t, nil, b.srv.URL+"/invoices/lookup/"+rep.LookupCode+"/xml"); x.status != http.StatusNotFound {
			t.Errorf("XML of an invoice without one: %d", x.status)
		}
		wantIn(t, get(t, nil, b.srv.URL+"/invoices/lookup?lang=en&code="+rep.LookupCode).body,
			"This invoice replaces invoice 1C26TAA no. 1 of 26/11/2026")
		if text := pdfText(t, get(t, nil, b.srv.URL+"/invoices/lookup/"+rep.LookupCode+"/pdf").body); text != "" {
			wantIn(t, text, "Hóa đơn này thay thế hóa đơn ký hiệu 1C26TAA số 1 ngày 26/11/2026")
		}

		other := b.issue(t, content("Trần Thị Hoa"), "")
		if _, err := b.db.CancelInvoice(ctx, b.tenant, other.ReferenceCode, "Sai tên người mua", at); err != nil {
			t.Fatal(err)
		}
		wantIn(t, get(t, nil, b.srv.URL+"/invoices/lookup?code="+other.LookupCode).body,
			`data-status="cancelled">Đã hủy<`, "Sai tên người mua")
		if text := pdfText(t, get(t, nil, b.srv.URL+"/invoices/lookup/"+other.LookupCode+"/pdf").body); text != "" {
			wantIn(t, text, "ĐÃ HỦY", "Lý do: Sai tên người mua")
		}
	})
}

// A request the server refuses before the page (another method, a NUL in
// the query) gets the page with the refusal, not another surface's JSON.
func TestLookupRefusedRequests(t *testing.T) {
	b := setup(t, sqlstore.EngineSQLite, nil)
	res, err := http.Post(b.srv.URL+"/invoices/lookup", "application/x-www-form-urlencoded", strings.NewReader("code=X"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("POST: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	wantIn(t, string(body), `data-error="error"`, "POST")
	a := get(t, nil, b.srv.URL+"/invoices/lookup?code=%00")
	if a.status != http.StatusBadRequest {
		t.Errorf("NUL: %d", a.status)
	}
	wantIn(t, html.UnescapeString(a.body), `data-error="error"`, "U+0000")
	a = get(t, nil, b.srv.URL+"/invoices/nothing")
	if a.status != http.StatusNotFound {
		t.Errorf("no route: %d", a.status)
	}
	wantIn(t, a.body, `data-error="not_found"`)
}

// A test mode's invoice is found too (the code is the only key) and says
// it has no legal value, on the page and in the PDF; a live one does not.
func TestLookupTestModeInvoice(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, nil)
		live := b.issue(t, content("Nguyễn Văn Đức"), "<HDon/>")
		tt, err := b.db.TestTenant(context.Background(), b.tenant.ID())
		if err != nil {
			t.Fatal(err)
		}
		b.tenant = tt.ID
		test := b.issue(t, content("Nguyễn Văn Đức"), "<HDon/>")
		wantIn(t, get(t, nil, b.srv.URL+"/invoices/lookup?code="+test.LookupCode).body, `id="test"`, "không có giá trị pháp lý")
		wantIn(t, get(t, nil, b.srv.URL+"/invoices/lookup?lang=en&code="+test.LookupCode).body, "it has no legal value")
		if a := get(t, nil, b.srv.URL+"/invoices/lookup?code="+live.LookupCode); strings.Contains(a.body, `id="test"`) {
			t.Error("a live invoice is called a test one")
		}
		if text := pdfText(t, get(t, nil, b.srv.URL+"/invoices/lookup/"+test.LookupCode+"/pdf").body); text != "" {
			wantIn(t, text, "THỬ NGHIỆM")
		}
		if text := pdfText(t, get(t, nil, b.srv.URL+"/invoices/lookup/"+live.LookupCode+"/pdf").body); strings.Contains(text, "THỬ NGHIỆM") {
			t.Error("a live invoice's PDF is stamped as a test")
		}
	})
}

// An unknown code, a malformed one and a draft's get the same 404 on the
// page, the PDF and the XML.
func TestLookupNotFoundIsOneAnswer(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, nil)
		draft, err := b.db.CreateInvoice(context.Background(), b.tenant, content("Nguyễn Văn Đức"), false, "", at)
		if err != nil {
			t.Fatal(err)
		}
		if draft.LookupCode == "" {
			t.Fatal("the draft has no lookup code: the test would not test it")
		}
		known := b.issue(t, content("Lê Văn Tám"), "<HDon/>")
		unknown := strings.Repeat("A", len(known.LookupCode))
		codes := []string{unknown, draft.LookupCode, "ABC", strings.Repeat("K", 65), "abc.def", "<script>", "%2e%2e", "a b", ""}
		var want string
		for _, code := range codes {
			a := get(t, nil, b.srv.URL+"/invoices/lookup?code="+url.QueryEscape(code))
			if a.status != http.StatusNotFound {
				t.Errorf("code %q: %d, want 404", code, a.status)
			}
			// The page echoes the code in its field and its language
			// link; the rest is one page.
			body := echoed.ReplaceAllString(a.body, `$1"CODE"`)
			if want == "" {
				want = body
				wantIn(t, body, `data-error="not_found"`, "Không tìm thấy hóa đơn")
			} else if body != want {
				t.Errorf("code %q answers another page:\n%s\nthan:\n%s", code, body, want)
			}
		}
		var wantDoc string
		for _, code := range codes[:len(codes)-1] {
			for _, doc := range []string{"pdf", "xml"} {
				a := get(t, nil, b.srv.URL+"/invoices/lookup/"+url.PathEscape(code)+"/"+doc)
				if a.status != http.StatusNotFound {
					t.Errorf("%s of code %q: %d, want 404", doc, code, a.status)
					continue
				}
				if wantDoc == "" {
					wantDoc = a.body
				} else if a.body != wantDoc {
					t.Errorf("%s of code %q answers another page:\n%s", doc, code, a.body)
				}
			}
		}
	})
}

// echoed finds where the page echoes the code.
var echoed = regexp.MustCompile(`(id="code" value=|id="other-lang" href=)"[^"]*"`)

// The page is rate limited per remote address: the third lookup from one
// address is refused with Retry-After, another address still looks up.
func TestLookupRateLimitedPerAddress(t *testing.T) {
	clk := testkit.NewClock(at)
	b := setup(t, sqlstore.EngineSQLite, web.NewRateLimiter(0.01, 2).WithClock(clk))
	inv := b.issue(t, content("Nguyễn Văn Đức"), "<HDon/>")
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	one, two := from("127.0.0.1"), from("127.0.0.2")
	for i, u := range []string{"/invoices/lookup?code=" + inv.LookupCode, "/invoices/lookup/" + inv.LookupCode + "/pdf"} {
		if a := get(t, one, b.srv.URL+u); a.status != http.StatusOK {
			t.Fatalf("request %d: %d", i, a.status)
		}
	}
	a := get(t, one, b.srv.URL+"/invoices/lookup/"+inv.LookupCode+"/xml")
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
		t.Fatalf("third request: %d, Retry-After %q", a.status, a.header.Get("Retry-After"))
	}
	wantIn(t, a.body, `data-error="rate_limited"`)
	if a := get(t, one, b.srv.URL+"/invoices/lookup?code=NOSUCHCODE23"); a.status != http.StatusTooManyRequests {
		t.Errorf("an unknown code past the limit: %d, want 429", a.status)
	}
	if a := get(t, one, b.srv.URL+"/invoices/lookup"); a.status != http.StatusOK {
		t.Errorf("the bare form past the limit: %d, want 200", a.status)
	}
	if a := get(t, two, b.srv.URL+"/invoices/lookup?code="+inv.LookupCode); a.status != http.StatusOK {
		t.Errorf("another address: %d, want 200", a.status)
	}
}

// pdfText extracts a PDF's text with poppler's pdftotext, "" when it is
// not installed (package invoicepdf's tests check the text), unless
// RECON_TEST_REQUIRE_POPPLER is set (CI).
func pdfText(t *testing.T, pdf string) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("RECON_TEST_REQUIRE_POPPLER") != "" {
			t.Fatal("pdftotext is missing (apt-get install -y poppler-utils)")
		}
		return ""
	}
	path := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(path, []byte(pdf), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
