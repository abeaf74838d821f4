package main

import (
	"context"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// The hosted link page (docs/design.md, D8) in a real headless Chromium, on a
// real server on both engines: a merchant's page on another site frames it
// (or opens it in a new tab) and records every message the page posts.

// shopPages are the merchant's pages. Each records the message events it
// gets in window.msgs, with their origin and whether the hosted page (the
// iframe, or the tab it opened) sent them.
var shopPages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html><html lang="vi"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Cửa hàng Hoa Sen</title>
<style>body{margin:0;font-family:system-ui,sans-serif;background:#e3e8ee}.bar{background:#0b3d2e;color:#fff;padding:14px 24px;font-weight:600}
iframe{display:block;margin:24px auto;width:480px;max-width:100%;height:620px;border:0;border-radius:12px}p{margin:24px}</style>
<script>window.msgs=[];addEventListener("message",function(e){var hub=document.getElementById("hub");
msgs.push({origin:e.origin,fromHub:e.source===(window.popup||(hub&&hub.contentWindow)),data:e.data})});</script>
</head><body><div class="bar">Cửa hàng Hoa Sen</div>{{end}}
{{define "frame"}}{{template "head"}}<iframe id="hub" src="{{.}}" title="Liên kết ngân hàng"></iframe></body></html>{{end}}
{{define "tab"}}{{template "head"}}<p><button id="open">Liên kết ngân hàng</button></p>
<script>document.getElementById("open").onclick=function(){window.popup=window.open({{.}})}</script></body></html>{{end}}
{{define "forge"}}{{template "head"}}<form method="post" action="{{.}}"><input name="action" value="pick_bank">
<input name="bank" value="MB"><input name="account_type" value="individual"><button id="forge">Gửi</button></form></body></html>{{end}}
{{define "done"}}{{template "head"}}<h1 id="shop-done">Back at the shop</h1></body></html>{{end}}`))

// newShop serves the merchant's pages on localhost, while Recon answers on
// 127.0.0.1: another site, so Chromium runs the framed page in a process of
// its own, as for a real merchant.
func newShop(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := shopPages.ExecuteTemplate(w, strings.TrimPrefix(r.URL.Path, "/"), r.URL.Query().Get("u")); err != nil {
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

// pageMsg is a message event the shop recorded.
type pageMsg struct {
	Origin  string `json:"origin"`
	FromHub bool   `json:"fromHub"`
	Data    struct {
		Event     string            `json:"event"`
		Metadata  map[string]string `json:"metadata"`
		Timestamp int64             `json:"timestamp"`
	} `json:"data"`
}

// hubTab is a tab of the shop and the hosted page it shows: page runs in
// the iframe's own target (framed), or in a tab of its own.
type hubTab struct {
	t          *testing.T
	shop, page context.Context
	framed     bool
}

// step bounds one browser step: a page that never comes fails the test.
const step = 20 * time.Second

// do runs actions on ctx (the shop or the page) within step.
func (h *hubTab) do(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		h.t.Fatalf("browser: %v", err)
	}
}

func (h *hubTab) text(sel string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.page, step)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		h.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// shot screenshots the shop's tab with the frame in it (what the window
// shows: a whole-page capture leaves the cross-site frame blank), or the
// page when it is a tab of its own.
func (h *hubTab) shot(name string) {
	h.t.Helper()
	if h.framed {
		browsertest.ViewportScreenshot(h.t, h.shop, name)
		return
	}
	browsertest.Screenshot(h.t, h.page, name)
}

// messages waits until the shop has n messages and returns them.
func (h *hubTab) messages(n int) []pageMsg {
	h.t.Helper()
	h.poll(h.shop, "window.msgs.length >= "+strconv.Itoa(n))
	ctx, cancel := context.WithTimeout(h.shop, step)
	defer cancel()
	msgs, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageMsg]("window.msgs"))
	if err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// poll waits until the expression holds in ctx's page (the shop or the page).
func (h *hubTab) poll(ctx context.Context, expr string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(step), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		h.t.Fatalf("waiting for %s: %v", expr, err)
	}
}

// attach opens a tab of the browser (id "": a new one), closed when the
// test ends. Its first run must not carry a step's deadline: the tab's
// session lives as long as the context of that run.
func attach(t *testing.T, parent context.Context, id target.ID) context.Context {
	t.Helper()
	// A new tab gets a browser context of its own: closing it closes its
	// connections, so the server's graceful stop does not wait for them.
	opt := chromedp.WithNewBrowserContext()
	if id != "" {
		opt = chromedp.WithTargetID(id)
	}
	tab, cancel := chromedp.NewContext(parent, opt)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("browser tab: %v", err)
	}
	return tab
}

// framed opens the shop's page that frames the hosted page at u.
func framed(t *testing.T, browser context.Context, shop, u string) *hubTab {
	t.Helper()
	h := &hubTab{t: t, shop: attach(t, browser, ""), framed: true}
	h.do(h.shop, chromedp.Navigate(shop+"/frame?u="+url.QueryEscape(u)))
	// The iframe is a target of its own (another site): attach to it.
	ctx, cancel := context.WithTimeout(h.shop, step)
	defer cancel()
	for h.page == nil {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatalf("the framed page's target: %v", err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && info.URL == u {
				h.page = attach(t, h.shop, info.TargetID)
			}
		}
		if h.page == nil {
			time.Sleep(20 * time.Millisecond) // the frame's target is listed soon after its load
		}
	}
	return h
}

// phone is the viewport of browsertest.Options{Mobile: true}, for the
// tabs the test opens itself.
var phone = chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch)

// inNewTab opens the shop's page whose button opens the hosted page at u in
// a new tab (window.open), and clicks it; on a phone-sized screen when mobile.
func inNewTab(t *testing.T, browser context.Context, shop, u string, mobile bool) *hubTab {
	t.Helper()
	h := &hubTab{t: t, shop: attach(t, browser, "")}
	if mobile {
		h.do(h.shop, phone)
	}
	h.do(h.shop, chromedp.Navigate(shop+"/tab?u="+url.QueryEscape(u)))
	opened := chromedp.WaitNewTarget(h.shop, func(info *target.Info) bool { return info.URL == u })
	h.do(h.shop, chromedp.Click(chromedp.ID("open")))
	select {
	case id, ok := <-opened:
		if !ok {
			t.Fatal("the shop's tab is gone")
		}
		h.page = attach(t, h.shop, id)
		h.poll(h.page, `document.readyState === "complete" && location.href !== "about:blank"`)
		if mobile {
			h.do(h.page, phone)
		}
	case <-time.After(step):
		t.Fatal("the hosted page did not open in a new tab")
	}
	return h
}

// Sandbox identities (docs/hub.md).
var (
	mbPerson   = [3]string{"0123456789", "001099012345", "0901234567"}
	vcbPerson  = [3]string{"1012345678", "001199023456", "0912345678"}
	tcbCompany = [3]string{"1903098765", "0601234567", "0225345678"}
)

// submit clicks the button (or link) at sel and waits for the page it
// loads: queries made before chromedp has the new document could hold
// node ids the new document voids.
func submit(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))(ctx, t)
		return chromedp.Void{}, err
	}
}

// pick chooses the bank and account type.
func (h *hubTab) pick(bank, accountType string) {
	h.t.Helper()
	h.do(h.page, chromedp.Click(chromedp.CSS(`input[name=bank][value=`+bank+`]`)),
		chromedp.Click(chromedp.CSS(`input[name=account_type][value=`+accountType+`]`)),
		submit("#next"), chromedp.WaitVisible(chromedp.ID("national_id")))
}

// send fills the details form with id and sends it; wait is what the next page shows.
func (h *hubTab) send(id [3]string, wait string) {
	h.t.Helper()
	h.do(h.page, chromedp.SendKeys(chromedp.ID("account_number"), id[0]), chromedp.SendKeys(chromedp.ID("national_id"), id[1]),
		chromedp.SendKeys(chromedp.ID("phone"), id[2]), submit("#next"), chromedp.WaitVisible(chromedp.CSS(wait)))
}

// otp enters an OTP and clicks confirm; wait is what the next page shows
// ("": no wait, for a page that leaves for completion_redirect_uri).
func (h *hubTab) otp(code, wait string) {
	h.t.Helper()
	h.do(h.page, chromedp.SendKeys(chromedp.ID("otp"), code), submit("#next"))
	if wait != "" {
		h.do(h.page, chromedp.WaitVisible(chromedp.CSS(wait)))
	}
}

// wantMsg checks a message of the page: its event and account, sent by the
// hosted page from Recon's origin, with a timestamp of this test's time.
func wantMsg(t *testing.T, m pageMsg, origin, event, account, accountType string, since time.Time) {
	t.Helper()
	d := m.Data
	if m.Origin != origin || !m.FromHub || d.Event != event || d.Metadata["account_number"] != account ||
		d.Metadata["account_type"] != accountType || d.Timestamp < since.Unix() || d.Timestamp > time.Now().Unix() {
		t.Fatalf("message %+v, want %s from %s for %s (%s)", m, event, origin, account, accountType)
	}
}

// hubEnv is a real server with a merchant and one of its customers.
type hubEnv struct {
	m          *hubMerchant
	dbURL      string
	customer   string
	shop       string
	origin     string // Recon's origin, as message events show it
	screenshot bool   // take this engine's screenshots (one engine's are enough)
}

func newHubEnv(t *testing.T, engine string) *hubEnv {
	t.Helper()
	dbURL := dbtest.NewMigratedURL(t, engine)
	base, _, _ := startServer(t, dbURL, "--sandbox")
	m := newHubMerchant(t, base, dbURL, "Hoa Sen")
	if status, body := m.call(t, "POST", "/v1/merchant-config", `{"display_name":"Cửa hàng Hoa Sen","primary_color":"#0b3d2e"}`); status != 200 {
		t.Fatalf("merchant-config: %d %v", status, body)
	}
	_, body := m.call(t, "POST", "/v1/company/create", `{"full_name":"Khách A"}`)
	return &hubEnv{m: m, dbURL: dbURL, customer: body["data"].(map[string]any)["xid"].(string), shop: newShop(t),
		origin: base, screenshot: engine == sqlstore.EngineSQLite}
}

// token makes a link token; extra is more JSON fields.
func (e *hubEnv) token(t *testing.T, purpose, lang, extra string) (xid, pageURL string) {
	t.Helper()
	status, body := e.m.call(t, "POST", "/v1/link-token/create", `{"company_xid":"`+e.customer+`","purpose":"`+purpose+`","language":"`+lang+`"`+extra+`}`)
	if status != 201 {
		t.Fatalf("link token: %d %v", status, body)
	}
	return body["xid"].(string), body["hosted_link_url"].(string)
}

// account returns the customer's linked account with the number, through the hub API.
func (e *hubEnv) account(t *testing.T, number string) map[string]any {
	t.Helper()
	status, body := e.m.call(t, "GET", "/v1/bank-account?company_xid="+e.customer, "")
	if status != 200 {
		t.Fatalf("bank accounts: %d %v", status, body)
	}
	for _, a := range body["data"].([]any) {
		if a := a.(map[string]any); a["account_number"] == number {
			return a
		}
	}
	t.Fatalf("no account %s: %v", number, body)
	return nil
}

func (e *hubEnv) shot(h *hubTab, name string) {
	if e.screenshot {
		h.shot(name)
	}
}

// TestHubLinkBrowserFramed: in an iframe of the merchant's page (another
// site), a customer links an MBBank account in English (one wrong OTP
// first) and the page posts FINISHED_BANK_ACCOUNT_LINK, then goes to
// completion_redirect_uri inside the frame; the account is linked through
// the API. Then, in Vietnamese, "stop receiving here only", and in a new
// tab (window.opener) "unlink at the bank".
func TestHubLinkBrowserFramed(t *testing.T) {
	t.Parallel()
	browser := browsertest.New(t, browsertest.Options{})
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newHubEnv(t, engine)
		since := time.Now().Add(-time.Second)
		_, u := e.token(t, "LINK_BANK_ACCOUNT", "en", `,"completion_redirect_uri":"`+e.shop+`/done"`)
		h := framed(t, browser, e.shop, u)
		h.do(h.page, chromedp.WaitVisible(chromedp.CSS(`input[name=bank][value=MB]`)))
		if got := h.text("h1"); got != "Choose your bank" {
			t.Fatalf("title %q", got)
		}
		e.shot(h, "hub-frame-pick-en.png")
		h.pick("MB", "individual")
		e.shot(h, "hub-frame-details-en.png")
		h.send(mbPerson, "#otp")
		if holder := h.text("#holder"); holder != "NGUYEN VAN AN" {
			t.Fatalf("holder %q", holder)
		}
		h.otp("00000000", "#error")
		if msg := h.text("#error"); msg != "The OTP is wrong." {
			t.Fatalf("wrong OTP: %q", msg)
		}
		e.shot(h, "hub-frame-otp-wrong-en.png")
		h.otp("12345678", "") // the page says done, then leaves for the redirect: the shop sees both
		msgs := h.messages(1)
		wantMsg(t, msgs[0], e.origin, "FINISHED_BANK_ACCOUNT_LINK", mbPerson[0], "individual", since)
		// completion_redirect_uri: the frame goes there (the shop's page
		// then shares the shop's origin, so the shop can read where it is).
		h.poll(h.shop, `(function(){try{return frames[0].location.pathname==="/done"}catch(e){return false}})()`)
		if loc, err := chromedp.Run(h.shop, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/frame?u="+url.QueryEscape(u)) {
			t.Fatalf("the shop's own page moved: %q %v", loc, err)
		}
		a := e.account(t, mbPerson[0])
		if a["link_state"] != "linked" || a["active"] != "1" || a["account_type"] != "individual" || a["account_holder_name"] != "NGUYEN VAN AN" {
			t.Fatalf("account after the link: %v", a)
		}
		if n := len(h.messages(1)); n != 1 {
			t.Fatalf("%d messages, want 1", n)
		}

		// Unlink, in Vietnamese, framed: stop receiving here only.
		accountXID := a["xid"].(string)
		_, u = e.token(t, "UNLINK_BANK_ACCOUNT", "vi", `,"bank_account_xid":"`+accountXID+`"`)
		h = framed(t, browser, e.shop, u)
		h.do(h.page, chromedp.WaitVisible(chromedp.ID("account")))
		if got := h.text("h1"); got != "Hủy liên kết tài khoản" || h.text("#account") != mbPerson[0] {
			t.Fatalf("unlink page: %q %q", got, h.text("#account"))
		}
		e.shot(h, "hub-frame-unlink-vi.png")
		h.do(h.page, submit("#next"), chromedp.WaitVisible(chromedp.ID("otp")))
		h.otp("12345678", "#unlink-here")
		e.shot(h, "hub-frame-unlink-choose-vi.png")
		h.do(h.page, submit("#unlink-here"), chromedp.WaitVisible(chromedp.ID("done")))
		if got := h.text(".info"); got != "Tài khoản đã được hủy liên kết." {
			t.Fatalf("done text %q", got)
		}
		wantMsg(t, h.messages(1)[0], e.origin, "FINISHED_BANK_ACCOUNT_UNLINK", mbPerson[0], "individual", since)
		if a := e.account(t, mbPerson[0]); a["link_state"] != "inactive" || a["active"] != "0" {
			t.Fatalf("account after 'here only': %v", a)
		}

		// Unlink at the bank, in a new tab: the page posts to window.opener.
		_, u = e.token(t, "UNLINK_BANK_ACCOUNT", "en", `,"bank_account_xid":"`+accountXID+`"`)
		h = inNewTab(t, browser, e.shop, u, false)
		h.do(h.page, chromedp.WaitVisible(chromedp.ID("account")), submit("#next"), chromedp.WaitVisible(chromedp.ID("otp")))
		h.otp("12345678", "#unlink-bank")
		h.do(h.page, submit("#unlink-bank"), chromedp.WaitVisible(chromedp.ID("done")))
		wantMsg(t, h.messages(1)[0], e.origin, "FINISHED_BANK_ACCOUNT_UNLINK", mbPerson[0], "individual", since)
		if a := e.account(t, mbPerson[0]); a["link_state"] != "unlinked" {
			t.Fatalf("account after 'at the bank': %v", a)
		}
	})
}

// TestHubLinkBrowserEnds: framed, the page's Back button returns to the
// bank list; the close button (×) posts BANKHUB_CLOSE_LINK; a plain form of
// the shop posting to the page is refused and moves nothing; a token
// revoked while the page is open ends the session at the next step with
// BANKHUB_TOKEN_EXPIRED; 15 quiet minutes end it with
// BANKHUB_SESSION_EXPIRED and "Try again" starts anew; then the token
// expires while open (BANKHUB_TOKEN_EXPIRED).
func TestHubLinkBrowserEnds(t *testing.T) {
	t.Parallel()
	browser := browsertest.New(t, browsertest.Options{})
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newHubEnv(t, engine)
		since := time.Now().Add(-time.Second)

		// Back, from the details to the bank list, which keeps the choice.
		_, u := e.token(t, "LINK_BANK_ACCOUNT", "en", "")
		h := framed(t, browser, e.shop, u)
		h.pick("VCB", "enterprise")
		h.do(h.page, submit("#back"), chromedp.WaitVisible(chromedp.CSS(`input[name=bank]`)))
		checked, err := chromedp.Run(h.page, chromedp.Evaluate[string](
			`document.querySelector("input[name=bank]:checked").value + " " + document.querySelector("input[name=account_type]:checked").value`))
		if err != nil || checked != "VCB enterprise" {
			t.Fatalf("back: the bank list shows %q checked (%v), want VCB enterprise", checked, err)
		}
		h.pick("MB", "individual")
		if got := h.text("h1"); got != "MBBank: Account details" {
			t.Fatalf("after picking again: %q", got)
		}

		// Close (×), in Vietnamese, on the details step.
		_, u = e.token(t, "LINK_BANK_ACCOUNT", "vi", "")
		h = framed(t, browser, e.shop, u)
		h.pick("MB", "individual")
		h.do(h.page, submit("button.close"), chromedp.WaitVisible(chromedp.ID("ended")))
		if got := h.text("#ended"); got != "Đã đóng" {
			t.Fatalf("closed page: %q", got)
		}
		e.shot(h, "hub-frame-closed-vi.png")
		wantMsg(t, h.messages(1)[0], e.origin, "BANKHUB_CLOSE_LINK", "", "individual", since)

		// The shop's own form, posting to the page: refused (403), nothing moves.
		ltxid, u := e.token(t, "LINK_BANK_ACCOUNT", "en", "")
		h = framed(t, browser, e.shop, u)
		forged := &hubTab{t: t, shop: attach(t, browser, "")}
		forged.do(forged.shop, chromedp.Navigate(e.shop+"/forge?u="+url.QueryEscape(u)))
		if resp, err := chromedp.RunResponse(forged.shop, chromedp.Click(chromedp.ID("forge"))); err != nil || resp.Status != http.StatusForbidden {
			t.Fatalf("the shop's form: %v %v", resp, err)
		}
		_, body := e.m.call(t, "POST", "/v1/link-token/get", `{"link_token_xid":"`+ltxid+`"}`)
		if ss := body["data"].(map[string]any)["sessions"].([]any); len(ss) != 1 || ss[0].(map[string]any)["state"] != "INITIALIZED" {
			t.Fatalf("after the forged post: %v", body)
		}

		// Revoked while open: the next step ends the session on the page.
		h.pick("MB", "individual")
		if status, body := e.m.call(t, "POST", "/v1/link-token/revoke", `{"link_token_xid":"`+ltxid+`"}`); status != 200 {
			t.Fatalf("revoke: %d %v", status, body)
		}
		h.send(mbPerson, "#ended")
		if got := h.text("#ended"); got != "This link has expired" {
			t.Fatalf("revoked: %q", got)
		}
		wantMsg(t, h.messages(1)[0], e.origin, "BANKHUB_TOKEN_EXPIRED", "", "", since)

		// No step for 15 minutes (a sweep of a later time ends the session):
		// the next step says so, and "Try again" starts a new session.
		db, err := sqlstore.Open(t.Context(), e.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, u = e.token(t, "LINK_BANK_ACCOUNT", "en", "")
		h = framed(t, browser, e.shop, u)
		if _, n, err := db.ExpireHubLinks(t.Context(), time.Now().Add(16*time.Minute)); err != nil || n == 0 {
			t.Fatalf("abandon: %d %v", n, err)
		}
		h.do(h.page, chromedp.Click(chromedp.CSS(`input[name=bank][value=MB]`)), submit("#next"), chromedp.WaitVisible(chromedp.ID("retry")))
		if got := h.text("#ended"); got != "Session expired" {
			t.Fatalf("idle: %q", got)
		}
		wantMsg(t, h.messages(1)[0], e.origin, "BANKHUB_SESSION_EXPIRED", "", "", since)
		h.do(h.page, submit("#retry"), chromedp.WaitVisible(chromedp.CSS(`input[name=bank][value=MB]`)))
		h.pick("MB", "individual")

		// Expired while open (the sweep of a later time ends it).
		// (It also ends this test's earlier tokens that are still active.)
		if n, _, err := db.ExpireHubLinks(t.Context(), time.Now().Add(31*time.Minute)); err != nil || n == 0 {
			t.Fatalf("expire: %d %v", n, err)
		}
		h.send(mbPerson, "#ended")
		e.shot(h, "hub-frame-expired-en.png")
		wantMsg(t, h.messages(2)[1], e.origin, "BANKHUB_TOKEN_EXPIRED", "", "", since)
	})
}

// TestHubLinkBrowserPhone: on a phone-sized screen, in Vietnamese, the shop
// opens the page in a new tab and the customer links a Vietcombank account
// (the page posts to window.opener); in English, the page opened on its own
// (a mobile web view: nobody to post to) links a Techcombank business account.
func TestHubLinkBrowserPhone(t *testing.T) {
	t.Parallel()
	browser := browsertest.New(t, browsertest.Options{Mobile: true})
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newHubEnv(t, engine)
		since := time.Now().Add(-time.Second)
		_, u := e.token(t, "LINK_BANK_ACCOUNT", "vi", "")
		h := inNewTab(t, browser, e.shop, u, true)
		h.do(h.page, chromedp.WaitVisible(chromedp.CSS(`input[name=bank][value=VCB]`)))
		if got := h.text("h1"); got != "Chọn ngân hàng" {
			t.Fatalf("title %q", got)
		}
		e.shot(h, "hub-phone-pick-vi.png")
		// Each bank's name sits on one line, beside its radio button.
		bad, err := chromedp.Run(h.page, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".banks label")).filter(function (l) {
			var r = document.createRange(); r.selectNodeContents(l.lastChild);
			var text = r.getClientRects(), radio = l.querySelector("input").getBoundingClientRect();
			return text.length !== 1 || text[0].top >= radio.bottom || text[0].bottom <= radio.top;
		}).map(function (l) { return l.textContent; })`))
		if err != nil || len(bad) != 0 {
			t.Fatalf("bank names broken over lines on a phone: %q %v", bad, err)
		}
		h.pick("VCB", "individual")
		e.shot(h, "hub-phone-details-vi.png")
		h.send(vcbPerson, "#otp")
		if holder := h.text("#holder"); holder != "TRAN THI BINH" {
			t.Fatalf("holder %q", holder)
		}
		e.shot(h, "hub-phone-otp-vi.png")
		h.otp("123456", "#done")
		e.shot(h, "hub-phone-done-vi.png")
		wantMsg(t, h.messages(1)[0], e.origin, "FINISHED_BANK_ACCOUNT_LINK", vcbPerson[0], "individual", since)
		if a := e.account(t, vcbPerson[0]); a["link_state"] != "linked" || a["brand_name"] != "Vietcombank" {
			t.Fatalf("account: %v", a)
		}

		_, u = e.token(t, "LINK_BANK_ACCOUNT", "en", "")
		h = &hubTab{t: t, shop: attach(t, browser, "")}
		h.page = h.shop
		h.do(h.page, phone, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(`input[name=bank][value=TCB]`)))
		e.shot(h, "hub-phone-pick-en.png")
		h.pick("TCB", "enterprise")
		h.send(tcbCompany, "#otp")
		h.otp("654321", "#done")
		e.shot(h, "hub-phone-done-en.png")
		if got := h.text(".info"); got != "The account is linked." {
			t.Fatalf("done: %q", got)
		}
		if a := e.account(t, tcbCompany[0]); a["link_state"] != "linked" || a["account_type"] != "enterprise" {
			t.Fatalf("account: %v", a)
		}
	})
}
