package hub_test

import (
	"encoding/json"
	"html"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"recon"
	"recon/hub"
	"recon/sqlstore/dbtest"
)

// page is a browser on the hosted link page: it keeps the last page's
// form values (session, csrf).
type page struct {
	t          *testing.T
	url        string
	status     int
	body       string
	header     http.Header
	session    string
	csrf       string
	extraHeads map[string]string
}

var (
	reSession = regexp.MustCompile(`name="session" value="([^"]*)"`)
	reCSRF    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
)

func (p *page) read(resp *http.Response, err error) {
	p.t.Helper()
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	p.status, p.body, p.header = resp.StatusCode, string(raw), resp.Header
	if m := reSession.FindStringSubmatch(p.body); m != nil {
		p.session = m[1]
	}
	if m := reCSRF.FindStringSubmatch(p.body); m != nil {
		p.csrf = m[1]
	}
}

func (p *page) open() *page {
	p.t.Helper()
	p.read(http.Get(p.url))
	return p
}

func (p *page) post(action string, fields ...string) *page {
	p.t.Helper()
	form := url.Values{"action": {action}, "session": {p.session}, "csrf": {p.csrf}}
	for i := 0; i+1 < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range p.extraHeads {
		req.Header.Set(k, v)
	}
	p.read(http.DefaultClient.Do(req))
	return p
}

func (p *page) want(status int, contains ...string) {
	p.t.Helper()
	if p.status != status {
		p.t.Fatalf("status %d, want %d:\n%s", p.status, status, p.body)
	}
	for _, s := range contains {
		if !strings.Contains(p.body, s) {
			p.t.Fatalf("page lacks %q:\n%s", s, p.body)
		}
	}
}

