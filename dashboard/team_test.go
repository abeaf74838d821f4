package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"recon"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/mail/mailtest"
	"recon/oauth"
	"recon/sqlstore/dbtest"
)

// The team's pages (docs/dashboard.md, Team) on a real server and a real
// SMTP server (mailtest), both engines: invitations and resets e-mailed
// and followed, one-time and expiring links, the company picker,
// deactivation that ends sessions and OAuth tokens, no enumeration, tenant
// isolation; and without SMTP, the links shown to the Admin.

var mailLink = regexp.MustCompile(`https?://\S+/dashboard/(invite|reset)\?t=[A-Za-z0-9_-]+`)

// linkIn is the one-time link of a received e-mail, as a path and query.
func linkIn(t *testing.T, m mailtest.Message) string {
	t.Helper()
	raw := mailLink.FindString(m.Text)
	if raw == "" {
		t.Fatalf("no link in the e-mail %q", m.Text)
	}
	if !strings.Contains(m.HTML, html.EscapeString(raw)) {
		t.Errorf("the HTML part lacks the link: %s", m.HTML)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

// setPassword sets the password through the link's form (with the form
// token of the public pages, which a used link's page no longer shows).
func setPassword(t *testing.T, b *testkit.Browser, link, password string) (int, string, string) {
	t.Helper()
	u, _ := url.Parse(link)
	return b.PostFrom("/dashboard/signin", u.Path, url.Values{"t": {u.Query().Get("t")}, "password": {password}, "confirm_password": {password}})
}

func userWith(t *testing.T, e *dashEnv, company recon.TenantID, email string, role recon.Role, password string) *recon.User {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u := &recon.User{Company: company.ID(), Email: email, Role: role, PasswordHash: string(h)}
	if err := e.db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDashboardTeam(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		smtp := mailtest.Start(t, mailtest.Options{STARTTLS: true, Username: "recon", Password: "smtp-secret"})
		clock := testkit.WallClock()
		e := newDashEnv(t, engine, func(h *dashboard.Handler) {
			h.Team.Mail = smtp.Sender(t, "Recon <no-reply@recon.example.vn>")
			h.Team.Clock = clock
		})
		admin := e.signedIn(t, "boss@saomai.vn")
		for _, c := range []struct {
			name string
			fn   func(*testing.T)
		}{
			{"Invite", func(t *testing.T) { teamInvite(t, e, smtp, clock, admin) }},
			{"Reset", func(t *testing.T) { teamReset(t, e, smtp, clock, admin) }},
			{"Deactivate", func(t *testing.T) { teamDeactivate(t, e, admin) }},
			{"Picker", func(t *testing.T) { teamPicker(t, e) }},
			{"ChangePassword", func(t *testing.T) { teamChangePassword(t, e) }},
			{"Isolation", func(t *testing.T) { teamIsolation(t, e, admin) }},
		} {
			if !t.Run(c.name, c.fn) {
				return
			}
		}
	})
}

// teamInvite: the Admin invites by e-mail; the e-mail (Vietnamese by
// default, English when asked) reaches the SMTP server with its link; the
// invited user cannot sign in before following it; the link sets the
// password once and lands signed in; a used or expired link is refused.
func teamInvite(t *testing.T, e *dashEnv, smtp *mailtest.Server, clock *testkit.Clock, admin *testkit.Browser) {
	status, body := admin.Get("/dashboard/users")
	if status != 200 || !strings.Contains(body, "boss@saomai.vn") || !strings.Contains(body, `id="invite"`) {
		t.Fatalf("team page: %d %s", status, body)
	}
	status, _, body = admin.PostFrom("/dashboard/users", "/dashboard/users/invite", url.Values{"email": {"Moi@SaoMai.vn"}, "role": {"Accountant"}, "permission": {"view_transactions"}})
	if status != 200 || !strings.Contains(body, `id="sent-mailed"`) || strings.Contains(body, `id="sent-link"`) {
		t.Fatalf("invite: %d %s", status, body)
	}
	m := smtp.NextTo(t, "moi@saomai.vn")
	if !strings.HasPrefix(m.Subject, "Lời mời tham gia Công ty TNHH Sao Mai") || !m.TLS || m.AuthUser != "recon" || !strings.Contains(m.Text, "boss@saomai.vn mời bạn") {
		t.Errorf("invitation e-mail: %q tls %v auth %q\n%s", m.Subject, m.TLS, m.AuthUser, m.Text)
	}
	link := linkIn(t, m)
	// Invited: listed as such, cannot sign in yet.
	if _, body := admin.Get("/dashboard/users"); !strings.Contains(body, "moi@saomai.vn") || !strings.Contains(body, "tm_invited") {
		t.Errorf("the invited user is not listed as invited: %s", body)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "moi@saomai.vn", ""); status != http.StatusUnauthorized {
		t.Errorf("sign in before accepting: %d", status)
	}
	// The link's page names the address and the company; bad passwords are refused.
	b := e.browser(t)
	status, body = b.Get(link)
	if status != 200 || !strings.Contains(body, "moi@saomai.vn") || !strings.Contains(body, "Công ty TNHH Sao Mai") {
		t.Fatalf("invitation page: %d %s", status, body)
	}
	u, _ := url.Parse(link)
	tok := u.Query().Get("t")
	for name, f := range map[string]url.Values{
		"mismatch": {"t": {tok}, "password": {"new password 1"}, "confirm_password": {"new password 2"}},
		"short":    {"t": {tok}, "password": {"short"}, "confirm_password": {"short"}},
	} {
		if status, _, body := b.PostFrom(link, "/dashboard/invite", f); status != http.StatusBadRequest || !strings.Contains(body, `id="link-error"`) {
			t.Errorf("%s: %d %s", name, status, body)
		}
	}
	status, loc, _ := setPassword(t, b, link, "mật khẩu mới 123")
	if status != http.StatusSeeOther || loc != "/dashboard/" {
		t.Fatalf("accept: %d %s", status, loc)
	}
	if status, body := b.Get("/dashboard/"); status != 200 || !strings.Contains(body, "moi@saomai.vn") {
		t.Fatalf("signed in after accepting: %d", status)
	}
	// Used: refused on the page and on the form.
	if status, body := e.browser(t).Get(link); status != http.StatusGone || !strings.Contains(body, "already used") {
		t.Errorf("used link: %d %s", status, body)
	}
	if status, _, _ := setPassword(t, e.browser(t), link, "another password"); status != http.StatusGone {
		t.Errorf("used link posted: %d", status)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "moi@saomai.vn", "mật khẩu mới 123"); status != http.StatusSeeOther {
		t.Errorf("sign in with the new password: %d", status)
	}
	// Already a member: refused in words, nothing sent.
	if status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/invite", url.Values{"email": {"moi@saomai.vn"}, "role": {"Member"}}); status != http.StatusConflict || !strings.Contains(body, "already belongs") {
		t.Errorf("invite a member: %d %s", status, body)
	}
	// English when asked; expired after seven days.
	if status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/invite", url.Values{"email": {"late@saomai.vn"}, "role": {"Member"}, "lang": {"en"}}); status != 200 {
		t.Fatalf("invite late: %d %s", status, body)
	}
	m = smtp.NextTo(t, "late@saomai.vn")
	if m.Subject != "Invitation to Công ty TNHH Sao Mai on Recon" {
		t.Errorf("English invitation: %q", m.Subject)
	}
	late := linkIn(t, m)
	clock.Advance(recon.InviteTTL + time.Minute)
	defer clock.Advance(-recon.InviteTTL - time.Minute)
	if status, body := e.browser(t).Get(late); status != http.StatusGone || !strings.Contains(body, "expired") {
		t.Errorf("expired link: %d %s", status, body)
	}
	if status, _, _ := setPassword(t, e.browser(t), late, "late password 1"); status != http.StatusGone {
		t.Errorf("expired link posted: %d", status)
	}
	// An unknown token.
	if status, _ := e.browser(t).Get("/dashboard/invite?t=nothing"); status != http.StatusNotFound {
		t.Errorf("unknown link: %d", status)
	}
}

