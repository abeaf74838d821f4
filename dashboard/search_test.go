package dashboard_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// searchEnv is a dashEnv with transfers for the search: one paying an
// order, one naming no order, one with an accented memo.
type searchEnv struct {
	*dashEnv
	code                    string // the paid order's payment code
	paidTx, noOrderTx, vnTx string
}

// TestDashboardSearch: the transactions screen's code, matched-state and
// memo filters on a real server, both engines: what each keeps, combined
// with §4.3's, keyset pages, the CSV export, escaping, the refused values
// (400 with the reason on the page), tenants and modes.
func TestDashboardSearch(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := &searchEnv{dashEnv: newDashEnv(t, engine)}
		e.code = e.checkout(t, e.live, "INV-SEARCH", 42000, "Thanh toán đơn hàng INV-SEARCH")
		e.paidTx = e.transfer(t, e.live, 42000, "Thanh toán "+e.code)
		e.noOrderTx = e.transfer(t, e.live, 31000, "chuyen tien DH99999999")
		e.vnTx = e.transfer(t, e.live, 8000, "Nguyễn Văn Bình chuyển khoản tiền nhà")
		b := e.signedIn(t, "boss@saomai.vn")
		t.Run("Filters", func(t *testing.T) { searchFilters(t, e, b) })
		t.Run("Refused", func(t *testing.T) { searchRefused(t, e, b) })
		t.Run("Export", func(t *testing.T) { searchExport(t, e, b) })
		t.Run("TenantsAndModes", func(t *testing.T) { searchTenants(t, e, b) })
	})
}

var rowLink = regexp.MustCompile(`href="/dashboard/transactions/(\d+)"`)

