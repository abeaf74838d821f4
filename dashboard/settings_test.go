package dashboard_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// The settings, bank accounts and sandbox screens (docs/dashboard.md), both
// engines: what each shows, the changes an Admin makes, what other roles and
// other tenants are refused, CSRF, escaping.
func TestDashboardSettings(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSettingsEnv(t, engine)
		for _, c := range []struct {
			name string
			fn   func(*testing.T, *dashEnv)
		}{{"Settings", dashSettings}, {"IPNTarget", dashIPNTarget}, {"IPNTypes", dashIPNTypes}, {"Users", dashUsers}, {"BankAccounts", dashBankAccounts}, {"Sandbox", dashSandbox},
			{"Refused", dashSettingsRefused}} {
			if !t.Run(c.name, func(t *testing.T) { c.fn(t, e) }) {
				return
			}
		}
	})
}

// newSettingsEnv is newDashEnv with what the settings show besides:
// another Admin in each company (admin@saomai.vn) and the live company's
// merchant credentials.
func newSettingsEnv(t *testing.T, engine string) *dashEnv {
	t.Helper()
	e := newDashEnv(t, engine)
	e.dashUser(t, e.live, "admin@saomai.vn", recon.RoleAdmin)
	e.dashUser(t, e.other, "admin@saomai.vn", recon.RoleAdmin)
	m := recon.NewMerchant(crand.Reader, e.live.id, e.live.id.ID())
	if err := e.db.SetMerchant(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	e.live.merchantID, e.live.secret = m.MerchantID, m.SecretKey
	return e
}

var newSecretField = regexp.MustCompile(`<code id="new-secret">([^<]+)</code>`)

func dashSettings(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	status, body := b.Get("/dashboard/settings")
	if status != 200 || !strings.Contains(body, `id="nav-settings"`) || !strings.Contains(body, `value="DH"`) ||
		!strings.Contains(body, "/ipn</td>") || !strings.Contains(body, "***6789") || strings.Contains(body, "ipn-secret-0123456789") ||
		!strings.Contains(body, e.live.merchantID) || strings.Contains(body, e.live.secret) {
		t.Fatalf("settings: %d %s", status, body)
	}

	// The memo tester: the company's formats, then the formats of the form.
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/try-memo", url.Values{"memo": {"thanh toan dh123456 cam on"}})
	if !strings.Contains(body, `id="found-code">DH123456</dd>`) || !strings.Contains(body, `id="summary"`) || !strings.Contains(body, `id="candidates"`) {
		t.Fatalf("try memo: %s", body)
	}
	status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/try-memo", url.Values{"memo": {"ck HD98765 " + htmlMemo},
		"f0_prefix": {"HD"}, "f0_suffix_from": {"3"}, "f0_suffix_to": {"8"}, "f0_character_type": {"NumberOnly"}, "f0_active": {"1"}})
	if status != 200 || !strings.Contains(body, `id="found-code">HD98765</dd>`) || strings.Contains(body, "<script>alert") ||
		!strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("try memo with edited formats, HTML in the memo: %d %s", status, body)
	}
	status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/try-memo", url.Values{"memo": {"x"},
		"f0_prefix": {"H"}, "f0_suffix_from": {"3"}, "f0_suffix_to": {"8"}, "f0_character_type": {"NumberOnly"}})
	if status != 400 || !strings.Contains(body, `id="memo-error"`) {
		t.Fatalf("try memo with a broken format: %d %s", status, body)
	}

	// Saving formats: a broken one is refused and nothing changes; a good list is stored.
	status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/formats", url.Values{
		"f0_prefix": {"DH"}, "f0_suffix_from": {"6"}, "f0_suffix_to": {"x"}, "f0_character_type": {"NumberOnly"}, "f0_active": {"1"}})
	if status != 400 || !strings.Contains(body, `id="formats-error"`) {
		t.Fatalf("broken format saved: %d %s", status, body)
	}
	status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/formats", url.Values{
		"f0_prefix": {"DH"}, "f0_suffix_from": {"6"}, "f0_suffix_to": {"10"}, "f0_character_type": {"NumberOnly"}, "f0_active": {"1"},
		"f1_prefix": {"hd"}, "f1_suffix_from": {"3"}, "f1_suffix_to": {"8"}, "f1_character_type": {"NumberAndLetter"}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/settings?saved=formats") {
		t.Fatalf("save formats: %d %s", status, loc)
	}
	db := e.db
	id, _ := parseID(e.live.company)
	co, err := db.Company(context.Background(), id)
	if err != nil || len(co.Config.PaymentCodeFormats) != 2 || co.Config.PaymentCodeFormats[1].Prefix != "HD" || co.Config.PaymentCodeFormats[1].IsActive {
		t.Fatalf("stored formats: %+v %v", co, err)
	}

	// Test notification: to the IPN target; a kind without a target is explained.
	status, loc, _ = b.PostFrom("/dashboard/settings", "/dashboard/settings/test-notification", url.Values{"kind": {"ipn"}})
	if status != http.StatusSeeOther || loc != "/dashboard/settings?sent=ipn#targets" {
		t.Fatalf("test notification: %d %s", status, loc)
	}
	if status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/test-notification", url.Values{"kind": {"hub_ipn"}}); status != 400 || !strings.Contains(body, "no active hub_ipn target") {
		t.Fatalf("test notification without a target: %d %s", status, body)
	}

	// Rotations: the new secret is shown once, is what is stored, and is not shown again.
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn-secret", url.Values{})
	m := newSecretField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("IPN rotation shows no secret: %s", body)
	}
	target, err := db.DeliveryTarget(context.Background(), id, recon.DeliveryIPN)
	if err != nil || target.Secret != m[1] || target.Secret == "ipn-secret-0123456789" || !strings.HasSuffix(target.URL, "/ipn") {
		t.Fatalf("stored IPN target %+v %v, shown %s", target, err, m[1])
	}
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/merchant-secret", url.Values{})
	m = newSecretField.FindStringSubmatch(body)
	merchant, err := db.MerchantOf(context.Background(), recon.LiveTenant(id))
	if m == nil || err != nil || merchant.SecretKey != m[1] || merchant.SecretKey == e.live.secret {
		t.Fatalf("merchant rotation: %v %v %s", merchant, err, body)
	}
	e.live.secret = merchant.SecretKey
	if _, body = b.Get("/dashboard/settings"); strings.Contains(body, m[1]) || strings.Contains(body, target.Secret) {
		t.Fatal("a rotated secret is shown again")
	}

	// Test mode: the formats are read-only and their POST is refused; the tester works.
	b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/settings"}})
	_, body = b.Get("/dashboard/settings")
	if !strings.Contains(body, `id="formats-readonly"`) || strings.Contains(body, `id="save-formats"`) || !strings.Contains(body, "test-banner") {
		t.Fatalf("test-mode settings: %s", body)
	}
	if status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/formats", url.Values{"f0_prefix": {"ZZ"}, "f0_suffix_from": {"1"}, "f0_suffix_to": {"3"}, "f0_character_type": {"NumberOnly"}}); status != 403 {
		t.Fatalf("test-mode format edit: %d %s", status, body)
	}
	if _, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/try-memo", url.Values{"memo": {"DH123456"}}); !strings.Contains(body, `id="found-code">DH123456`) {
		t.Fatalf("test-mode tester: %s", body)
	}
	b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/settings"}})
}