// events returns the company's hub events in order, and the metadata of each.
func (b *bundle) events(t *testing.T) ([]string, []recon.HubEventMeta) {
	t.Helper()
	list, err := b.store.Deliveries(t.Context(), b.company.Tenant(), recon.DeliveryFilter{Kind: recon.DeliveryWebhook, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(list)
	var names []string
	var metas []recon.HubEventMeta
	for _, d := range list {
		var body recon.HubEventBody
		if err := json.Unmarshal(d.Payload, &body); err != nil {
			t.Fatal(err)
		}
		names = append(names, body.Event)
		metas = append(metas, body.Metadata)
	}
	return names, metas
}

// linkSetup gives the merchant a webhook listening to every event and a
// customer (the existing one when called twice), and returns its xid.
func linkSetup(t *testing.T, b *bundle, purpose string) (cxid string) {
	t.Helper()
	if status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", `{"webhook_url":"https://hooks.example.vn/hub"}`); status != 200 {
		t.Fatalf("webhook: %v", body)
	}
	_, _, body := b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Khách `+purpose+`"}`)
	if body["data"] == nil {
		_, _, body = b.do(t, "GET", "/v1/company?q=Kh", "merchant", "")
		cxid = body["data"].([]any)[0].(map[string]any)["xid"].(string)
	} else {
		cxid = body["data"].(map[string]any)["xid"].(string)
	}
	return cxid
}

func newToken(t *testing.T, b *bundle, req string) (string, *page) {
	t.Helper()
	status, _, body := b.do(t, "POST", "/v1/link-token/create", "merchant", req)
	if status != 201 {
		t.Fatalf("link token: %d %v", status, body)
	}
	u := strings.Replace(body["hosted_link_url"].(string), "http://hub.test", b.srv.URL, 1)
	return body["xid"].(string), &page{t: t, url: u}
}

const (
	mbIndividual = "0123456789"
	mbNationalID = "001099012345"
	mbPhone      = "0901234567"
)

func linkMB(p *page) {
	p.t.Helper()
	p.open().want(200, `value="MB"`, "Chọn ngân hàng")
	p.post("pick_bank", "bank", "MB", "account_type", "individual").want(200, "MBBank", `name="national_id"`)
	p.post("details", "account_number", mbIndividual, "national_id", mbNationalID, "phone", mbPhone).want(200, "NGUYEN VAN AN", `maxlength="8"`)
}

func TestLinkPageLink(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "link")
		ltxid, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","completion_redirect_uri":"https://shop.example.vn/done"}`)
		linkMB(p)
		// Framing is allowed for this page only, no referrer leaves it.
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors *") || p.header.Get("X-Frame-Options") != "" ||
			p.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("headers: %v", p.header)
		}
		p.post("link_otp", "otp", "11111111").want(200, "Mã OTP không đúng", "Số lần thử còn lại: 2")
		p.post("link_otp", "otp", "12345678").want(200, `id="done"`, `"event":"FINISHED_BANK_ACCOUNT_LINK"`,
			`"account_number":"0123456789"`, `"account_type":"individual"`, `var next = "https://shop.example.vn/done"`, `href="https://shop.example.vn/done"`)
		names, metas := b.events(t)
		want := []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_STATE_CHANGED", "LINK_SESSION_STATE_CHANGED",
			"LINK_SESSION_STATE_CHANGED", "BANK_ACCOUNT_LINKED", "LINK_SESSION_COMPLETED"}
		if !slices.Equal(names, want) {
			t.Fatalf("events:\n%v\nwant\n%v", names, want)
		}
		states := []string{metas[2].State, metas[3].State, metas[4].State}
		if !slices.Equal(states, []string{"REQUEST_BANK_ACCOUNT_LINK", "CONFIRM_BANK_ACCOUNT_LINK", "FINISHED_BANK_ACCOUNT_LINK"}) {
			t.Fatalf("states: %v", states)
		}
		linked := metas[5]
		if linked.BrandName != "MBBank" || linked.AccountNumber != mbIndividual || linked.AccountHolderName != "NGUYEN VAN AN" ||
			linked.AccountType != "individual" || !recon.ValidXID(linked.BankAccountXID) || linked.LinkTokenXID != ltxid ||
			metas[6].BankAccountXID != linked.BankAccountXID || *metas[6].LinkSessionXID != *metas[1].LinkSessionXID {
			t.Fatalf("linked metadata: %+v / completed %+v", linked, metas[6])
		}
		// The account is an ordinary bank account of the merchant.
		accounts, err := b.store.BankAccounts(t.Context(), b.company.Tenant())
		if err != nil || len(accounts) != 1 || accounts[0].AccountNumber != mbIndividual || accounts[0].BankName != "MBBank" {
			t.Fatalf("bank accounts: %v %v", accounts, err)
		}
		// The token is used up: reopening shows so and starts nothing.
		p.open().want(http.StatusGone, "đã được sử dụng")
		_, _, body := b.do(t, "POST", "/v1/link-token/get", "merchant", `{"link_token_xid":"`+ltxid+`"}`)
		if d := body["data"].(map[string]any); d["status"] != "USED" || len(d["sessions"].([]any)) != 1 {
			t.Fatalf("token after: %v", d)
		}
		// Linking the same account again: the page says so, nothing changes.
		_, p2 := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","language":"en"}`)
		p2.open().want(200, "Choose your bank")
		p2.post("pick_bank", "bank", "MB", "account_type", "individual")
		p2.post("details", "account_number", mbIndividual, "national_id", mbNationalID, "phone", mbPhone).
			want(http.StatusConflict, "already linked", `name="national_id"`)
	})
}

func TestLinkPageFailures(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "fail")
		req := `{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT","language":"en"}`
		start := func() *page {
			_, p := newToken(t, b, req)
			p.open()
			p.post("pick_bank", "bank", "MB", "account_type", "individual")
			return p
		}
		// Three wrong OTPs fail the session.
		p := start()
		p.post("details", "account_number", "0000000003", "national_id", "001099000003", "phone", "0900000003").want(200, "NGUYEN VAN SAI")
		p.post("link_otp", "otp", "12345678")
		p.post("link_otp", "otp", "12345678").want(200, "Attempts left: 1")
		p.post("link_otp", "otp", "12345678").want(200, "Linking failed", "three times")
		// The bank does not answer: the session fails.
		p = start()
		p.post("details", "account_number", "0000000503", "national_id", "001099000503", "phone", "0900000503").want(200, "not answering")
		// Linked elsewhere, or unknown details: the page says so, the session stays.
		p = start()
		p.post("details", "account_number", "0000000409", "national_id", "001099000409", "phone", "0900000409").want(200, "another service", `name="national_id"`)
		p.post("details", "account_number", mbIndividual, "national_id", "000", "phone", mbPhone).want(200, "does not know", `name="national_id"`)
		names, metas := b.events(t)
		failed := 0
		for i, n := range names {
			if n == "LINK_SESSION_FAILED" {
				failed++
				if metas[i].Reason == "" {
					t.Errorf("FAILED without reason")
				}
			}
		}
		if failed != 2 || slices.Contains(names, "BANK_ACCOUNT_LINKED") {
			t.Fatalf("events: %v", names)
		}
	})
}

