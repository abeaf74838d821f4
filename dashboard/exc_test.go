package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// Exceptions an accountant can close (docs/dashboard.md, Exceptions an
// accountant can close (issue 22)) on a real server, both engines: the overpayment warning of a
// match, writing off and asking for an underpaid order's remainder, the
// decision history that keeps superseded decisions, the queue's totals and
// memo search, bulk resolution with one confirmation, refusals, tenants and
// modes, and the Vietnamese pages.
func TestDashboardExceptionsClose(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := context.Background()
		live := e.live
		idOf := func(tx string) int64 {
			n, err := strconv.ParseInt(tx, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		over := e.checkout(t, live, "INV-OVER", 100000, "Đơn INV-OVER")
		xOver := idOf(e.pay(t, live, testkit.Typo(over), 150000))
		exact := e.checkout(t, live, "INV-EXACT", 80000, "Đơn INV-EXACT")
		xExact := idOf(e.pay(t, live, testkit.Typo(exact), 80000))
		short := e.checkout(t, live, "INV-SHORT", 200000, "Đơn INV-SHORT")
		uShort := idOf(e.pay(t, live, short, 120000))
		short2 := e.checkout(t, live, "INV-SHORT2", 300000, "Đơn INV-SHORT2")
		uShort2 := idOf(e.pay(t, live, short2, 100000))
		var bulk []int64
		for _, m := range []string{"LAI TIEN GUI BULK A", "LAI TIEN GUI BULK B", "LAI TIEN GUI BULK C"} {
			bulk = append(bulk, idOf(e.transfer(t, live, 1000, m)))
		}
		path := func(id int64) string { return fmt.Sprint("/dashboard/exceptions/", id) }
		boss := e.signedIn(t, "boss@saomai.vn")

		t.Run("OverpaymentWarning", func(t *testing.T) {
			resolve := func(id int64, invoice string) string {
				return withQuery(path(id)+"/resolve", url.Values{"resolve": {"match"}, "invoice": {invoice}, "note": {"gõ nhầm mã"}})
			}
			status, body := boss.Get(resolve(xOver, "INV-OVER"))
			if status != 200 || !strings.Contains(body, `id="confirm-warning"`) ||
				!strings.Contains(body, "this transfer of 150,000 VND is more than order INV-OVER still lacks (100,000 VND). 50,000 VND would be paid beyond") {
				t.Fatalf("overpayment: %d %s", status, body)
			}
			for _, ok := range [][2]any{{xExact, "INV-EXACT"}, {xOver, "INV-SHORT2"}} { // 150,000 of the 200,000 INV-SHORT2 lacks
				if status, body := boss.Get(resolve(ok[0].(int64), ok[1].(string))); status != 200 || strings.Contains(body, "confirm-warning") {
					t.Errorf("no overpayment (%v): %d, a warning", ok, status)
				}
			}
			boss.Do("GET", "/dashboard/lang/vi?back=/dashboard", nil, nil)
			defer boss.Do("GET", "/dashboard/lang/en?back=/dashboard", nil, nil)
			if _, body := boss.Get(resolve(xOver, "INV-OVER")); !strings.Contains(body, "Trả thừa: giao dịch 150.000 ₫ lớn hơn số tiền đơn hàng INV-OVER còn thiếu (100.000 ₫). Sẽ thừa 50.000 ₫") {
				t.Errorf("Vietnamese warning: %s", body)
			}
		})

		t.Run("WriteOff", func(t *testing.T) {
			_, body := boss.Get(path(uShort))
			if !strings.Contains(body, `id="pick-write-off"`) || !strings.Contains(body, `<span class="num" id="remainder">80,000 VND</span>`) || !strings.Contains(body, `id="pick-ask"`) {
				t.Fatalf("underpaid page: %s", body)
			}
			// Not for an unmatched transfer: no choice, and a typed one is refused.
			if _, body := boss.Get(path(xExact)); strings.Contains(body, "pick-write-off") {
				t.Error("an unmatched transfer offers a write-off")
			}
			status, body := boss.Get(withQuery(path(xExact)+"/resolve", url.Values{"resolve": {"write_off"}, "note": {"x"}}))
			if status != http.StatusConflict || !strings.Contains(body, "Only an underpaid transfer") {
				t.Errorf("write-off of an unmatched transfer: %d %s", status, body)
			}
			q := withQuery(path(uShort)+"/resolve", url.Values{"resolve": {"write_off"}, "note": {"khách được giảm giá"}})
			_, page := boss.Get(q)
			for _, want := range []string{`id="c-written-off" class="memo">80,000 VND`, "ORDER_PAID → ", "INV-SHORT"} {
				if !strings.Contains(page, want) {
					t.Errorf("write-off's confirmation lacks %q: %s", want, page)
				}
			}
			if status, loc, body := boss.Confirm(q); status != http.StatusSeeOther || loc != path(uShort) {
				t.Fatalf("write-off: %d %s %s", status, loc, body)
			}
			if s := e.orderStatus(t, live, "INV-SHORT"); s != recon.OrderCaptured {
				t.Fatalf("INV-SHORT: %s", s)
			}
			// The IPN says what a paid order says: the order's amount, the
			// money received.
			testkit.WaitFor(t, "ORDER_PAID of INV-SHORT", 10*time.Second, func() bool {
				for _, p := range e.rc.IPNs("ORDER_PAID") {
					o, tx := p["order"].(map[string]any), p["transaction"].(map[string]any)
					if o["order_invoice_number"] == "INV-SHORT" {
						return o["order_status"] == "CAPTURED" && o["order_amount"] == "200000.00" && tx["transaction_amount"] == "120000.00"
					}
				}
				return false
			})
			_, body = boss.Get(path(uShort))
			for _, want := range []string{"Remainder written off", `id="res-written-off">80,000 VND`, "khách được giảm giá", "boss@saomai.vn"} {
				if !strings.Contains(body, want) {
					t.Errorf("after the write-off the page lacks %q", want)
				}
			}
		})

		t.Run("AskRemainder", func(t *testing.T) {
			acct := e.signedIn(t, "ketoan@saomai.vn")
			q := withQuery(path(uShort2)+"/resolve", url.Values{"resolve": {"ask_remainder"}, "note": {"nhắc khách trả nốt"}})
			if _, page := acct.Get(q); !strings.Contains(page, `id="c-asked" class="memo">200,000 VND`) {
				t.Errorf("ask's confirmation: %s", page)
			}
			if status, loc, body := acct.Confirm(q); status != http.StatusSeeOther || loc != path(uShort2) {
				t.Fatalf("ask: %d %s %s", status, loc, body)
			}
			x, err := e.db.Exception(ctx, live.id, uShort2)
			if err != nil || x.Resolution != nil || len(x.Decisions) != 1 || x.Decisions[0].VANumber == "" || x.Decisions[0].Amount != 200000 {
				t.Fatalf("after the ask: %+v %v", x, err)
			}
			va := x.Decisions[0].VANumber
			_, body := acct.Get(path(uShort2))
			for _, want := range []string{"Remainder asked for", `class="memo h-va">` + va, "/dashboard/order/va-qr.png?invoice=INV-SHORT2&amp;va=" + va, "the exception stays open", `id="resolve"`} {
				if !strings.Contains(body, want) {
					t.Errorf("after the ask the page lacks %q", want)
				}
			}
			resp, _ := acct.Do("GET", "/dashboard/order/va-qr.png?invoice=INV-SHORT2&va="+va, nil, nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
				t.Errorf("the asked account's QR: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			// Then ignored: both decisions stay in the history.
			if status, _, body := acct.Confirm(withQuery(path(uShort2)+"/resolve", url.Values{"resolve": {"ignore"}, "note": {"khách không trả"}})); status != http.StatusSeeOther {
				t.Fatalf("ignore: %d %s", status, body)
			}
			_, body = acct.Get(path(uShort2))
			hist := body[strings.Index(body, `id="history"`):]
			if i, j := strings.Index(hist, "Remainder asked for"), strings.Index(hist, "khách không trả"); i < 0 || j < i {
				t.Errorf("history after closing: %s", body)
			}
		})

		t.Run("HistoryKeepsSuperseded", func(t *testing.T) {
			q := withQuery(path(xExact)+"/resolve", url.Values{"resolve": {"match"}, "invoice": {"INV-EXACT"}, "note": {"gõ nhầm mã"}})
			if status, _, body := boss.Confirm(q); status != http.StatusSeeOther {
				t.Fatalf("match: %d %s", status, body)
			}
			_, body := boss.Get(path(xExact))
			hist := body[strings.Index(body, `id="history"`):]
			queued, manual, person := strings.Index(hist, `class="h-queued"`), strings.Index(hist, `class="h-decision"`), strings.Index(hist, "gõ nhầm mã")
			if queued < 0 || manual < queued || person < manual || !strings.Contains(hist, "no order with payment code "+testkit.Typo(exact)) {
				t.Fatalf("history: %s", hist)
			}
			// Times in the business zone.
			x, _ := e.db.Exception(ctx, live.id, xExact)
			if when := x.Decisions[0].CreatedAt.In(e.loc).Format("2006-01-02 15:04:05"); !strings.Contains(hist, "<time>"+when+"</time>") {
				t.Errorf("the decision's time %s (business zone) is not shown: %s", when, hist)
			}
		})

		t.Run("TotalsAndMemo", func(t *testing.T) {
			status, body := boss.Get("/dashboard/exceptions?q=bulk")
			if status != 200 || !strings.Contains(body, `<span id="total-count">3</span>`) || !strings.Contains(body, `id="total-amount">3,000 VND`) {
				t.Fatalf("memo search's totals: %d %s", status, body)
			}
			for _, id := range bulk {
				if !strings.Contains(body, `href="`+path(id)+`"`) {
					t.Errorf("memo search lacks %d", id)
				}
			}
			if strings.Contains(body, `href="`+path(xOver)+`"`) {
				t.Error("memo search lists another memo")
			}
			// Without a filter, per kind.
			_, body = boss.Get("/dashboard/exceptions")
			if !regexp.MustCompile(`id="total-unmatched">.*Unmatched.*</span> \d+ · <span class="num">[0-9,]+ VND`).MatchString(body) {
				t.Errorf("totals per kind: %s", body)
			}
			if status, body := boss.Get("/dashboard/exceptions?q=" + strings.Repeat("x", 101)); status != http.StatusBadRequest || !strings.Contains(body, "at most 100 characters") {
				t.Errorf("a long memo search: %d", status)
			}
		})

		t.Run("Bulk", func(t *testing.T) {
			bulkPath := func(ids []string, action, note string) string {
				return withQuery("/dashboard/exceptions/bulk", url.Values{"id": ids, "bulk_action": {action}, "note": {note}})
			}
			ids := make([]string, len(bulk))
			for i, id := range bulk {
				ids[i] = fmt.Sprint(id)
			}
			// Refused before anything is done: 400 with the reason, the rows still ticked.
			otherX, testX := fmt.Sprint(e.otherTx), fmt.Sprint(e.testTx)
			for _, bad := range []struct {
				path, want string
			}{
				{bulkPath(nil, "ignore", "x"), "Tick at least one exception"},
				{bulkPath(ids, "match", "x"), "Choose a decision from the list"},
				{bulkPath(ids, "ignore", " "), "Say why in the note"},
				{bulkPath([]string{"abc"}, "ignore", "x"), "Tick at least one exception"},
				{bulkPath([]string{ids[0], ids[0]}, "ignore", "x"), "Tick at least one exception"},
				{bulkPath([]string{ids[0], otherX}, "ignore", "x"), "Not found among this company"},
				{bulkPath([]string{ids[0], testX}, "ignore", "x"), "Not found among this company"},
			} {
				status, body := boss.Get(bad.path)
				if status != http.StatusBadRequest || !strings.Contains(body, bad.want) {
					t.Errorf("%s: %d, want %q", bad.path, status, bad.want)
				}
			}
			if status, body := boss.Get(bulkPath([]string{ids[0], "abc"}, "ignore", "x")); status != 400 || !strings.Contains(body, `id="pick-`+ids[0]+`" checked`) {
				t.Errorf("a refused bulk step forgets the ticked rows: %d", status)
			}
			member := e.signedIn(t, "nhanvien@saomai.vn")
			if status, _ := member.Get(bulkPath(ids, "ignore", "x")); status != http.StatusForbidden {
				t.Errorf("a Member's bulk step: %d", status)
			}
			// A POST without the confirmation shows the page and does nothing.
			status, _, body := boss.PostFrom("/dashboard/exceptions", "/dashboard/exceptions/bulk", url.Values{"id": ids, "bulk_action": {"ignore"}, "note": {"x"}})
			if status != 200 || !strings.Contains(body, `id="confirm-button"`) {
				t.Fatalf("unconfirmed bulk POST: %d %s", status, body)
			}
			// One confirmation listing each, then each its own decision.
			p := bulkPath(ids, "ignore", "lãi tiền gửi, không phải đơn hàng")
			_, page := boss.Get(p)
			for _, id := range ids {
				if !strings.Contains(page, `id="c-x-`+id+`"`) || !strings.Contains(page, "LAI TIEN GUI BULK") {
					t.Errorf("the confirmation lacks %s: %s", id, page)
				}
			}
			if !strings.Contains(page, `id="c-count" class="memo">3</dd>`) {
				t.Errorf("the confirmation's count: %s", page)
			}
			status, _, body = boss.Confirm(p)
			if status != 200 || !strings.Contains(body, `id="bulk-result"`) {
				t.Fatalf("bulk: %d %s", status, body)
			}
			seen := map[int64]bool{}
			for _, id := range bulk {
				if !strings.Contains(body, fmt.Sprintf(`id="bulk-%d"`, id)) {
					t.Errorf("the result lacks %d", id)
				}
				x, err := e.db.Exception(ctx, live.id, id)
				if err != nil || x.Resolution == nil || x.Resolution.Action != recon.ResolveIgnore || seen[x.Resolution.ID] || x.Resolution.UserEmail != "boss@saomai.vn" {
					t.Fatalf("%d after the bulk: %+v %v", id, x, err)
				}
				seen[x.Resolution.ID] = true
			}
			// Each decision is in the audit log, one entry per exception.
			entries, _, err := e.db.AuditEntries(ctx, live.id, recon.AuditFilter{Action: recon.AuditExceptionDecision, Page: 1, PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				n := 0
				for _, a := range entries {
					if a.Object == "exception "+id {
						n++
					}
				}
				if n != 1 {
					t.Errorf("exception %s has %d audit entries, want 1", id, n)
				}
			}
			// Again: each refused as already resolved, shown per row.
			status, _, body = boss.Confirm(p)
			if status != 200 || strings.Count(body, "Already resolved.") != 3 {
				t.Errorf("a second bulk: %d %s", status, body)
			}
		})

		t.Run("Vietnamese", func(t *testing.T) {
			boss.Do("GET", "/dashboard/lang/vi?back=/dashboard", nil, nil)
			defer boss.Do("GET", "/dashboard/lang/en?back=/dashboard", nil, nil)
			for _, p := range []string{"/dashboard/exceptions", "/dashboard/exceptions?status=resolved", path(uShort), path(uShort2), path(xExact),
				withQuery(path(xOver)+"/resolve", url.Values{"resolve": {"match"}, "invoice": {"INV-OVER"}, "note": {"x"}})} {
				status, body := boss.Get(p)
				if status != 200 || !strings.Contains(body, `lang="vi"`) {
					t.Fatalf("%s: %d", p, status)
				}
				for _, en := range dashboard.ExcEnglish() {
					if strings.Contains(body, en) {
						t.Errorf("%s shows the English %q", p, en)
					}
				}
			}
			// Refusals read in Vietnamese too.
			for p, want := range map[string]string{
				withQuery(path(xOver)+"/resolve", url.Values{"resolve": {"match"}, "invoice": {"INV-NOPE"}, "note": {"x"}}):  "Hãy nhập mã hóa đơn của một đơn hàng có thật",
				withQuery(path(xOver)+"/resolve", url.Values{"resolve": {"match"}, "invoice": {"INV-SHORT"}, "note": {"x"}}): "Đơn hàng này không còn chờ thanh toán",
				withQuery(path(xOver)+"/resolve", url.Values{"resolve": {"write_off"}, "note": {"x"}}):                       "Chỉ có thể xóa nợ hoặc yêu cầu trả phần còn thiếu",
				withQuery(path(xOver)+"/resolve", url.Values{"resolve": {"ignore"}, "note": {" "}}):                          "Hãy ghi lý do",
				withQuery("/dashboard/exceptions/bulk", url.Values{"bulk_action": {"ignore"}, "note": {"x"}}):                "Hãy chọn ít nhất một ngoại lệ",
			} {
				if status, body := boss.Get(p); status < 400 || status > 499 || !strings.Contains(body, want) {
					t.Errorf("%s: %d, want %q", p, status, want)
				}
			}
		})
	})
}