// rowsOf lists the transaction ids a list page links to, in order.
func rowsOf(body string) []string {
	var ids []string
	for _, m := range rowLink.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func searchFilters(t *testing.T, e *searchEnv, b *testkit.Browser) {
	for _, c := range []struct {
		name, query string
		want        []string // ids present
		not         []string // ids absent
		total       string   // the count line, "" when not counted
	}{
		{"code, lower case", "code=" + strings.ToLower(e.code), []string{e.paidTx}, []string{e.noOrderTx, e.vnTx, e.dashEnv.paidTx}, ""},
		{"code naming no order", "code=dh99999999", []string{e.noOrderTx}, []string{e.paidTx}, ""},
		{"matched", "matched=matched", []string{e.paidTx, e.dashEnv.paidTx}, []string{e.noOrderTx, e.vnTx}, `id="total">2 transfers<`},
		{"unmatched", "matched=unmatched", []string{e.noOrderTx, e.vnTx}, []string{e.paidTx, e.dashEnv.paidTx}, `id="total">3 transfers<`},
		{"open exceptions", "matched=exception", []string{e.noOrderTx}, []string{e.paidTx}, ""},
		{"memo without accents", "memo=" + url.QueryEscape("nguyen van binh"), []string{e.vnTx}, []string{e.paidTx, e.noOrderTx}, ""},
		{"memo with accents, another case", "memo=" + url.QueryEscape("TIỀN NHÀ"), []string{e.vnTx}, []string{e.paidTx}, ""},
		{"memo and matched", "memo=chuyen&matched=unmatched", []string{e.noOrderTx, e.vnTx}, []string{e.paidTx}, ""},
		{"memo and amount", "memo=chuyen&amount_in=8000", []string{e.vnTx}, []string{e.noOrderTx}, ""},
		{"memo and a later day", "memo=chuyen&from_date=2099-01-01", nil, []string{e.vnTx, e.noOrderTx}, ""},
	} {
		status, body := b.Get("/dashboard/transactions?" + c.query)
		got := rowsOf(body)
		if status != 200 {
			t.Fatalf("%s: %d %s", c.name, status, body)
		}
		for _, id := range c.want {
			if !strings.Contains(strings.Join(got, " ")+" ", id+" ") {
				t.Errorf("%s: %s missing from %v", c.name, id, got)
			}
		}
		for _, id := range c.not {
			if strings.Contains(strings.Join(got, " ")+" ", id+" ") {
				t.Errorf("%s: %s listed in %v", c.name, id, got)
			}
		}
		if c.total != "" && !strings.Contains(body, c.total) {
			t.Errorf("%s: no %q in %s", c.name, c.total, body)
		}
		// Without an exact total, the page says what it searched.
		if c.total == "" && (!strings.Contains(body, "found on this page (no total") || !strings.Contains(body, `id="searched">Searched `) ||
			!strings.Contains(body, "Nothing older is left to search.")) {
			t.Errorf("%s: the page does not say what it searched: %s", c.name, body)
		}
	}
	// The form keeps the filters.
	_, body := b.Get("/dashboard/transactions?matched=exception&code=dh99999999&memo=chuyen")
	for _, s := range []string{`<option value="exception" selected>`, `name="code" value="dh99999999"`, `name="memo" maxlength="100" value="chuyen"`} {
		if !strings.Contains(body, s) {
			t.Errorf("form: no %q", s)
		}
	}
	// HTML in the search and in the memos found is text.
	_, body = b.Get("/dashboard/transactions?memo=" + url.QueryEscape(`<script>alert("memo")</script>`))
	if strings.Contains(body, `<script>alert`) || !strings.Contains(body, `value="&lt;script&gt;alert(&#34;memo&#34;)&lt;/script&gt;"`) ||
		!strings.Contains(body, "&lt;script&gt;alert(&#34;memo&#34;)") || len(rowsOf(body)) != 1 {
		t.Errorf("HTML search: %s", body)
	}

	// Keyset pages of one: Next continues after the last row, Newest goes back.
	seen := map[string]bool{}
	path := "/dashboard/transactions?matched=unmatched&limit=1"
	for range 10 {
		status, body := b.Get(path)
		ids := rowsOf(body)
		if status != 200 || len(ids) > 1 {
			t.Fatalf("GET %s: %d %v", path, status, ids)
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("%s shown twice", id)
			}
			seen[id] = true
		}
		m := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(body)
		if m == nil {
			break
		}
		if !strings.Contains(body, `id="first"`) && len(seen) > 1 {
			t.Errorf("no Newest link on a later page")
		}
		path = strings.ReplaceAll(m[1], "&amp;", "&")
		if !strings.Contains(path, "before=") || strings.Contains(path, "page=") {
			t.Fatalf("next link %s", path)
		}
	}
	if len(seen) != 3 || !seen[e.noOrderTx] || !seen[e.vnTx] {
		t.Errorf("pages showed %v, want the 3 unmatched", seen)
	}

	// Vietnamese.
	resp, body := b.Do("GET", "/dashboard/transactions?matched=exception", nil, map[string]string{"Accept-Language": "vi"})
	if resp.StatusCode != 200 || !strings.Contains(body, "Ngoại lệ đang mở") || !strings.Contains(body, "Không còn giao dịch cũ hơn để tìm.") {
		t.Errorf("vi: %d %s", resp.StatusCode, body)
	}
}