func TestLinkPageEnds(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "end")
		req := `{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT"}`

		// Reopen while the session lives: the same session, REINITIALIZED.
		_, p := newToken(t, b, req)
		p.open()
		first := p.session
		p.open()
		if p.session != first {
			t.Fatalf("reopen started a new session")
		}
		// Close: ABANDONED, and the browser hears BANKHUB_CLOSE_LINK.
		p.post("close").want(200, `"event":"BANKHUB_CLOSE_LINK"`)
		// Revoke mid-session: the next step finds the token ended.
		ltxid, p := newToken(t, b, req)
		p.open()
		p.post("pick_bank", "bank", "VCB", "account_type", "individual")
		b.do(t, "POST", "/v1/link-token/revoke", "merchant", `{"link_token_xid":"`+ltxid+`"}`)
		p.post("details", "account_number", "1012345678", "national_id", "001199023456", "phone", "0912345678").
			want(http.StatusGone, `"event":"BANKHUB_TOKEN_EXPIRED"`)
		// Token expiry mid-session.
		ltxid2, p := newToken(t, b, req)
		p.open()
		if _, _, err := b.store.ExpireHubLinks(t.Context(), time.Now().Add(31*time.Minute)); err != nil {
			t.Fatal(err)
		}
		p.post("pick_bank", "bank", "MB", "account_type", "individual").want(http.StatusGone, `"event":"BANKHUB_TOKEN_EXPIRED"`)
		names, metas := b.events(t)
		want := []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_REINITIALIZED", "LINK_SESSION_ABANDONED",
			"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_STATE_CHANGED", "LINK_TOKEN_REVOKED",
			"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED",
			"LINK_TOKEN_EXPIRED", // the first token: its session was closed, the token itself lived on
			"LINK_SESSION_EXPIRED", "LINK_TOKEN_EXPIRED"}
		if !slices.Equal(names, want) {
			t.Fatalf("events:\n%v\nwant\n%v", names, want)
		}
		if metas[12].LinkTokenXID != ltxid2 || metas[11].LinkSessionXID == nil || metas[7].LinkSessionXID == nil || metas[10].LinkSessionXID != nil {
			t.Fatalf("metadata: %+v %+v %+v", metas[11], metas[7], metas[10])
		}
		// Idle for 15 minutes: abandoned by the sweep; the page then says the session expired.
		_, p = newToken(t, b, req)
		p.open()
		if _, n, err := b.store.ExpireHubLinks(t.Context(), time.Now().Add(16*time.Minute)); err != nil || n != 1 {
			t.Fatalf("abandon: %d %v", n, err)
		}
		p.post("pick_bank", "bank", "MB", "account_type", "individual").want(http.StatusConflict, `"event":"BANKHUB_SESSION_EXPIRED"`)
	})
}

