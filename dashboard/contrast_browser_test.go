package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"recon/sqlstore/dbtest"
	"recon/web/browsertest"
)

// contrastJS measures the WCAG 2 contrast ratio of every visible element
// holding text (its own text nodes, or a control's value) against its
// effective background: the background colours from the element up to the
// root, composed over white. It returns how many it measured and those
// under 4.5:1, or 3:1 for large text (24px, or 18.66px bold).
const contrastJS = `(() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const over = (top, bottom) => ({r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a), a: 1});
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let out = {r: 255, g: 255, b: 255, a: 1};
    for (let i = layers.length - 1; i >= 0; i--) out = over(layers[i], out);
    return out;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const bad = [];
  let measured = 0;
  for (const el of document.querySelectorAll('body *')) {
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    const control = el.matches('input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=file]), select, textarea') && el.value !== '';
    if (!ownText && !control) continue;
    const box = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    if (box.width === 0 || box.height === 0 || box.right < 0 || box.bottom < 0 || cs.visibility === 'hidden' || cs.display === 'none') continue;
    const bg = background(el);
    const fg = over(parse(el instanceof SVGElement ? cs.fill : cs.color) || {r: 0, g: 0, b: 0, a: 1}, bg);
    const l1 = lum(fg), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
    const min = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    measured++;
    if (ratio < min - 0.005) {
      bad.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined ? '.' + el.className.replace(/\s+/g, '.') : '') +
        ' "' + (control ? el.value : el.textContent).trim().slice(0, 40) + '" ' + ratio.toFixed(2) + ':1 (' + cs.color + ' on rgb(' + [bg.r, bg.g, bg.b].map(Math.round).join(', ') + '))');
    }
  }
  return {measured, bad};
})()`

type contrastResult struct {
	Measured int      `json:"measured"`
	Bad      []string `json:"bad"`
}

// TestDashboardContrastBrowser visits every dashboard screen in headless
// Chromium as an Admin, in live and in test mode (with a detail page of
// each list, a refused filter and the error page), and fails on any text
// under the WCAG 2 AA contrast ratio.
func TestDashboardContrastBrowser(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		e.pendingRefund(t, 50000) // a refund's page with its instructions and QR
		ctx := browsertest.New(t, browsertest.Options{})
		do, click, text := browsertest.Steps(t, ctx)
		check := func(path string) {
			t.Helper()
			do(path, chromedp.Navigate(e.base+path), chromedp.WaitReady("body"))
			res, err := chromedp.Run(ctx, chromedp.Evaluate[contrastResult](contrastJS))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if res.Measured < 5 {
				t.Errorf("%s: only %d text elements measured", path, res.Measured)
			}
			for _, b := range res.Bad {
				t.Errorf("%s: %s", path, b)
			}
		}
		firstLink := func(prefix string) string {
			t.Helper()
			href, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
				`(document.querySelector('main a[href^=%q]') || {getAttribute: () => ''}).getAttribute('href')`, prefix)))
			if err != nil {
				t.Fatal(err)
			}
			return href
		}
		do("language", chromedp.Navigate(e.base+"/dashboard/lang/en?back=/dashboard/signin"), chromedp.WaitVisible("#email"))
		check("/dashboard/signin")
		signInAdmin(t, e, do, click)
		for _, mode := range []string{"live", "test"} {
			if mode == "test" {
				do("settings", chromedp.Navigate(e.base+"/dashboard/settings"), chromedp.WaitVisible("#switch-mode"))
				click("#switch-mode")
				if !strings.Contains(text("#mode-now"), "Test") {
					t.Fatal("not in test mode")
				}
			}
			for _, list := range []struct{ path, detail string }{
				{"/dashboard/", ""}, {"/dashboard/transactions", "/dashboard/transactions/"}, {"/dashboard/orders", "/dashboard/order?"},
				{"/dashboard/exceptions", "/dashboard/exceptions/"}, {"/dashboard/notifications", "/dashboard/notifications/"},
				{"/dashboard/bank-accounts", ""}, {"/dashboard/settings", ""}, {"/dashboard/sandbox", ""},
				{"/dashboard/transactions?from_date=nope", ""}, {"/dashboard/no-such-page", ""},
				{"/dashboard/refunds", "/dashboard/refunds/"}, {"/dashboard/report", ""},
			} {
				check(list.path)
				if list.detail == "" {
					continue
				}
				if href := firstLink(list.detail); href != "" {
					check(href)
				} else if mode == "live" {
					t.Errorf("%s links no %s page", list.path, list.detail)
				}
			}
		}
	})
}
