package browsertest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"recon/web/browsertest"
)

// The browser starts, loads a page from a loopback server and runs its
// script: the helper every browser test stands on works.
func TestBrowserRunsAPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="p">static</p><script>document.getElementById("p").textContent = "ran " + (6*7)</script>`)
	}))
	defer srv.Close()
	ctx := browsertest.New(t, browsertest.Options{})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("#p"))
	if err != nil {
		t.Fatal(err)
	}
	if text != "ran 42" {
		t.Fatalf("page text = %q, want the script's %q", text, "ran 42")
	}
}