// TestLinkPageAttacks: another token's session, a forged form, a
// cross-origin post and an unknown token get nowhere.
func TestLinkPageAttacks(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "attack")
		req := `{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT","language":"en"}`
		_, a := newToken(t, b, req)
		_, c := newToken(t, b, req)
		a.open()
		c.open()
		// Token C's URL with A's session and CSRF value: refused.
		forged := &page{t: t, url: c.url, session: a.session, csrf: a.csrf}
		forged.post("pick_bank", "bank", "MB", "account_type", "individual")
		if forged.status == 200 || strings.Contains(forged.body, a.session) {
			t.Fatalf("another token's session: %d\n%s", forged.status, forged.body)
		}
		// A wrong CSRF value on the right session: refused, nothing moves.
		bad := &page{t: t, url: a.url, session: a.session, csrf: strings.Repeat("0", 32)}
		bad.post("pick_bank", "bank", "MB", "account_type", "individual").want(http.StatusBadRequest, "security value")
		// A cross-site form post: refused before the handler.
		x := &page{t: t, url: a.url, session: a.session, csrf: a.csrf, extraHeads: map[string]string{"Sec-Fetch-Site": "cross-site"}}
		x.post("pick_bank", "bank", "MB", "account_type", "individual")
		if x.status != http.StatusForbidden {
			t.Fatalf("cross-site post: %d", x.status)
		}
		// Unknown token: 404 page; hostile input is escaped.
		u := &page{t: t, url: b.srv.URL + "/link/lt_nope"}
		u.open().want(http.StatusNotFound, "không tồn tại")
		a.post("pick_bank", "bank", `<script>alert(1)</script>`, "account_type", "individual").want(200, "Choose a bank")
		a.post("pick_bank", "bank", "MB", "account_type", "savings").want(http.StatusBadRequest, "account_type")
		a.post("unlink_choice", "choice", "bank").want(http.StatusBadRequest)
		a.post("jump").want(http.StatusBadRequest, "unknown action")
		names, _ := b.events(t)
		if slices.Contains(names, "LINK_SESSION_STATE_CHANGED") {
			t.Fatalf("a refused step moved a session: %v", names)
		}
	})
}