func dashUsers(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	db := e.db
	id, _ := parseID(e.live.company)
	// Create a user; a bad address, a short password and a taken address are refused.
	for _, c := range []struct {
		form   url.Values
		status int
	}{
		{url.Values{"email": {"new@saomai.vn"}, "password": {"long enough pw"}, "role": {"Accountant"}, "permission": {"view_transactions"}}, http.StatusSeeOther},
		{url.Values{"email": {"<b>x</b>@saomai.vn"}, "password": {"long enough pw"}, "role": {"Member"}}, 400},
		{url.Values{"email": {"short@saomai.vn"}, "password": {"short"}, "role": {"Member"}}, 400},
		{url.Values{"email": {"new@saomai.vn"}, "password": {"long enough pw"}, "role": {"Member"}}, 409},
		{url.Values{"email": {"boss2@saomai.vn"}, "password": {"long enough pw"}, "role": {"SuperAdmin"}}, 403},
	} {
		if status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/users", c.form); status != c.status {
			t.Fatalf("create user %v: %d, want %d: %s", c.form, status, c.status, body)
		}
	}
	u, err := db.UserByEmail(context.Background(), id, "new@saomai.vn")
	if err != nil || u.Role != recon.RoleAccountant || !u.Can(recon.PermViewTransactions) || u.PasswordHash == "" {
		t.Fatalf("created user %+v %v", u, err)
	}
	// Demote the other Admin (made by newSettingsEnv): allowed; then boss is
	// the last Admin and cannot be demoted, by themselves or anyone.
	other, _ := db.UserByEmail(context.Background(), id, "admin@saomai.vn")
	if status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/user-role", url.Values{"user": {itoa(other.ID)}, "role": {"Accountant"}}); status != http.StatusSeeOther {
		t.Fatalf("demote the other admin: %d %s", status, body)
	}
	status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/user-role", url.Values{"user": {e.userIDs["boss@saomai.vn"]}, "role": {"Member"}})
	if status != http.StatusConflict || !strings.Contains(body, "last Admin") {
		t.Fatalf("demote the last admin: %d %s", status, body)
	}
	if boss, _ := db.UserByEmail(context.Background(), id, "boss@saomai.vn"); boss.Role != recon.RoleAdmin {
		t.Fatalf("the last admin was demoted: %s", boss.Role)
	}
	// Another company's user is 404.
	otherID, _ := parseID(e.other.company)
	stranger, _ := db.UserByEmail(context.Background(), otherID, "admin@saomai.vn")
	if status, _, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/user-role", url.Values{"user": {itoa(stranger.ID)}, "role": {"Member"}}); status != 404 {
		t.Fatalf("other company's user: %d", status)
	}
	if s, _ := db.User(context.Background(), stranger.ID); s.Role != recon.RoleAdmin {
		t.Fatal("another company's user changed")
	}
	// Give it back its role for the next checks.
	if status, _, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/user-role", url.Values{"user": {itoa(other.ID)}, "role": {"Admin"}}); status != http.StatusSeeOther {
		t.Fatal("promote")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(recon.DateTimeLayout, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// upload posts a statement file with the page's CSRF token.
func upload(b *testkit.Browser, account, name, content string) (int, string) {
	b.T.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("csrf", b.CSRF("/dashboard/bank-accounts"))
	_ = w.WriteField("account", account)
	f, _ := w.CreateFormFile("file", name)
	_, _ = f.Write([]byte(content))
	_ = w.Close()
	req, _ := http.NewRequest("POST", b.Base+"/dashboard/bank-accounts/statement", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", b.Base)
	req.Header.Set("Accept-Language", "en")
	resp, err := b.Client.Do(req)
	if err != nil {
		b.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

func dashBankAccounts(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "ketoan@saomai.vn") // Accountant with view_transactions: reads, does not upload
	status, body := b.Get("/dashboard/bank-accounts")
	if status != 200 || !strings.Contains(body, "Vietcombank 0071000123456") || strings.Contains(body, `id="upload-button"`) || strings.Contains(body, "nav-settings") {
		t.Fatalf("bank accounts as Accountant: %d %s", status, body)
	}
	b = e.signedIn(t, "boss@saomai.vn")
	status, body = b.Get("/dashboard/bank-accounts")
	if status != 200 || !strings.Contains(body, `id="upload-button"`) || !strings.Contains(body, `id="account-`+fmt.Sprint(e.live.account)) {
		t.Fatalf("bank accounts: %d %s", status, body)
	}
	db := e.db
	id, _ := parseID(e.live.company)
	count := func() int64 {
		_, n, err := db.Transactions(context.Background(), recon.LiveTenant(id), recon.TransactionFilter{Page: 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	bad := "transaction_date,amount_in,amount_out,transaction_content,reference_number\n" +
		"2026-09-17 08:00:00,150000,,ok row,STMT001\n2026-09-17 08:01:00,abc,,bad amount,STMT002\n2026-13-45 08:03:00,1000,,<i>bad date</i>,STMT003\n"
	status, body = upload(b, fmt.Sprint(e.live.account), "bad.csv", bad)
	if status != 400 || !strings.Contains(body, `id="row-errors"`) || !strings.Contains(body, "Row 3:") || !strings.Contains(body, "Row 4:") ||
		strings.Contains(body, "<i>bad") {
		t.Fatalf("bad statement: %d %s", status, body)
	}
	if n := count(); n != before {
		t.Fatalf("a refused statement stored %d transactions", n-before)
	}
	// Dates more than a day ahead or before 2000: refused, the row named, nothing stored.
	for date, want := range map[string]string{
		"9999-12-31 00:00:00": "row 3: transaction_date 9999-12-31 00:00:00 is more than a day in the future",
		"1999-12-31 00:00:00": "row 3: transaction_date 1999-12-31 00:00:00 is before 2000-01-01",
	} {
		file := "transaction_date,amount_in,amount_out,transaction_content,reference_number\n" +
			"2026-09-17 08:00:00,150000,,ok row,STMT001\n" + date + ",1000,,far,STMT009\n"
		if status, body = upload(b, fmt.Sprint(e.live.account), "dates.csv", file); status != 400 || !strings.Contains(body, want) {
			t.Fatalf("a statement dated %s: %d %s", date, status, body)
		}
		if n := count(); n != before {
			t.Fatalf("a statement dated %s stored %d transactions", date, n-before)
		}
	}
	good := "transaction_date,amount_in,amount_out,transaction_content,reference_number\n2026-09-17 08:00:00,150000,,ok row,STMT001\n2026-09-17 09:00:00,,5000,fee,STMT002\n"
	if status, body = upload(b, fmt.Sprint(e.live.account), "good.csv", good); status != 200 || !strings.Contains(body, `id="upload-done"`) || !strings.Contains(body, `id="result-new">2<`) {
		t.Fatalf("good statement: %d %s", status, body)
	}
	if n := count(); n != before+2 {
		t.Fatalf("stored %d, want 2", n-before)
	}
	// Another company's account, and the test account from live mode: 404, nothing stored.
	for _, acct := range []string{fmt.Sprint(e.other.account), fmt.Sprint(e.test.account), "abc"} {
		if status, _ := upload(b, acct, "good.csv", good); status != 404 {
			t.Errorf("upload to account %s: %d", acct, status)
		}
	}
	// A discontinuity: a reported balance that does not follow.
	in := []recon.TransactionInput{{BankAccountID: e.live.account, TransactionDate: mustTime(t, "2026-09-18 08:00:00"), AmountIn: 1000,
		Content: "gap 1", ReferenceNumber: "GAP1", Accumulated: ptr(int64(1000))},
		{BankAccountID: e.live.account, TransactionDate: mustTime(t, "2026-09-18 09:00:00"), AmountIn: 1000,
			Content: "gap 2", ReferenceNumber: "GAP2", Accumulated: ptr(int64(50000))}} // two memos: not possible duplicates
	if _, err := recon.Ingest(context.Background(), db, recon.LiveTenant(id), in[1].TransactionDate, in); err != nil {
		t.Fatal(err)
	}
	if _, body = b.Get("/dashboard/bank-accounts"); !strings.Contains(body, "missing transactions between") || !strings.Contains(body, "gap 48,000 VND") {
		t.Fatalf("discontinuity: %s", body)
	}
}

func dashSandbox(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	b.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/"}})
	e.checkout(t, e.test, "INV-SANDBOX", 64000, "sandbox order")
	status, body := b.Get("/dashboard/sandbox")
	if status != 200 || !strings.Contains(body, `id="nav-sandbox"`) || !strings.Contains(body, "NGUYEN VAN AN") || !strings.Contains(body, "BANK_ACCOUNT_LINKED") {
		t.Fatalf("sandbox panel: %d %s", status, body)
	}
	// Pay the order: it is captured.
	status, _, body = b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.test.account)}, "invoice": {"INV-SANDBOX"}})
	if status != 200 || !strings.Contains(body, `id="sandbox-done"`) {
		t.Fatalf("pay an order: %d %s", status, body)
	}
	if _, body = b.Get("/dashboard/order?invoice=INV-SANDBOX"); !strings.Contains(body, `id="status">Captured`) {
		t.Fatalf("order after the sandbox payment: %s", body)
	}
	// A plain transfer with HTML in its memo; bad amounts and others' ids.
	if status, _, body = b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.test.account)}, "amount": {"1000"}, "memo": {htmlMemo}}); status != 200 {
		t.Fatalf("transfer: %d %s", status, body)
	}
	for _, f := range []url.Values{{"account": {fmt.Sprint(e.test.account)}, "amount": {"-5"}}, {"account": {fmt.Sprint(e.live.account)}, "amount": {"1000"}}} {
		if status, _, body = b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/transfer", f); status != 400 {
			t.Errorf("transfer %v: %d %s", f, status, body)
		}
	}
	if status, _, _ = b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/transfer", url.Values{"account": {fmt.Sprint(e.test.account)}, "invoice": {"INV-OPEN"}}); status != 404 {
		t.Errorf("pay a live order from test mode: %d", status)
	}
	// A hub event.
	if status, loc, body := b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/hub-event", url.Values{"event": {"LINK_TOKEN_CREATED"}}); status != http.StatusSeeOther || loc != "/dashboard/sandbox?done=event" {
		t.Fatalf("hub event: %d %s %s", status, loc, body)
	}
	if status, _, _ := b.PostFrom("/dashboard/sandbox", "/dashboard/sandbox/hub-event", url.Values{"event": {"NOPE"}}); status != 400 {
		t.Fatalf("unknown hub event: %d", status)
	}
	// Link a bank: a hub company exists now (the event made one); the browser goes to the hosted page.
	_, body = b.Get("/dashboard/bank-accounts")
	xid := regexp.MustCompile(`<option value="([^"]+)">Recon trigger`).FindStringSubmatch(body)
	if xid == nil {
		t.Fatalf("no hub company to link for: %s", body)
	}
	status, loc, _ := b.PostFrom("/dashboard/bank-accounts", "/dashboard/bank-accounts/link", url.Values{"customer": {xid[1]}})
	if status != http.StatusSeeOther || !strings.Contains(loc, "/link/") {
		t.Fatalf("link a bank: %d %s", status, loc)
	}
	b.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/"}})
}