// teamReset: a forgotten password by e-mail; the answer is the same for an
// unknown address (which gets no e-mail); the link resets once; expired
// links are refused; the Admin's reset e-mail for one user.
func teamReset(t *testing.T, e *dashEnv, smtp *mailtest.Server, clock *testkit.Clock, admin *testkit.Browser) {
	csrf := regexp.MustCompile(`name="csrf" value="[^"]+"`)
	ask := func(email string) (int, string) {
		b := e.browser(t)
		status, _, body := b.PostFrom("/dashboard/forgot", "/dashboard/forgot", url.Values{"email": {email}})
		return status, csrf.ReplaceAllString(body, "")
	}
	stranger, strangerBody := ask("nobody@saomai.vn")
	known, knownBody := ask("ketoan@saomai.vn")
	if stranger != 200 || known != 200 || strangerBody != strings.ReplaceAll(knownBody, "ketoan@saomai.vn", "nobody@saomai.vn") || !strings.Contains(knownBody, `id="forgot-sent"`) {
		t.Errorf("the answers differ: %d %d\n%s\n%s", stranger, known, strangerBody, knownBody)
	}
	m := smtp.Next(t)
	if len(m.To) != 1 || m.To[0] != "ketoan@saomai.vn" || m.Subject != "Đặt lại mật khẩu Recon" {
		t.Fatalf("reset e-mail: %v %q", m.To, m.Subject)
	}
	link := linkIn(t, m)
	b := e.browser(t)
	if status, loc, _ := setPassword(t, b, link, "ketoan mới 2026"); status != http.StatusSeeOther || loc != "/dashboard/" {
		t.Fatalf("reset: %d %s", status, loc)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "ketoan@saomai.vn", dashPassword); status != http.StatusUnauthorized {
		t.Errorf("the old password still works: %d", status)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "ketoan@saomai.vn", "ketoan mới 2026"); status != http.StatusSeeOther {
		t.Errorf("the new password: %d", status)
	}
	if status, _, _ := setPassword(t, e.browser(t), link, "again and again"); status != http.StatusGone {
		t.Errorf("used reset link: %d", status)
	}
	// Expired after an hour.
	if status, _ := ask("ketoan@saomai.vn"); status != 200 {
		t.Fatal(status)
	}
	expired := linkIn(t, smtp.NextTo(t, "ketoan@saomai.vn"))
	clock.Advance(recon.ResetTTL)
	if status, _, _ := setPassword(t, e.browser(t), expired, "too late 2026"); status != http.StatusGone {
		t.Errorf("expired reset link: %d", status)
	}
	clock.Advance(-recon.ResetTTL)
	// The Admin e-mails a reset for one user.
	id := e.userIDs["nhanvien@saomai.vn"]
	if status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/"+id+"/reset", url.Values{}); status != 200 || !strings.Contains(body, `id="sent-mailed"`) {
		t.Fatalf("admin reset: %d %s", status, body)
	}
	if m := smtp.NextTo(t, "nhanvien@saomai.vn"); !strings.Contains(m.Text, "Công ty TNHH Sao Mai") {
		t.Errorf("admin reset e-mail: %s", m.Text)
	}
}

