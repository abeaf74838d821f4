package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"recon"
	"recon/dashboard"
	"recon/sqlstore/dbtest"
)

// The branding card of the settings (docs/dashboard.md, Settings, bank accounts and sandbox), both
// engines: an Admin sets the hosted pages' name and logo through the
// confirmation step, in Vietnamese, audited; the hub's rules refuse a bad
// logo address, naming the problem, and nothing is stored; other roles
// cannot; branding is per mode, as the hub keys it by tenant.
func TestDashboardBranding(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSettingsEnv(t, engine)
		ctx := context.Background()
		english := dashboard.EnglishWords(langAllow...)
		stored := func(tenant recon.TenantID) *recon.HubBranding {
			t.Helper()
			b, err := e.db.HubBranding(ctx, tenant)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		b := e.signedIn(t, "boss@saomai.vn")
		b.Lang = "vi"
		status, body := b.Get("/dashboard/settings")
		if status != 200 || !strings.Contains(body, `id="branding"`) || !strings.Contains(body, "Thương hiệu") || !strings.Contains(body, `id="branding-form"`) {
			t.Fatalf("settings: %d %s", status, body)
		}
		checkVietnamese(t, "/dashboard/settings", brandingCard(t, body), english)

		// The form leads to a confirmation page; nothing is stored yet.
		form := url.Values{"display_name": {"Cửa hàng <Hoa Sen>"}, "logo_url": {"https://cdn.hoasen.vn/logo.png"}, "primary_color": {"#0a7d3b"}, "secondary_color": {""}}
		status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/branding", form)
		if status != 200 || !strings.Contains(body, `id="confirm-what"`) || !strings.Contains(body, "Cửa hàng &lt;Hoa Sen&gt;") ||
			!strings.Contains(body, "https://cdn.hoasen.vn/logo.png") || !strings.Contains(body, `name="confirm" value="yes"`) {
			t.Fatalf("confirmation: %d %s", status, body)
		}
		checkVietnamese(t, "branding confirmation", body, english)
		if s := stored(e.live.id); s.DisplayName != "" || s.LogoURL != "" {
			t.Fatalf("stored before the confirmation: %+v", s)
		}
		// Confirmed: stored, shown, audited.
		form.Set("confirm", "yes")
		status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/branding", form)
		if status != http.StatusSeeOther || loc != "/dashboard/settings?saved=branding#branding" {
			t.Fatalf("save: %d %s", status, loc)
		}
		if s := stored(e.live.id); s.DisplayName != "Cửa hàng <Hoa Sen>" || s.LogoURL != "https://cdn.hoasen.vn/logo.png" || s.PrimaryColor != "#0a7d3b" || s.SecondaryColor != "" {
			t.Fatalf("stored: %+v", s)
		}
		if s := stored(e.test.id); s.DisplayName != "" || s.LogoURL != "" {
			t.Fatalf("the test mode's branding changed with the live one: %+v", s)
		}
		_, body = b.Get(loc)
		if !strings.Contains(body, `id="branding-saved"`) || !strings.Contains(body, `id="branding-name">Cửa hàng &lt;Hoa Sen&gt;</dd>`) ||
			!strings.Contains(body, "<code>https://cdn.hoasen.vn/logo.png</code>") || strings.Contains(body, "<Hoa Sen>") {
			t.Fatalf("settings after the save: %s", body)
		}
		checkVietnamese(t, "/dashboard/settings?saved=branding", brandingCard(t, body), english)
		entries, _, err := e.db.AuditEntries(ctx, e.live.id, recon.AuditFilter{Family: "branding", Page: 1, PerPage: 10})
		if err != nil || len(entries) != 1 || entries[0].Action != recon.AuditBrandingUpdate || entries[0].Actor.Email != "boss@saomai.vn" || len(entries[0].Changes) != 3 {
			t.Fatalf("audit: %+v %v", entries, err)
		}
		_, body = b.Get("/dashboard/audit?family=branding")
		if !strings.Contains(body, "Đổi thương hiệu") || !strings.Contains(body, "Địa chỉ logo") {
			t.Fatalf("audit page: %s", body)
		}

		// Refused by the hub's rules, before and at the confirmation: a 400
		// page in Vietnamese naming the problem, nothing stored or audited.
		for _, c := range []struct{ logo, says string }{
			{"http://cdn.hoasen.vn/logo.png", "phải bắt đầu bằng https://"},
			{"https://192.168.1.10/logo.png", "địa chỉ nội bộ"},
			{"https://127.0.0.1/logo.png", "địa chỉ nội bộ"},
			{"https://localhost/logo.png", "địa chỉ nội bộ"},
			{"https://[::1]/logo.png", "địa chỉ nội bộ"},
			{"https://cdn.hoasen.vn/" + strings.Repeat("a", 2000) + ".png", "quá dài"},
			{"https://cdn.hoasen.vn/a b.png", "dấu cách"},
		} {
			for _, confirm := range []string{"", "yes"} {
				status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/branding",
					url.Values{"display_name": {"Khác"}, "logo_url": {c.logo}, "confirm": {confirm}})
				if status != 400 || !strings.Contains(body, `id="branding-error"`) || !strings.Contains(body, c.says) {
					t.Errorf("logo %.40s (confirm %q): %d %s", c.logo, confirm, status, body)
					continue
				}
				checkVietnamese(t, "branding refused", brandingCard(t, body), english)
			}
		}
		status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/branding", url.Values{"display_name": {strings.Repeat("Â", 101)}, "confirm": {"yes"}})
		if status != 400 || !strings.Contains(body, "Tên hiển thị tối đa 100 ký tự") {
			t.Errorf("long name: %d %s", status, body)
		}
		status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/branding", url.Values{"primary_color": {"đỏ"}, "confirm": {"yes"}})
		if status != 400 || !strings.Contains(body, "Màu chính phải có dạng #rrggbb") {
			t.Errorf("bad colour: %d %s", status, body)
		}
		if s := stored(e.live.id); s.DisplayName != "Cửa hàng <Hoa Sen>" || s.LogoURL != "https://cdn.hoasen.vn/logo.png" {
			t.Fatalf("a refusal changed the branding: %+v", s)
		}
		if entries, _, _ := e.db.AuditEntries(ctx, e.live.id, recon.AuditFilter{Family: "branding", Page: 1, PerPage: 10}); len(entries) != 1 {
			t.Fatalf("a refusal was audited: %d entries", len(entries))
		}

		// Test mode: its own branding, saved there; the live one is kept.
		b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/settings"}})
		if _, body = b.Get("/dashboard/settings"); strings.Contains(body, "Hoa Sen") || !strings.Contains(body, `id="branding-form"`) {
			t.Fatalf("test-mode settings show the live branding: %s", body)
		}
		status, _, _ = b.PostFrom("/dashboard/settings", "/dashboard/settings/branding", url.Values{"display_name": {"Cửa hàng thử"}, "confirm": {"yes"}})
		if s := stored(e.test.id); status != http.StatusSeeOther || s.DisplayName != "Cửa hàng thử" || stored(e.live.id).DisplayName != "Cửa hàng <Hoa Sen>" {
			t.Fatalf("test-mode save: %d %+v", status, s)
		}
		b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/settings"}})

		// An Accountant or a Member cannot: no page, no form, a 403 POST; nothing changes.
		for _, email := range []string{"ketoan@saomai.vn", "nhanvien@saomai.vn"} {
			u := e.signedIn(t, email)
			if status, body := u.Get("/dashboard/settings"); status != 403 || strings.Contains(body, `id="branding-form"`) {
				t.Errorf("%s GET settings: %d", email, status)
			}
			token := u.CSRF("/dashboard/")
			if status, _, _ := u.Post("/dashboard/settings/branding", url.Values{"csrf": {token}, "display_name": {"Hacked"}, "confirm": {"yes"}}); status != 403 {
				t.Errorf("%s POST branding: %d", email, status)
			}
		}
		if s := stored(e.live.id); s.DisplayName != "Cửa hàng <Hoa Sen>" {
			t.Fatalf("refused roles changed the branding: %+v", s)
		}
	})
}

// brandingCard is the settings page's branding card (the page's other
// cards are checked by TestDashboardVietnamese).
func brandingCard(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<section class="card" id="branding">`)
	if i < 0 {
		t.Fatalf("no branding card: %s", page)
	}
	j := strings.Index(page[i:], "</section>")
	return page[i : i+j]
}
