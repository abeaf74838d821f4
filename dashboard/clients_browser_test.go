package dashboard_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon"
	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// TestDashboardClientsWebhookBrowser walks the settings' OAuth clients and
// hub webhook and the statement upload with its progress script in headless
// Chromium, both engines: a client made (its secret shown once) and
// revoked, the webhook made and its secret rotated, a file over the limit
// refused before it is sent, a good file uploaded with progress events and
// the page replaced in place; screenshots under make screenshots.
func TestDashboardClientsWebhookBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := browsertest.New(t, browsertest.Options{})
		do, click, text := browsertest.Steps(t, ctx)
		shot := browsertest.ScreenshotOnce(t, ctx, engine)
		signInAdmin(t, e, do, click)
		click("#nav-settings")

		// An OAuth client: made with the keyboard's fields, its secret shown once.
		do("client form", chromedp.SendKeys("#nc-name", "Kế toán ERP"))
		click("#create-client")
		id, secret := text("#new-client-id"), text("#new-secret")
		if id == "" || len(secret) < 40 {
			t.Fatalf("new client %q %q", id, secret)
		}
		shot("dashboard-settings-client.png")

		// The hub webhook: made by the form (a secret shown once), then rotated.
		do("webhook url", chromedp.SendKeys("#wh-url", e.rc.URL+"/hook"))
		click("#save-webhook")
		first := text("#new-secret")
		click("#nav-settings")
		if got := text("#webhook-masked"); got != recon.MaskSecret(first) {
			t.Errorf("masked webhook secret %q", got)
		}
		click("#rotate-webhook")
		if got := text("#new-secret"); got == first || got == "" {
			t.Errorf("rotated secret %q", got)
		}
		click("#nav-settings")
		do("to the webhook", chromedp.ScrollIntoView("#hub-webhook"))
		shot("dashboard-settings-webhook.png")

		// Revoked: gone from the list.
		click("#revoke-" + id)
		if got := text("#client-revoked"); !strings.Contains(got, "revoked") {
			t.Errorf("revoke notice %q", got)
		}

		// Upload: a file over the limit is refused by the script before it is sent.
		dir := t.TempDir()
		big := filepath.Join(dir, "big.csv")
		if err := os.WriteFile(big, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(big, recon.MaxStatementBytes+1); err != nil {
			t.Fatal(err)
		}
		do("bank accounts", chromedp.Navigate(e.base+"/dashboard/bank-accounts"), chromedp.WaitVisible("#upload-limit"),
			chromedp.SetUploadFiles("#up-file", []string{big}), chromedp.Click("#upload-button"), chromedp.WaitVisible("#upload-status.error"))
		if got := text("#upload-status"); !strings.Contains(got, "larger than the limit of 64 MiB") {
			t.Errorf("too large: %q", got)
		}
		shot("dashboard-upload-too-large.png")

		// A good file: the progress shows, the answer replaces the page in place.
		good := filepath.Join(dir, "good.csv")
		csv := "transaction_date,amount_in,amount_out,transaction_content,reference_number\n2026-10-02 08:00:00,150000,,browser upload,BRW001\n"
		if err := os.WriteFile(good, []byte(csv), 0o600); err != nil {
			t.Fatal(err)
		}
		// Record what the status line says while the upload runs.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.said = [];
			new MutationObserver(() => window.said.push(document.getElementById('upload-status').textContent))
				.observe(document.getElementById('upload-status'), {childList: true, characterData: true, subtree: true}); true`)); err != nil {
			t.Fatal(err)
		}
		do("upload", chromedp.SetUploadFiles("#up-file", []string{good}), chromedp.Click("#upload-button"), chromedp.WaitVisible("#upload-done"))
		if got := text("#upload-done"); !strings.Contains(got, "New transactions: 1") {
			t.Errorf("upload result %q", got)
		}
		said, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.said`))
		if err != nil || !containsAll(strings.Join(said, "|"), "Uploading… 100 %", "Uploaded: importing") {
			t.Errorf("progress said %q (%v)", said, err)
		}
		path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
		if err != nil || path != "/dashboard/bank-accounts" {
			t.Errorf("after the upload the page is %q (%v): the plain form posted instead", path, err)
		}
		shot("dashboard-upload-done.png")
	})
}

// signInAdmin signs the tab in as the live company's Admin, in English.
func signInAdmin(t *testing.T, e *dashEnv, do func(string, ...chromedp.Action[chromedp.Void]), click func(string)) {
	t.Helper()
	do("sign in", chromedp.Navigate(e.base+"/dashboard/lang/en?back=/dashboard/signin"), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", "boss@saomai.vn"), chromedp.SendKeys("#password", dashPassword))
	click("#signin")
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