func searchRefused(t *testing.T, e *searchEnv, b *testkit.Browser) {
	for _, c := range []struct{ query, msg string }{
		{"code=DH-12", "code must be a payment code of 1 to 64 letters and digits"},
		{"code=" + strings.Repeat("9", 65), "code must be a payment code"},
		{"matched=maybe", "matched must be matched, unmatched or exception"},
		{"memo=" + strings.Repeat("ă", 101), "the memo search must be 1 to 100 characters"},
		{"memo=a&before=abc", "before must be a transaction id"},
		{"memo=a&before=" + e.otherTx, "is not among yours"},
		{"memo=a&before=" + e.testTx, "is not among yours"},
		{"memo=a&matched=exception&foo=1", `unknown query parameter &#34;foo&#34;`},
		{"memo=a&memo=b", "query parameter memo is given 2 times"},
		{"code=" + url.QueryEscape("<b>x</b>"), "code must be a payment code"},
	} {
		status, body := b.Get("/dashboard/transactions?" + c.query)
		if status != http.StatusBadRequest || !strings.Contains(body, `id="filter-error">`) || !strings.Contains(body, c.msg) || strings.Contains(body, "<b>x</b>") {
			t.Errorf("%s: %d, want 400 with %q: %s", c.query, status, c.msg, body)
		}
		// The export refuses the same values with the same reason (it
		// starts at the newest, whatever the id before names).
		if strings.Contains(c.query, "before=") && !strings.Contains(c.query, "before=abc") {
			continue
		}
		resp, raw := b.Do("GET", "/dashboard/transactions.csv?"+c.query, nil, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(raw, c.msg) {
			t.Errorf("csv %s: %d %s", c.query, resp.StatusCode, raw)
		}
	}
}

func searchExport(t *testing.T, e *searchEnv, b *testkit.Browser) {
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"matched=unmatched&memo=chuyen", []string{e.vnTx, e.noOrderTx}},
		{"code=" + e.code, []string{e.paidTx}},
		{"matched=matched&limit=1&before=" + e.vnTx, []string{e.paidTx, e.dashEnv.paidTx}}, // an export starts at the newest, whole
		{"memo=nothing+like+this", nil},
	} {
		_, page := b.Get("/dashboard/transactions?" + c.query)
		link := regexp.MustCompile(`href="([^"]+)" id="export"`).FindStringSubmatch(page)
		if link == nil {
			t.Fatalf("%s: no export link", c.query)
		}
		resp, raw := b.Do("GET", strings.ReplaceAll(link[1], "&amp;", "&"), nil, nil)
		recs, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
		if resp.StatusCode != 200 || err != nil || len(recs) == 0 || recs[0][0] != "id" {
			t.Fatalf("%s: %d %v %s", c.query, resp.StatusCode, err, raw)
		}
		var got []string
		for _, r := range recs[1:] {
			got = append(got, r[0])
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("csv %s (%s): %v, want %v", c.query, link[1], got, c.want)
		}
	}
}

func searchTenants(t *testing.T, e *searchEnv, b *testkit.Browser) {
	// Another company's and the test mode's memos never show in live.
	for _, q := range []string{"memo=OTHER+COMPANY", "memo=test-only", "memo=TEST-ONLY&matched=unmatched"} {
		if status, body := b.Get("/dashboard/transactions?" + q); status != 200 || len(rowsOf(body)) != 0 || strings.Contains(body, `<td class="memo">OTHER COMPANY`) {
			t.Errorf("live %s: %d %v", q, status, rowsOf(body))
		}
	}
	// In test mode: the test transfer, and none of live's.
	b2 := e.signedIn(t, "boss@saomai.vn")
	if status, _, _ := b2.PostFrom("/dashboard/transactions", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/transactions"}}); status != http.StatusSeeOther {
		t.Fatalf("switch: %d", status)
	}
	status, body := b2.Get("/dashboard/transactions?memo=test-only&matched=unmatched")
	if ids := rowsOf(body); status != 200 || len(ids) != 1 || ids[0] != e.testTx || !strings.Contains(body, "TEST MODE") {
		t.Errorf("test mode: %d %v", status, ids)
	}
	if _, body := b2.Get("/dashboard/transactions?code=" + e.code); len(rowsOf(body)) != 0 {
		t.Errorf("test mode sees live's code: %v", rowsOf(body))
	}
	if _, body := b2.Get("/dashboard/transactions?matched=unmatched"); !strings.Contains(body, `id="total">1 transfer<`) {
		t.Errorf("test mode's unmatched total: %s", body)
	}
}
