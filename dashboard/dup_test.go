package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// A possible duplicate on the dashboard (docs/statements.md, Possible
// duplicates): its exception offers only duplicate and distinct, in both
// languages, names the first row, and resolving it distinct through the
// confirmation counts it; the transfers list shows its state.
func TestDashboardPossibleDuplicate(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		live := e.live
		first := e.transfer(t, live, 2_500_000, "Trần Thị Bích chuyển tiền hoá đơn 77")
		second := e.transfer(t, live, 2_500_000, "TRAN THI BICH CHUYEN TIEN HOA DON 77")
		id, _ := strconv.ParseInt(second, 10, 64)
		tx, err := e.db.Transaction(context.Background(), live.id, id)
		if err != nil || tx.DupState != recon.DupPossible || fmt.Sprint(tx.DupOf) != first {
			t.Fatalf("second transfer %+v %v", tx, err)
		}
		boss := e.signedIn(t, "boss@saomai.vn")
		path := "/dashboard/exceptions/" + second
		status, body := boss.Get(path)
		for _, want := range []string{`id="pick-duplicate"`, `id="pick-distinct"`, `href="/dashboard/transactions/` + first + `"`, "possible duplicate of transaction " + first} {
			if status != 200 || !strings.Contains(body, want) {
				t.Fatalf("exception page lacks %q: %d %s", want, status, body)
			}
		}
		if strings.Contains(body, `id="pick-refund"`) || strings.Contains(body, `id="pick-ignore"`) {
			t.Fatal("a possible duplicate offers refund or ignore")
		}
		boss.Do("GET", "/dashboard/lang/vi?back=/dashboard", nil, nil)
		if _, body := boss.Get(path); !strings.Contains(body, "Có thể trùng lặp") || !strings.Contains(body, "có thể trùng lặp với giao dịch "+first) {
			t.Errorf("Vietnamese page: %s", body)
		}
		if _, body := boss.Get("/dashboard/transactions"); !strings.Contains(body, `class="badge tx-dup possible">có thể trùng lặp`) {
			t.Errorf("transfers list: %s", body)
		}
		boss.Do("GET", "/dashboard/lang/en?back=/dashboard", nil, nil)
		q := withQuery(path+"/resolve", url.Values{"resolve": {"distinct"}, "note": {"hai lần chuyển thật"}})
		if status, loc, body := boss.Confirm(q); status != http.StatusSeeOther || loc != path {
			t.Fatalf("distinct: %d %s %s", status, loc, body)
		}
		if tx, _ := e.db.Transaction(context.Background(), live.id, id); tx.DupState != recon.DupDistinct {
			t.Fatalf("after: %q", tx.DupState)
		}
	})
}