// teamDeactivate: the Admin deactivates a user after a confirmation: its
// open session ends, it cannot sign in, its OAuth token stops working; the
// Admin cannot deactivate itself; reactivation lets it in again.
func teamDeactivate(t *testing.T, e *dashEnv, admin *testkit.Browser) {
	ctx := context.Background()
	victim := userWith(t, e, e.live.id, "tam@saomai.vn", recon.RoleAdmin, dashPassword)
	id := itoa(victim.ID)
	open := e.browser(t).SignedIn(e.live.company, "tam@saomai.vn", dashPassword)
	client := &recon.Client{Company: e.live.id.ID(), Name: "shop", Scopes: []string{"transaction:read"}}
	if _, err := oauth.RegisterClient(ctx, e.db, client, false); err != nil {
		t.Fatal(err)
	}
	issued, err := e.auth.IssueToken(ctx, client.ID, "tam@saomai.vn", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.auth.Authenticate(ctx, issued.Token); err != nil {
		t.Fatalf("the token before: %v", err)
	}
	// A POST without the confirmation shows the step and changes nothing.
	if status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/"+id+"/deactivate", url.Values{}); status != 200 || !strings.Contains(body, "tam@saomai.vn") {
		t.Fatalf("unconfirmed: %d %s", status, body)
	}
	if status, _ := open.Get("/dashboard/"); status != 200 {
		t.Fatalf("the session ended without a confirmation: %d", status)
	}
	status, loc, _ := admin.Confirm("/dashboard/users/" + id + "/deactivate")
	if status != http.StatusSeeOther || loc != "/dashboard/users?done=deactivated" {
		t.Fatalf("deactivate: %d %s", status, loc)
	}
	if resp, _ := open.Do("GET", "/dashboard/", nil, nil); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/dashboard/signin") {
		t.Errorf("the open session still works: %d", resp.StatusCode)
	}
	if status, body := e.browser(t).SignIn(e.live.company, "tam@saomai.vn", dashPassword); status != http.StatusUnauthorized || !strings.Contains(body, "The e-mail address or password is wrong.") {
		t.Errorf("a deactivated user signs in: %d", status)
	}
	if _, err := e.auth.Authenticate(ctx, issued.Token); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Errorf("the deactivated user's token: %v", err)
	}
	if _, err := e.auth.IssueToken(ctx, client.ID, "tam@saomai.vn", nil, time.Hour); recon.ErrorCode(err) != recon.EFORBIDDEN {
		t.Errorf("a token issued to a deactivated user: %v", err)
	}
	if _, body := admin.Get("/dashboard/users"); !strings.Contains(body, "tm_deactivated") {
		t.Errorf("not listed as deactivated")
	}
	// Twice, oneself.
	if status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/"+id+"/deactivate", url.Values{"confirm": {"yes"}}); status != http.StatusConflict || !strings.Contains(body, "deactivated") {
		t.Errorf("deactivate twice: %d %s", status, body)
	}
	if status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/"+e.userIDs["boss@saomai.vn"]+"/deactivate", url.Values{"confirm": {"yes"}}); status != http.StatusForbidden || !strings.Contains(body, "yourself") {
		t.Errorf("deactivate oneself: %d %s", status, body)
	}
	// A Member may not.
	member := e.signedIn(t, "nhanvien@saomai.vn")
	if status, _, _ := member.Post("/dashboard/users/"+id+"/reactivate", url.Values{"csrf": {member.CSRF("/dashboard/")}}); status != http.StatusForbidden {
		t.Errorf("a Member reactivates: %d", status)
	}
	if status, loc, _ := admin.PostFrom("/dashboard/users", "/dashboard/users/"+id+"/reactivate", url.Values{}); status != http.StatusSeeOther || loc != "/dashboard/users?done=reactivated" {
		t.Fatalf("reactivate: %d %s", status, loc)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "tam@saomai.vn", dashPassword); status != http.StatusSeeOther {
		t.Errorf("a reactivated user: %d", status)
	}
}

