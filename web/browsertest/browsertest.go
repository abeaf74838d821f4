// Package browsertest drives Debian's chromium, headless, from Go tests
// through chromedp. Without a browser the tests that need one skip with a
// loud message, or fail when RECON_TEST_REQUIRE_CHROMIUM=1 (CI sets it and
// installs chromium when missing), as the PostgreSQL half of the suite does.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"recon/internal/testkit"
)

const (
	// EnvRequire makes a missing browser fail the test instead of skipping it.
	EnvRequire = "RECON_TEST_REQUIRE_CHROMIUM"
	// EnvBrowser names the browser binary when it is not on the PATH.
	EnvBrowser = "RECON_CHROMIUM"
	// EnvScreenshots names a folder to write screenshots into (make
	// screenshots sets it to docs/img); without it Screenshot does nothing,
	// so an ordinary test run never rewrites the docs.
	EnvScreenshots = "RECON_SCREENSHOTS"
)

// Binary returns the path of the browser, or "" when there is none.
func Binary() string {
	if p := os.Getenv(EnvBrowser); p != "" {
		return p
	}
	// Debian's /usr/bin/chromium is a shell wrapper that breaks the pipe
	// chromedp talks over; the binary behind it works.
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Options shape the browser window.
type Options struct {
	Width, Height int    // window size; 1280×900 when zero
	Mobile        bool   // a phone-sized window (390×844) with touch
	Language      string // Accept-Language, "en" when empty
}

// New starts a headless browser for t and returns a context for chromedp.Do
// and chromedp.Run (chromedp v0.23: actions are typed values, Run returns
// the value of one, Do runs several that return none); the browser ends
// with the test. The browser lives at most five minutes, so a page that never
// answers fails the test instead of hanging the suite; a step that waits
// should carry its own shorter deadline (context.WithTimeout of this one).
func New(t testing.TB, opt Options) context.Context {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "browsertest: no chromium found (apt-get install chromium, or set " + EnvBrowser + "); browser tests SKIPPED"
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(msg + " (" + EnvRequire + "=1 requires the browser)")
		}
		testkit.MarkHalf(testkit.HalfBrowser, testkit.HalfSkipped)
		t.Skip(msg)
	}
	testkit.MarkHalf(testkit.HalfBrowser, testkit.HalfRan)
	w, h := opt.Width, opt.Height
	if opt.Mobile {
		w, h = 390, 844
	}
	if w == 0 {
		w, h = 1280, 900
	}
	lang := opt.Language
	if lang == "" {
		lang = "en"
	}
	allocOpts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.WindowSize(w, h),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("lang", lang),
		chromedp.Flag("accept-lang", lang),
		// Containers often run as root without a usable sandbox or /dev/shm.
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	actx, acancel := chromedp.NewExecAllocator(ctx, allocOpts...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { bcancel(); acancel(); cancel() })
	// Start the browser now, so a browser that cannot start fails here.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", bin, err)
	}
	if opt.Mobile {
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(w), int64(h), chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
			t.Fatalf("browsertest: mobile viewport: %v", err)
		}
	}
	return bctx
}

// Screenshot writes a PNG of the whole page to name in the folder named by
// RECON_SCREENSHOTS, and does nothing when that is unset.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	write(t, ctx, name, chromedp.FullScreenshot(100))
}

// ScreenshotOnce takes a test's screenshots on one engine only, SQLite's
// (the pages are the same on both): Screenshot, which writes only when
// RECON_SCREENSHOTS is set.
func ScreenshotOnce(t testing.TB, ctx context.Context, engine string) func(name string) {
	return func(name string) {
		t.Helper()
		if engine == "sqlite" {
			Screenshot(t, ctx, name)
		}
	}
}

// Steps returns the steps of a test on the tab ctx, each failing t when the
// browser cannot take it: run actions, click (and wait for the page the
// click loads), read an element's text.
func Steps(t testing.TB, ctx context.Context) (do func(what string, actions ...chromedp.Action[chromedp.Void]), click func(sel string), text func(sel string) string) {
	do = func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	click = func(sel string) {
		t.Helper()
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(sel)); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	text = func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	return do, click, text
}

// ViewportScreenshot is Screenshot of what the window shows. Use it for a
// page that frames another site: Chromium's whole-page capture leaves such
// an iframe (it runs in a process of its own) blank.
func ViewportScreenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	write(t, ctx, name, chromedp.CaptureScreenshot())
}

func write(t testing.TB, ctx context.Context, name string, capture chromedp.Action[[]byte]) {
	t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, capture)
	if err != nil {
		t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
