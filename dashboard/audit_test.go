package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// The audit log (docs/dashboard.md, Audit log), both engines: each covered
// family of changes made on the dashboard writes its entry (who, what,
// before and after, the address and user agent), the page shows them in
// Vietnamese in the business time zone, a secret's value is never in an
// entry, and another company, the other mode and a Member see none.
func TestDashboardAuditLog(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSettingsEnv(t, engine)
		ctx := context.Background()
		boss := e.signedIn(t, "boss@saomai.vn")
		boss.Get("/dashboard/lang/vi?back=/dashboard/")
		var secrets []string // every secret the changes below showed once
		saved := func(what string, status int, body string) {
			t.Helper()
			if status != http.StatusSeeOther && status != http.StatusOK {
				t.Fatalf("%s: %d %s", what, status, body)
			}
			if m := newSecretField.FindStringSubmatch(body); m != nil {
				secrets = append(secrets, m[1])
			}
		}
		exc := e.transfer(t, e.live, 4321, "KHONG RO NOI DUNG")
		for _, c := range []struct {
			action string
			do     func()
			object string   // in the entry's row
			shows  []string // in the entry's changes
		}{
			{recon.AuditFormatsUpdate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/formats", url.Values{"f0_prefix": {"SM"}, "f0_suffix_from": {"4"},
					"f0_suffix_to": {"8"}, "f0_character_type": {"NumberOnly"}, "f0_active": {"1"}})
				saved("formats", status, body)
			}, "", []string{"DH 6-10 NumberOnly", "SM 4-8 NumberOnly"}},
			{recon.AuditSellerUpdate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/seller", url.Values{"legal_name": {"Công ty TNHH Sao Mai"}, "tax_code": {"0100112437"},
					"address": {"1 Lý Thường Kiệt, Hà Nội"}, "invoice_template": {"1"}, "invoice_series": {"C26TAA"}})
				saved("seller", status, body)
			}, "", []string{"Mã số thuế", "0100112437"}},
			{recon.AuditIPNUpdate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", url.Values{"ipn_url": {e.rc.URL + "/ipn-moi"}, "auth_type": {recon.AuthSecretKey}, "active": {"1"}})
				saved("ipn", status, body)
			}, "ipn", []string{"/ipn-moi"}},
			{recon.AuditSecretRotate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/ipn-secret", url.Values{})
				saved("ipn secret", status, body)
			}, "ipn", []string{"Khóa bí mật: đã đổi"}},
			{recon.AuditMerchantRotate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/merchant-secret", url.Values{})
				saved("merchant secret", status, body)
			}, e.live.merchantID, []string{"đã đổi"}},
			{recon.AuditUserCreate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/users", url.Values{"email": {"moi@saomai.vn"}, "role": {"Member"}, "password": {"mat-khau-bi-mat-1"}})
				saved("user", status, body)
			}, "moi@saomai.vn", []string{"Vai trò: Thành viên"}},
			{recon.AuditUserRole, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/user-role", url.Values{"user": {e.userIDs["nhanvien@saomai.vn"]}, "role": {"Accountant"}, "permission": {recon.PermViewTransactions}})
				saved("role", status, body)
			}, "nhanvien@saomai.vn", []string{"<del>Thành viên</del> → Kế toán", "view_transactions"}},
			{recon.AuditUserInvite, func() {
				status, _, body := boss.PostFrom("/dashboard/users", "/dashboard/users/invite", url.Values{"email": {"moi2@saomai.vn"}, "role": {"Accountant"}, "lang": {"vi"}})
				saved("invite", status, body)
			}, "moi2@saomai.vn", []string{"Vai trò: Kế toán"}},
			{recon.AuditUserDeactivate, func() {
				status, _, body := boss.Confirm("/dashboard/users/" + e.userIDs["nhanvien@saomai.vn"] + "/deactivate")
				saved("deactivate", status, body)
			}, "nhanvien@saomai.vn", []string{"Vô hiệu hóa người dùng"}},
			{recon.AuditUserPassword, func() {
				status, _, body := boss.PostFrom("/dashboard/account", "/dashboard/account/password", url.Values{"current": {dashPassword}, "new": {"mat-khau-moi-bi-mat"}, "confirm_new": {"mat-khau-moi-bi-mat"}})
				saved("password", status, body)
			}, "boss@saomai.vn", []string{"Mật khẩu: đã đổi"}},
			{recon.AuditClientCreate, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/clients", url.Values{"name": {"Máy chủ cửa hàng"}, "scope": {recon.ScopeCompany}})
				saved("client", status, body)
			}, "", []string{"Máy chủ cửa hàng"}},
			{recon.AuditRefundThreshold, func() {
				status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/refund-threshold", url.Values{"threshold": {"100000"}})
				saved("threshold", status, body)
			}, "", []string{"100.000 ₫"}},
			{recon.AuditRefundRequest, func() {
				f := refundForm("order", "INV-PAID", "amount", "50000", "confirm", "yes")
				status, _, body := boss.PostFrom("/dashboard/refund/new?order=INV-PAID", "/dashboard/refund/new", f)
				saved("refund", status, body)
			}, "refund ", []string{"50.000 ₫", "Khách trả hàng"}},
			{recon.AuditExceptionDecision, func() {
				status, _, body := boss.Confirm("/dashboard/exceptions/" + exc + "/resolve?" + url.Values{"resolve": {"ignore"}, "note": {"tiền thử"}}.Encode())
				saved("resolve", status, body)
			}, "exception " + exc, []string{"Bỏ qua", "tiền thử"}},
		} {
			c.do()
			list, _, err := e.db.AuditEntries(ctx, e.live.id, recon.AuditFilter{Action: c.action, Page: 1, PerPage: 10})
			if err != nil || len(list) == 0 {
				t.Fatalf("%s: no entry (%v)", c.action, err)
			}
			got := list[0]
			if got.Actor.Email != "boss@saomai.vn" || got.Actor.Via != recon.AuditViaDashboard || got.Actor.IP != "127.0.0.1" || got.Actor.UserAgent == "" ||
				!strings.HasPrefix(got.Object, c.object) {
				t.Errorf("%s: entry %+v", c.action, got)
			}
			_, page := boss.Get("/dashboard/audit?" + url.Values{"family": {recon.AuditFamily(c.action)}}.Encode())
			for _, s := range c.shows {
				if !strings.Contains(page, s) {
					t.Errorf("%s: the page lacks %q:\n%s", c.action, s, page)
				}
			}
		}
		// The page: Vietnamese, every entry, the business zone's time.
		status, page := boss.Get("/dashboard/audit")
		if status != http.StatusOK || !strings.Contains(page, "Nhật ký thay đổi") || !strings.Contains(page, "Yêu cầu hoàn tiền") ||
			!strings.Contains(page, "Đổi định dạng mã thanh toán") || !strings.Contains(page, "127.0.0.1") || strings.Contains(page, "Refund requested") {
			t.Fatalf("the log: %d %s", status, page)
		}
		// No secret is in an entry: not the ones the settings showed once,
		// not the stored ones, not the new user's password.
		var all strings.Builder
		rows, err := e.db.SQL().QueryContext(ctx, `SELECT object, changes, actor_email, actor_client_id FROM audit_log`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a, b, c, d string
			if err := rows.Scan(&a, &b, &c, &d); err != nil {
				t.Fatal(err)
			}
			all.WriteString(a + b + c + d)
		}
		rows.Close()
		if len(secrets) < 3 {
			t.Fatalf("the changes showed %d secrets, want the IPN's, the merchant's and the client's", len(secrets))
		}
		for _, s := range append(secrets, e.live.secret, "ipn-secret-0123456789", "mat-khau-bi-mat-1", "mat-khau-moi-bi-mat", dashPassword) {
			if strings.Contains(all.String(), s) || strings.Contains(page, s) {
				t.Errorf("a secret in the audit log: %s", s)
			}
		}
		// Filters: refused values are a 400 naming the problem.
		for q, want := range map[string]string{"family=nope": "Hãy chọn một loại thay đổi", "from=hôm-qua": "YYYY-MM-DD", "page=0": "Số trang"} {
			if status, body := boss.Get("/dashboard/audit?" + q); status != http.StatusBadRequest || !strings.Contains(body, want) {
				t.Errorf("%s: %d", q, status)
			}
		}
		if _, body := boss.Get("/dashboard/audit?actor=nobody@x.vn"); !strings.Contains(body, `id="no-entries"`) {
			t.Error("an unknown actor's filter lists entries")
		}
		// Another company's Admin, and the test mode, see none of them.
		other := e.browser(t).SignedIn(e.other.company, "admin@saomai.vn", dashPassword)
		if _, body := other.Get("/dashboard/audit"); !strings.Contains(body, `id="no-entries"`) {
			t.Error("another company sees the entries")
		}
		boss.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"test"}})
		if _, body := boss.Get("/dashboard/audit"); !strings.Contains(body, `id="no-entries"`) || !strings.Contains(body, `id="test-banner"`) {
			t.Error("the test mode sees live entries")
		}
		// Below Admin, the log is not readable.
		member := e.signedIn(t, "ketoan@saomai.vn")
		if status, _ := member.Get("/dashboard/audit"); status != http.StatusForbidden {
			t.Errorf("an Accountant's log: %d", status)
		}
	})
}