func TestLinkPageUnlink(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "unlink")
		link := func() string {
			_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
			linkMB(p)
			p.post("link_otp", "otp", "12345678").want(200, `id="done"`)
			_, metas := b.events(t)
			return metas[len(metas)-1].BankAccountXID
		}
		account := link()
		for _, choice := range []string{"here", "bank"} {
			before, _ := b.events(t)
			_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"UNLINK_BANK_ACCOUNT","bank_account_xid":"`+account+`","language":"en",
				"completion_redirect_uri":"https://shop.example.vn/</script><script>alert(1)</script>"}`)
			p.open().want(200, "Unlink this account", mbIndividual, "NGUYEN VAN AN")
			p.post("request_unlink").want(200, `maxlength="8"`)
			p.post("unlink_otp", "otp", "00000000").want(200, "The OTP is wrong")
			p.post("unlink_otp", "otp", "12345678").want(200, "Unlink at the bank", "Stop receiving transactions here only")
			p.post("unlink_choice", "choice", choice).want(200, `"event":"FINISHED_BANK_ACCOUNT_UNLINK"`, `"account_number":"0123456789"`)
			if strings.Contains(p.body, "<script>alert(1)") {
				t.Fatalf("the redirect URI broke out of the script:\n%s", p.body)
			}
			after, metas := b.events(t)
			got := after[len(before):]
			ev := map[string]string{"here": "BANK_ACCOUNT_INACTIVATED", "bank": "BANK_ACCOUNT_UNLINKED"}[choice]
			want := []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_STATE_CHANGED", ev, "LINK_SESSION_COMPLETED"}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: events %v, want %v", choice, got, want)
			}
			m := metas[len(metas)-1]
			if m.BankAccountXID != account || m.Unlinked == nil || *m.Unlinked != (choice == "bank") ||
				metas[len(metas)-3].State != "REQUEST_BANK_ACCOUNT_UNLINK" || metas[len(metas)-2].AccountNumber != mbIndividual {
				t.Fatalf("%s: metadata %+v / %+v", choice, m, metas[len(metas)-3])
			}
			if choice == "here" {
				// Inactive here only: it may be unlinked at the bank next.
				continue
			}
			// Unlinked: a new unlink token for it is refused; linking it again keeps its xid.
			if status, _, body := b.do(t, "POST", "/v1/link-token/create", "merchant", `{"company_xid":"`+cxid+`","purpose":"UNLINK_BANK_ACCOUNT","bank_account_xid":"`+account+`"}`); status != 400 {
				t.Fatalf("unlink an unlinked account: %d %v", status, body)
			}
			if again := link(); again != account {
				t.Fatalf("re-link: xid %s, was %s", again, account)
			}
		}
	})
}

// TestLinkPageConsentAndTestIdentities: the first step says what linking
// shares and keeps before any bank detail is asked; a sandbox token's page
// lists the sandbox identities a tester can use (every one first, the
// chosen bank's with its account type on the details step, the OTP that
// works on the OTP step), in the token's language; without a redirect the
// end offers a way back.
func TestLinkPageConsentAndTestIdentities(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		if err := b.store.SetHubBranding(t.Context(), b.company.Tenant(), &recon.HubBranding{DisplayName: "Cửa hàng Hoa Sen", LogoURL: "https://shop.example.vn/logo.png"}); err != nil {
			t.Fatal(err)
		}
		cxid := linkSetup(t, b, "consent")
		_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`)
		p.open().want(200, `id="consent"`, "<strong>Cửa hàng Hoa Sen</strong> sẽ nhận thông tin các giao dịch", "không được lưu lại",
			"không bao giờ hỏi mật khẩu", `src="https://shop.example.vn/logo.png"`, `id="test-ids"`, "Tài khoản thử nghiệm (18)", ">Thử nghiệm</span>")
		if i, j := strings.Index(p.body, `id="consent"`), strings.Index(p.body, `id="next"`); i < 0 || j < i {
			t.Errorf("the consent is not before Continue")
		}
		if strings.Contains(p.body, `name="national_id"`) {
			t.Errorf("the first step asks for bank details")
		}
		for _, want := range []string{"0123456789", "001099012345", "0901234567", "12345678", "1012345678", "mọi OTP đều sai", "ngân hàng không phản hồi"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the first step's test accounts lack %q", want)
			}
		}
		p.post("pick_bank", "bank", "MB", "account_type", "individual").want(200, `name="national_id"`, `id="test-ids" open`,
			`data-account="0123456789" data-nid="001099012345" data-phone="0901234567"`, "Tài khoản thử nghiệm (4)")
		if strings.Contains(p.body, "1012345678") || strings.Contains(p.body, "0987654321") || strings.Contains(p.body, `id="consent"`) {
			t.Errorf("the details step lists another bank's or account type's identities, or the consent again")
		}
		p.post("details", "account_number", mbIndividual, "national_id", mbNationalID, "phone", mbPhone).
			want(200, `id="test-otp"`, `OTP thử nghiệm đúng: <strong class="sel">12345678</strong>`, `data-otp="12345678"`)
		p.post("link_otp", "otp", "12345678").want(200, `id="done"`, `id="way-back"`, "Bạn có thể đóng trang này.", `id="back-to-merchant" hidden`)

		// English, an identity that never gets the OTP right.
		_, p = newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","language":"en"}`)
		p.open().want(200, "<strong>Cửa hàng Hoa Sen</strong> will receive the transactions", "Test accounts (18)", "every OTP is wrong")
		p.post("pick_bank", "bank", "VCB", "account_type", "individual")
		p.post("details", "account_number", "0000000003", "national_id", "001099000003", "phone", "0900000003").
			want(200, `The test OTP that works: no OTP works`)
		p.post("close").want(200, `"event":"BANKHUB_CLOSE_LINK"`, "You can close this page now.")
		// A step (here with a redirect) has no way-back block: × closes it.
		_, p = newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","completion_redirect_uri":"https://shop.example.vn/done"}`)
		p.open()
		if strings.Contains(p.body, `id="way-back"`) {
			t.Errorf("a way back offered on a step")
		}
	})
}

