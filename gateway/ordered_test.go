package gateway_test

import (
	"context"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestIPNSettingsOrdered: PUT /v1/ipn takes ordered (docs/api.md, "IPN
// settings") as a JSON boolean: shown while true, kept by a PUT without it,
// refused with a 400 naming it for any other type (nothing stored), each
// merchant's its own.
func TestIPNSettingsOrdered(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		b := setup(t, engine)
		ordered := func(want bool) {
			t.Helper()
			target, err := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN)
			if err != nil || target.Ordered != want {
				t.Fatalf("stored target %+v, %v; want ordered %v", target, err, want)
			}
		}
		shown := func(what string, r response, want any) {
			t.Helper()
			if r.status != 200 {
				t.Fatalf("%s: %d %s", what, r.status, r.body)
			}
			if got := r.json(t)["data"].(map[string]any)["ordered"]; got != want {
				t.Fatalf("%s: ordered %v, want %v (%s)", what, got, want, r.body)
			}
		}
		shown("PUT ordered", b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn","auth_type":"NONE","ordered":true}`), true)
		ordered(true)
		shown("GET", b.api(t, b.a, "GET", "/v1/ipn", ""), true)
		shown("PUT without ordered keeps it", b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","auth_type":"NONE"}`), true)
		shown("PUT ordered null keeps it", b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","auth_type":"NONE","ordered":null}`), true)
		for _, tt := range []struct{ body, message string }{
			{`{"ipn_url":"https://shop.example.vn/ipn3","ordered":"true"}`, "ordered must be a boolean, not string"},
			{`{"ipn_url":"https://shop.example.vn/ipn3","ordered":1}`, "ordered must be a boolean, not number"},
			{`{"ipn_url":"https://shop.example.vn/ipn3","ordered":[true]}`, "ordered must be a boolean, not array"},
		} {
			checkJSON(t, tt.body, b.api(t, b.a, "PUT", "/v1/ipn", tt.body), 400, map[string]any{
				"error": map[string]any{"code": "validation_error", "message": tt.message}, "message": tt.message})
		}
		if target, _ := b.db.DeliveryTarget(context.Background(), b.a.company.ID(), recon.DeliveryIPN); target.URL != "https://shop.example.vn/ipn2" {
			t.Fatalf("a refused PUT changed the target: %+v", target)
		}
		// The other merchant's target is its own: not ordered, ordered left out.
		shown("other merchant", b.api(t, b.b, "PUT", "/v1/ipn", `{"ipn_url":"https://b.example.vn/ipn","auth_type":"NONE"}`), nil)
		ordered(true)
		shown("PUT ordered false", b.api(t, b.a, "PUT", "/v1/ipn", `{"ipn_url":"https://shop.example.vn/ipn2","auth_type":"NONE","ordered":false}`), nil)
		ordered(false)
	})
}