// dashSettingsRefused: CSRF, roles, tenants.
// dashIPNTarget: the IPN target's form saves by the rules of PUT /v1/ipn;
// a refused form changes nothing; a secret this save made is shown once.
func dashIPNTarget(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	db := e.db
	id, _ := parseID(e.live.company)
	stored := func() *recon.Target {
		t.Helper()
		target, err := db.DeliveryTarget(context.Background(), id, recon.DeliveryIPN)
		if err != nil {
			t.Fatal(err)
		}
		return target
	}
	before := stored()
	if _, body := b.Get("/dashboard/settings"); !strings.Contains(body, `id="ipn-url"`) || !strings.Contains(body, `value="`+before.URL+`"`) {
		t.Fatalf("the IPN form does not show the stored URL %s: %s", before.URL, body)
	}
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"ipn_url": {"javascript:alert(1)"}, "auth_type": {"NONE"}, "active": {"1"}}, "ipn_url"},
		{url.Values{"ipn_url": {""}, "auth_type": {"NONE"}}, "ipn_url is required"},
		{url.Values{"ipn_url": {before.URL}, "auth_type": {"<b>BASIC</b>"}}, "auth_type must be SECRET_KEY or NONE"},
	} {
		status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", tc.form)
		if status != 400 || !strings.Contains(body, `id="ipn-error"`) || !strings.Contains(body, tc.want) || strings.Contains(body, "<b>BASIC") {
			t.Fatalf("refused IPN form %v: %d %s", tc.form, status, body)
		}
		if after := stored(); *after != *before {
			t.Fatalf("a refused form changed the target: %+v, was %+v", after, before)
		}
	}
	status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", url.Values{"ipn_url": {before.URL + "?v=2"}, "auth_type": {"NONE"}})
	if got := stored(); status != http.StatusSeeOther || loc != "/dashboard/settings?saved=ipn#targets" ||
		got.URL != before.URL+"?v=2" || got.AuthType != recon.AuthNone || got.Active || got.Secret != "" {
		t.Fatalf("save NONE, inactive: %d %s %+v", status, loc, got)
	}
	// Back to SECRET_KEY: there is no secret, so one is made and shown once.
	_, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", url.Values{"ipn_url": {before.URL}, "auth_type": {"SECRET_KEY"}, "active": {"1"}})
	m := newSecretField.FindStringSubmatch(body)
	got := stored()
	if m == nil || got.Secret != m[1] || got.AuthType != recon.AuthSecretKey || !got.Active || got.URL != before.URL {
		t.Fatalf("save SECRET_KEY: stored %+v, page %s", got, body)
	}
	// Saved again: the secret is kept and not shown.
	status, loc, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", url.Values{"ipn_url": {before.URL}, "auth_type": {"SECRET_KEY"}, "active": {"1"}})
	if again := stored(); status != http.StatusSeeOther || again.Secret != got.Secret || strings.Contains(body, got.Secret) {
		t.Fatalf("save again: %d %s %+v", status, loc, again)
	}
	if _, body = b.Get(loc); !strings.Contains(body, `id="ipn-saved"`) || strings.Contains(body, got.Secret) {
		t.Fatalf("after saving: %s", body)
	}

	// The signing secret (the key of X-Recon-Signature): rotated through a
	// confirmation page, shown once, then masked.
	status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn-signing-secret", url.Values{})
	if again := stored(); status != 200 || !strings.Contains(body, `id="confirm-button"`) || !strings.Contains(body, recon.MaskSecret(got.SigningSecret)) ||
		again.SigningSecret != got.SigningSecret {
		t.Fatalf("rotation without the confirmation: %d %+v %s", status, again, body)
	}
	_, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn-signing-secret", url.Values{"confirm": {"yes"}})
	sm := newSigningField.FindStringSubmatch(body)
	rotated := stored()
	if sm == nil || rotated.SigningSecret != sm[1] || rotated.SigningSecret == got.SigningSecret || rotated.Secret != got.Secret ||
		newSecretField.MatchString(body) {
		t.Fatalf("signing secret rotation: stored %+v, page %s", rotated, body)
	}
	// Its whsec_ form beside it, and until when the replaced one signs
	// (docs/design.md, D7, "Standard Webhooks.").
	if rotated.PreviousSigningSecret != got.SigningSecret || !strings.Contains(body, `id="new-signing-whsec">`+recon.WhsecSecret(sm[1])+`<`) ||
		!strings.Contains(body, `id="new-signing-previous">The previous signing secret still signs, beside the new one, until `+rotated.PreviousUntilText(e.loc)) {
		t.Fatalf("signing secret rotation: stored %+v, page %s", rotated, body)
	}
	if _, body = b.Get("/dashboard/settings"); strings.Contains(body, sm[1]) || !strings.Contains(body, `id="signing-ipn">`+recon.MaskSecret(sm[1])) ||
		strings.Contains(body, recon.WhsecSecret(sm[1])) || !strings.Contains(body, `id="whsec-ipn">`+recon.MaskSecret(recon.WhsecSecret(sm[1]))) ||
		!strings.Contains(body, `id="previous-ipn">The previous signing secret still signs, beside the new one, until `+rotated.PreviousUntilText(e.loc)) {
		t.Fatalf("signing secret shown again, or not masked, or its previous one's end not shown: %s", body)
	}

	// A target made from the dashboard shows its signing secret once, with
	// its secret: the shop needs it to verify X-Recon-Signature.
	moi := &recon.Company{FullName: "Công ty Mới", ShortName: "MOI", Status: recon.CompanyActive}
	if err := db.CreateCompany(context.Background(), moi); err != nil {
		t.Fatal(err)
	}
	newco := fmt.Sprint(moi.ID)
	e.dashUser(t, &tenant{company: newco, id: moi.Tenant()}, "admin@moi.vn", recon.RoleAdmin)
	nb := e.browser(t)
	if status, body := nb.SignIn(newco, "admin@moi.vn", dashPassword); status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", status, body)
	}
	_, _, body = nb.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", url.Values{"ipn_url": {e.rc.URL + "/moi"}, "auth_type": {"SECRET_KEY"}, "active": {"1"}})
	newID, _ := parseID(newco)
	made, err := db.DeliveryTarget(context.Background(), newID, recon.DeliveryIPN)
	m, sm = newSecretField.FindStringSubmatch(body), newSigningField.FindStringSubmatch(body)
	if err != nil || m == nil || sm == nil || made.Secret != m[1] || made.SigningSecret != sm[1] || !strings.Contains(body, "X-Recon-Signature") {
		t.Fatalf("IPN target made from the dashboard: %+v %v, page %s", made, err, body)
	}
	if _, body = nb.Get("/dashboard/settings"); strings.Contains(body, sm[1]) || strings.Contains(body, m[1]) {
		t.Fatalf("the new target's secrets shown again: %s", body)
	}
}

