package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardTeamBrowser walks the team in headless Chromium, in
// Vietnamese, on a phone's width: the Admin signs in with e-mail and
// password, invites a user from the Team page (no SMTP: the link is shown),
// signs out; the invitee opens the link, sets a password and lands signed
// in, then finds the account page in the menu. Screenshots under make screenshots.
func TestDashboardTeamBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := browsertest.New(t, browsertest.Options{Mobile: true, Language: "vi"})
		do, click, text := browsertest.Steps(t, ctx)
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		do("sign-in page", chromedp.Navigate(e.base+"/dashboard/lang/vi?back=/dashboard/signin"), chromedp.WaitVisible("#email"))
		if got := text("main"); strings.Contains(got, "Mã công ty") || !strings.Contains(got, "Quên mật khẩu?") {
			t.Errorf("sign-in page: %q", got)
		}
		shot("dashboard-team-signin.png")
		do("sign in", chromedp.SendKeys("#email", "boss@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
		click("#signin")
		do("team page", chromedp.Navigate(e.base+"/dashboard/users"), chromedp.WaitVisible("#inv-email"))
		if got := text("#user-rows"); !strings.Contains(got, "Quản trị viên") || !strings.Contains(got, "Đang hoạt động") {
			t.Errorf("team list: %q", got)
		}
		do("invite", chromedp.SendKeys("#inv-email", "moi@saomai.vn"))
		click("#invite")
		link := text("#sent-link")
		if !strings.Contains(link, "/dashboard/invite?t=") || !strings.Contains(text("#sent-link-intro"), "Hãy gửi liên kết mời này cho") {
			t.Fatalf("shown link %q", link)
		}
		shot("dashboard-team.png")
		click("#signout")

		do("invitation", chromedp.Navigate(link), chromedp.WaitVisible("#password"))
		if got := text("#link-email"); got != "moi@saomai.vn" {
			t.Errorf("invitation for %q", got)
		}
		shot("dashboard-team-invite.png")
		do("password", chromedp.SendKeys("#password", "mật khẩu mới 2026"), chromedp.SendKeys("#confirm_password", "mật khẩu mới 2026"))
		click("#set-password")
		click("#nav-account") // the header's name is hidden on a phone; the menu has the account
		if got := text("#account-email"); got != "moi@saomai.vn" {
			t.Errorf("signed in as %q", got)
		}
		if got := text("main"); !strings.Contains(got, "Đổi mật khẩu") || !strings.Contains(got, "Ngôn ngữ email") {
			t.Errorf("account page: %q", got)
		}
		shot("dashboard-team-account.png")
	})
}