// teamPicker: an address in two companies with the same password picks
// one after signing in, and switches later; with different passwords,
// each password signs in to its own company only.
func teamPicker(t *testing.T, e *dashEnv) {
	a := userWith(t, e, e.live.id, "chung@saomai.vn", recon.RoleAccountant, dashPassword)
	bu := userWith(t, e, e.other.id, "chung@saomai.vn", recon.RoleAdmin, dashPassword)
	userWith(t, e, e.live.id, "rieng@saomai.vn", recon.RoleMember, "password of A")
	userWith(t, e, e.other.id, "rieng@saomai.vn", recon.RoleMember, "password of B")

	b := e.browser(t)
	status, loc, _ := b.Post("/dashboard/signin", url.Values{"csrf": {b.CSRF("/dashboard/signin")}, "email": {"chung@saomai.vn"}, "password": {dashPassword}})
	if status != http.StatusSeeOther || loc != "/dashboard/companies?signin=1" {
		t.Fatalf("sign in to two companies: %d %s", status, loc)
	}
	status, body := b.Get(loc)
	if status != 200 || !strings.Contains(body, `id="pick-`+itoa(a.ID)+`"`) || !strings.Contains(body, `id="pick-`+itoa(bu.ID)+`"`) {
		t.Fatalf("picker: %d %s", status, body)
	}
	if status, loc, _ := b.PostFrom("/dashboard/companies", "/dashboard/companies", url.Values{"user": {itoa(bu.ID)}}); status != http.StatusSeeOther || loc != "/dashboard/" {
		t.Fatalf("pick: %d %s", status, loc)
	}
	if _, body := b.Get("/dashboard/transactions"); !strings.Contains(body, "OTHER COMPANY") || strings.Contains(body, "TEST-ONLY") || !strings.Contains(body, `id="switch-company"`) {
		t.Errorf("after picking the other company: %s", body)
	}
	// Another company's user of another address is no choice.
	if status, _, _ := b.PostFrom("/dashboard/companies", "/dashboard/companies", url.Values{"user": {e.userIDs["boss@saomai.vn"]}}); status != http.StatusNotFound {
		t.Errorf("switch to a stranger's user: %d", status)
	}
	if status, _, _ := b.PostFrom("/dashboard/companies", "/dashboard/companies", url.Values{"user": {itoa(a.ID)}}); status != http.StatusSeeOther {
		t.Errorf("switch back: %d", status)
	}
	if _, body := b.Get("/dashboard/"); !strings.Contains(body, "chung@saomai.vn") {
		t.Errorf("after switching back: %s", body)
	}
	// Different passwords: each its own company, no picker.
	for pw, company := range map[string]*tenant{"password of A": e.live, "password of B": e.other} {
		c := e.browser(t)
		status, loc, _ := c.Post("/dashboard/signin", url.Values{"csrf": {c.CSRF("/dashboard/signin")}, "email": {"rieng@saomai.vn"}, "password": {pw}})
		if status != http.StatusSeeOther || loc != "/dashboard/" {
			t.Errorf("%s: %d %s", pw, status, loc)
			continue
		}
		_, page := c.Get("/dashboard/companies")
		if strings.Count(page, `name="user"`) != 1 || !strings.Contains(page, `data-company="`+company.company+`"`) {
			t.Errorf("%s: choices %s", pw, page)
		}
	}
}