// foreignWords returns the entries of the other language's catalogue that
// a link page in lang shows (whole words; entries both languages share or
// the own language's text contains do not count).
func foreignWords(lang, body string) []string {
	other := map[string]string{"vi": "en", "en": "vi"}[lang]
	own := map[string]bool{}
	for _, v := range hub.PageText[lang] {
		own[v] = true
	}
	body = scriptOrStyle.ReplaceAllString(body, " ")
	text := html.UnescapeString(anyTag.ReplaceAllString(body, " "))
	var bad []string
	ownText := strings.Join(slices.Collect(maps.Values(hub.PageText[lang])), "\n")
	for _, v := range hub.PageText[other] {
		// A word the page's own language uses too ("OTP") is not foreign.
		if !own[v] && !strings.Contains(ownText, v) && hasWhole(text, v) {
			bad = append(bad, v)
		}
	}
	return bad
}

var (
	scriptOrStyle = regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>`)
	anyTag        = regexp.MustCompile(`(?s)<[^>]*>`)
)

// hasWhole reports whether text holds v with neither a letter nor a digit
// right before or after it: what the regexp (^|[^\p{L}\p{N}])v($|[^\p{L}\p{N}])
// matches, without compiling one for each word of the catalogue on each page
// (under the race detector that compiling was most of TestLinkPageLanguage's
// CPU time).
func hasWhole(text, v string) bool {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
	for i := 0; i <= len(text)-len(v); {
		j := strings.Index(text[i:], v)
		if j < 0 {
			return false
		}
		j += i
		before, _ := utf8.DecodeLastRuneInString(text[:j])
		after, _ := utf8.DecodeRuneInString(text[j+len(v):])
		if (j == 0 || !word(before)) && (j+len(v) == len(text) || !word(after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[j:])
		i = j + max(size, 1)
	}
	return false
}

// TestHasWhole: hasWhole answers as the regexp it stands for, on every
// entry of both catalogues, in the other catalogue's text and at the edges
// of words.
func TestHasWhole(t *testing.T) {
	t.Parallel()
	var texts []string
	for _, cat := range hub.PageText {
		texts = append(texts, strings.Join(slices.Sorted(maps.Values(cat)), "\n"))
	}
	for _, cat := range hub.PageText {
		for _, v := range cat {
			re := regexp.MustCompile(`(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(v) + `($|[^\p{L}\p{N}])`)
			for _, text := range append([]string{v, "a" + v, v + "1", "é" + v + " ", " " + v + "ă", "(" + v + ")", v + v, "a" + v + " " + v}, texts...) {
				if got, want := hasWhole(text, v), re.MatchString(text); got != want {
					t.Errorf("hasWhole(%q, %q) = %v, the regexp says %v", text, v, got, want)
				}
			}
		}
	}
}

// TestLinkPageLanguage: every step and end of the link page, in each
// language, shows no word of the other language's catalogue (the bank's
// and the merchant's names aside), a refused form included.
func TestLinkPageLanguage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		cxid := linkSetup(t, b, "lang")
		for _, lang := range []string{"vi", "en"} {
			check := func(what string, p *page) {
				t.Helper()
				if words := foreignWords(lang, p.body); len(words) > 0 || !strings.Contains(p.body, `<html lang="`+lang+`">`) {
					t.Errorf("%s in %s shows %q:\n%s", what, lang, words, p.body)
				}
			}
			_, p := newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","language":"`+lang+`"}`)
			check("the first step", p.open())
			check("a tampered form", p.post("pick_bank", "bank", "MB", "account_type", "savings"))
			check("no bank", p.post("pick_bank", "account_type", "individual"))
			check("the details step", p.post("pick_bank", "bank", "MB", "account_type", "individual"))
			check("unknown details", p.post("details", "account_number", mbIndividual, "national_id", "000", "phone", mbPhone))
			check("the OTP step", p.post("details", "account_number", mbIndividual, "national_id", mbNationalID, "phone", mbPhone))
			check("a wrong OTP", p.post("link_otp", "otp", "00000000"))
			check("done", p.post("link_otp", "otp", "12345678"))
			check("used", p.open())
			_, p = newToken(t, b, `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","language":"`+lang+`"}`)
			p.open()
			check("closed", p.post("close"))
		}
		check := &page{t: t, url: b.srv.URL + "/link/lt_nope"}
		if words := foreignWords("vi", check.open().body); len(words) > 0 {
			t.Errorf("unknown link shows %q", words)
		}
	})
}