var newSigningField = regexp.MustCompile(`<code id="new-signing-secret">([^<]+)</code>`)

func dashSettingsRefused(t *testing.T, e *dashEnv) {
	boss := e.signedIn(t, "boss@saomai.vn")
	for _, p := range []string{"/dashboard/settings/formats", "/dashboard/settings/try-memo", "/dashboard/settings/users",
		"/dashboard/settings/ipn-secret", "/dashboard/settings/ipn", "/dashboard/sandbox/transfer", "/dashboard/settings/test-notification"} {
		if status, _, _ := boss.Post(p, url.Values{"memo": {"x"}, "kind": {"ipn"}}); status != 403 {
			t.Errorf("POST %s without CSRF token: %d", p, status)
		}
	}
	acc := e.signedIn(t, "ketoan@saomai.vn")
	token := acc.CSRF("/dashboard/")
	if status, _ := acc.Get("/dashboard/settings"); status != 403 {
		t.Errorf("Accountant GET settings: %d", status)
	}
	for _, p := range []string{"/dashboard/settings/formats", "/dashboard/settings/try-memo", "/dashboard/settings/users", "/dashboard/settings/user-role",
		"/dashboard/settings/ipn-secret", "/dashboard/settings/ipn-signing-secret", "/dashboard/settings/ipn", "/dashboard/settings/merchant-secret", "/dashboard/settings/test-notification", "/dashboard/sandbox/transfer"} {
		if status, _, _ := acc.Post(p, url.Values{"csrf": {token}, "user": {e.userIDs["ketoan@saomai.vn"]}, "role": {"Admin"}, "kind": {"ipn"}}); status != 403 {
			t.Errorf("Accountant POST %s: %d", p, status)
		}
	}
	member := e.signedIn(t, "nhanvien@saomai.vn")
	for _, p := range []string{"/dashboard/bank-accounts", "/dashboard/settings", "/dashboard/sandbox"} {
		if status, _ := member.Get(p); status != 403 {
			t.Errorf("Member GET %s: %d", p, status)
		}
	}
	if _, body := member.Get("/dashboard/"); strings.Contains(body, "/dashboard/bank-accounts") || strings.Contains(body, "nav-settings") {
		t.Errorf("Member sees links to bank accounts or settings")
	}
}