// teamChangePassword: one's own password needs the current one; the other
// sessions end, this one stays.
func teamChangePassword(t *testing.T, e *dashEnv) {
	userWith(t, e, e.live.id, "doi@saomai.vn", recon.RoleMember, dashPassword)
	b := e.browser(t).SignedIn(e.live.company, "doi@saomai.vn", dashPassword)
	other := e.browser(t).SignedIn(e.live.company, "doi@saomai.vn", dashPassword)
	for name, c := range map[string]struct {
		form url.Values
		want string
	}{
		"wrong current": {url.Values{"current": {"nope nope"}, "new": {"brand new pw"}, "confirm_new": {"brand new pw"}}, "current password is wrong"},
		"mismatch":      {url.Values{"current": {dashPassword}, "new": {"brand new pw"}, "confirm_new": {"brand new pX"}}, "differ"},
		"short":         {url.Values{"current": {dashPassword}, "new": {"short"}, "confirm_new": {"short"}}, "at least 8"},
	} {
		if status, _, body := b.PostFrom("/dashboard/account", "/dashboard/account/password", c.form); status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", name, status, body)
		}
	}
	if status, loc, _ := b.PostFrom("/dashboard/account", "/dashboard/account/password", url.Values{"current": {dashPassword}, "new": {"brand new pw"}, "confirm_new": {"brand new pw"}}); status != http.StatusSeeOther || loc != "/dashboard/account?saved=password" {
		t.Fatalf("change: %d %s", status, loc)
	}
	if status, _ := b.Get("/dashboard/account"); status != 200 {
		t.Errorf("this session ended: %d", status)
	}
	if resp, _ := other.Do("GET", "/dashboard/", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the other session still works: %d", resp.StatusCode)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "doi@saomai.vn", "brand new pw"); status != http.StatusSeeOther {
		t.Errorf("the new password: %d", status)
	}
	// The language of one's e-mails.
	if status, _, _ := b.PostFrom("/dashboard/account", "/dashboard/account/lang", url.Values{"lang": {"fr"}}); status != http.StatusBadRequest {
		t.Errorf("lang fr: %d", status)
	}
	if status, _, _ := b.PostFrom("/dashboard/account", "/dashboard/account/lang", url.Values{"lang": {"en"}}); status != http.StatusSeeOther {
		t.Errorf("lang en: %d", status)
	}
}

