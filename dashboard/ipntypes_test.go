package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"recon"
)

// checkedTypes reads the checked notification types of the settings page's
// IPN form.
var checkedType = regexp.MustCompile(`name="notification_type" value="([A-Z_]+)" id="nt-[A-Z_]+" checked`)

func checkedTypes(body string) []string {
	var out []string
	for _, m := range checkedType.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// dashIPNTypes: the IPN form has a checkbox per notification type, named in
// the page's language (the Vietnamese page shows no English name of a
// type), the v1 types checked for a target that never chose; a save
// replaces them by the rules of PUT /v1/ipn (none checked is refused and
// changes nothing), with the form's CSRF token; a save without the
// checkboxes (a rotation) keeps them.
func dashIPNTypes(t *testing.T, e *dashEnv) {
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
	_, body := b.Get("/dashboard/settings")
	if got := checkedTypes(body); !slices.Equal(got, recon.DefaultIPNTypes) || !strings.Contains(body, `id="nt-ORDER_PARTIALLY_PAID"`) ||
		!strings.Contains(body, "Order partly paid") {
		t.Fatalf("the IPN form of a target that never chose: checked %v\n%s", got, body)
	}
	vi := e.signedIn(t, "boss@saomai.vn")
	vi.Lang = "vi"
	_, body = vi.Get("/dashboard/settings")
	form := body[strings.Index(body, `id="ipn-types"`):]
	form = form[:strings.Index(form, "</fieldset>")]
	for _, en := range []string{"Order paid", "partly", "expired", "Refund", "voided", "Notifications sent"} {
		if strings.Contains(form, en) {
			t.Errorf("the Vietnamese IPN form shows %q:\n%s", en, form)
		}
	}
	if !strings.Contains(form, "Đơn hàng được thanh toán một phần") || !strings.Contains(form, "Thông báo gửi đến địa chỉ này") {
		t.Errorf("the Vietnamese IPN form:\n%s", form)
	}
	// Without the form's CSRF token: refused, nothing saved.
	if status, _ := b.Do("POST", "/dashboard/settings/ipn", url.Values{"ipn_url": {before.URL}, "auth_type": {before.AuthType}, "active": {"1"},
		"notification_types": {"shown"}, "notification_type": {"ORDER_EXPIRED"}}, nil); status.StatusCode != http.StatusForbidden {
		t.Errorf("a save without the CSRF token: %d", status.StatusCode)
	}
	form2 := func(types ...string) url.Values {
		return url.Values{"ipn_url": {before.URL}, "auth_type": {before.AuthType}, "active": {"1"}, "notification_types": {"shown"}, "notification_type": types}
	}
	status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", form2())
	if status != 400 || !strings.Contains(body, `id="ipn-error"`) || !strings.Contains(body, "notification_types needs at least one of") || stored().Settings != before.Settings {
		t.Fatalf("none checked: %d, settings %s\n%s", status, stored().Settings, body)
	}
	status, _, body = b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", form2("ORDER_PAID", "NOPE"))
	if status != 400 || !strings.Contains(body, `unknown notification type &#34;NOPE&#34;`) || stored().Settings != before.Settings {
		t.Fatalf("an unknown type: %d, settings %s\n%s", status, stored().Settings, body)
	}
	status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", form2("ORDER_PAID", "ORDER_PARTIALLY_PAID", "ORDER_EXPIRED"))
	if got := stored(); status != http.StatusSeeOther || got.Settings != `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID","ORDER_EXPIRED"]}` {
		t.Fatalf("save: %d %s, settings %s", status, loc, got.Settings)
	}
	if _, body = b.Get(loc); !slices.Equal(checkedTypes(body), []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID", "ORDER_EXPIRED"}) {
		t.Fatalf("after saving: checked %v", checkedTypes(body))
	}
	// A rotation (no checkboxes) keeps them; then back to the v1 types.
	b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn-signing-secret", url.Values{"confirm": {"yes"}})
	if got := stored(); got.Settings != `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID","ORDER_EXPIRED"]}` || got.SigningSecret == before.SigningSecret {
		t.Fatalf("after a rotation: %+v", got)
	}
	if status, _, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/ipn", form2(recon.DefaultIPNTypes...)); status != http.StatusSeeOther {
		t.Fatalf("back to the v1 types: %d", status)
	}
}