// teamIsolation: the Admin of one company reaches no user of another.
func teamIsolation(t *testing.T, e *dashEnv, admin *testkit.Browser) {
	stranger := userWith(t, e, e.other.id, "la@khac.vn", recon.RoleMember, dashPassword)
	id := itoa(stranger.ID)
	for _, p := range []string{"/deactivate", "/reactivate", "/reset", "/invite", "/role"} {
		if status, _, _ := admin.PostFrom("/dashboard/users", "/dashboard/users/"+id+p, url.Values{"confirm": {"yes"}, "role": {"Member"}}); status != http.StatusNotFound {
			t.Errorf("%s of another company's user: %d", p, status)
		}
	}
	if status, _ := admin.Get("/dashboard/users/" + id + "/deactivate"); status != http.StatusNotFound {
		t.Errorf("confirmation of another company's user: %d", status)
	}
	if status, _ := e.browser(t).SignIn(e.other.company, "la@khac.vn", dashPassword); status != http.StatusSeeOther {
		t.Errorf("the other company's user was changed: %d", status)
	}
}

// TestDashboardTeamWithoutSMTP: with no SMTP server the invitation and the
// Admin's reset link are shown to the Admin, who gives them; the invitee
// follows the shown link. The forgotten-password page says to ask an Admin.
func TestDashboardTeamWithoutSMTP(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		admin := e.signedIn(t, "boss@saomai.vn")
		admin.Lang = "vi"
		status, _, body := admin.PostFrom("/dashboard/users", "/dashboard/users/invite", url.Values{"email": {"moi@saomai.vn"}, "role": {"Member"}})
		shown := regexp.MustCompile(`<code id="sent-link">([^<]+)</code>`).FindStringSubmatch(body)
		if status != 200 || shown == nil || !strings.Contains(body, "Hãy gửi liên kết mời này cho") {
			t.Fatalf("invite without SMTP: %d %s", status, body)
		}
		u, _ := url.Parse(html.UnescapeString(shown[1]))
		b := e.browser(t)
		if status, loc, _ := setPassword(t, b, u.RequestURI(), "mật khẩu 2026"); status != http.StatusSeeOther || loc != "/dashboard/" {
			t.Fatalf("accept: %d %s", status, loc)
		}
		// Again for an invited user makes a new link, the old one stops working.
		admin.PostFrom("/dashboard/users", "/dashboard/users/invite", url.Values{"email": {"cho@saomai.vn"}, "role": {"Member"}})
		var pending *recon.User
		if pending, _ = e.db.UserByEmail(context.Background(), e.live.id.ID(), "cho@saomai.vn"); pending == nil {
			t.Fatal("no invited user")
		}
		_, _, first := admin.PostFrom("/dashboard/users", "/dashboard/users/"+itoa(pending.ID)+"/invite", url.Values{})
		_, _, second := admin.PostFrom("/dashboard/users", "/dashboard/users/"+itoa(pending.ID)+"/invite", url.Values{})
		l1 := regexp.MustCompile(`<code id="sent-link">([^<]+)</code>`).FindStringSubmatch(first)
		l2 := regexp.MustCompile(`<code id="sent-link">([^<]+)</code>`).FindStringSubmatch(second)
		if l1 == nil || l2 == nil || l1[1] == l2[1] {
			t.Fatalf("invite again: %v %v", l1, l2)
		}
		u1, _ := url.Parse(html.UnescapeString(l1[1]))
		if status, _ := e.browser(t).Get(u1.RequestURI()); status != http.StatusNotFound {
			t.Errorf("the replaced link: %d", status)
		}
		// The Admin's reset link, shown.
		_, _, body = admin.PostFrom("/dashboard/users", "/dashboard/users/"+e.userIDs["ketoan@saomai.vn"]+"/reset", url.Values{})
		shown = regexp.MustCompile(`<code id="sent-link">([^<]+)</code>`).FindStringSubmatch(body)
		if shown == nil {
			t.Fatalf("reset link without SMTP: %s", body)
		}
		u, _ = url.Parse(html.UnescapeString(shown[1]))
		if status, _, _ := setPassword(t, e.browser(t), u.RequestURI(), "ketoan 2026 mới"); status != http.StatusSeeOther {
			t.Errorf("admin reset: %d", status)
		}
		// The sign-in page links no e-mail form; the forgotten-password page says to ask an Admin.
		if _, body := e.browser(t).Get("/dashboard/signin"); !strings.Contains(body, `id="forgot-admin"`) {
			t.Errorf("sign-in page without SMTP: %s", body)
		}
		if status, body := e.browser(t).Get("/dashboard/forgot"); status != 200 || !strings.Contains(body, `id="forgot-no-mail"`) {
			t.Errorf("forgot page without SMTP: %d", status)
		}
	})
}
