package hub_test

import (
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

func TestLinkTokens(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		_, _, body := b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Khách A"}`)
		cxid := body["data"].(map[string]any)["xid"].(string)
		_, _, body = b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Khách B","status":"Suspended"}`)
		suspended := body["data"].(map[string]any)["xid"].(string)

		status, _, body := b.do(t, "POST", "/v1/link-token/create", "merchant",
			`{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","completion_redirect_uri":"https://shop.example.vn/done","language":"en","is_mobile_app":0}`)
		if status != 201 || len(body) != 4 || !recon.ValidXID(body["xid"].(string)) || !strings.HasPrefix(body["link_token"].(string), "lt_") ||
			body["hosted_link_url"] != "http://hub.test/link/"+body["link_token"].(string) || len(body["expires_at"].(string)) != 19 {
			t.Fatalf("create: %d %s", status, jsonText(body))
		}
		xid := body["xid"].(string)

		for _, tc := range []struct {
			body   string
			status int
			field  string
		}{
			{`{"purpose":"LINK_BANK_ACCOUNT"}`, 400, "company_xid"},
			{`{"company_xid":"` + cxid + `"}`, 400, "purpose"},
			{`{"company_xid":"` + cxid + `","purpose":"LINK"}`, 400, "purpose"},
			{`{"company_xid":"` + cxid + `","purpose":"UNLINK_BANK_ACCOUNT"}`, 400, "bank_account_xid"},
			{`{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT","language":"fr"}`, 400, "language"},
			{`{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT","is_mobile_app":3}`, 400, "is_mobile_app"},
			{`{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT","completion_redirect_uri":"javascript:alert(1)"}`, 400, "completion_redirect_uri"},
			{`{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT","completion_redirect_uri":"myapp://done"}`, 400, "completion_redirect_uri"},
			{`{"company_xid":"` + suspended + `","purpose":"LINK_BANK_ACCOUNT"}`, 400, "company_xid"},
			{`{"company_xid":"` + recon.NewXID() + `","purpose":"LINK_BANK_ACCOUNT"}`, 404, ""},
			{`{"company_xid":"` + cxid + `","purpose":"UNLINK_BANK_ACCOUNT","bank_account_xid":"` + recon.NewXID() + `"}`, 404, ""},
			{`{"company_xid":"x","purpose":"LINK_BANK_ACCOUNT"}`, 404, ""},
		} {
			status, _, body := b.do(t, "POST", "/v1/link-token/create", "merchant", tc.body)
			errs, _ := body["errors"].(map[string]any)
			if status != tc.status || tc.field != "" && errs[tc.field] == nil {
				t.Errorf("create %s: %d %s, want %d naming %q", tc.body, status, jsonText(body), tc.status, tc.field)
			}
		}
		// A mobile app may name its own scheme.
		status, _, body = b.do(t, "POST", "/v1/link-token/create", "merchant",
			`{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT","completion_redirect_uri":"myapp://done","is_mobile_app":1}`)
		if status != 201 {
			t.Errorf("mobile redirect: %d %v", status, body)
		}
		// Another merchant's company: 404, like an unknown one.
		if status, _, body = b.do(t, "POST", "/v1/link-token/create", "other", `{"company_xid":"`+cxid+`","purpose":"LINK_BANK_ACCOUNT"}`); status != 404 {
			t.Errorf("other's company: %d %v", status, body)
		}

		status, _, body = b.do(t, "POST", "/v1/link-token/get", "merchant", `{"link_token_xid":"`+xid+`"}`)
		d, _ := body["data"].(map[string]any)
		if status != 200 || d["xid"] != xid || d["status"] != "ACTIVE" || d["company_xid"] != cxid || d["purpose"] != "LINK_BANK_ACCOUNT" ||
			d["language"] != "en" || d["completion_redirect_uri"] != "https://shop.example.vn/done" || jsonText(d["sessions"]) != "[]" || d["sandbox"] != true {
			t.Fatalf("get: %d %s", status, jsonText(body))
		}
		for _, tc := range []struct{ token, body string }{
			{"other", `{"link_token_xid":"` + xid + `"}`}, {"merchant", `{"link_token_xid":"` + recon.NewXID() + `"}`},
		} {
			for _, path := range []string{"/v1/link-token/get", "/v1/link-token/revoke"} {
				if status, _, body := b.do(t, "POST", path, tc.token, tc.body); status != 404 || body["code"] != float64(404) {
					t.Errorf("%s as %s: %d %v", path, tc.token, status, body)
				}
			}
		}
		if status, _, body = b.do(t, "POST", "/v1/link-token/get", "merchant", `{}`); status != 400 {
			t.Errorf("get without xid: %d %v", status, body)
		}
		status, _, body = b.do(t, "POST", "/v1/link-token/revoke", "merchant", `{"link_token_xid":"`+xid+`"}`)
		if status != 200 || body["code"] != float64(200) {
			t.Fatalf("revoke: %d %v", status, body)
		}
		if status, _, body = b.do(t, "POST", "/v1/link-token/revoke", "merchant", `{"link_token_xid":"`+xid+`"}`); status != 404 {
			t.Errorf("revoke again: %d %v", status, body)
		}
		_, _, body = b.do(t, "POST", "/v1/link-token/get", "merchant", `{"link_token_xid":"`+xid+`"}`)
		if d := body["data"].(map[string]any); d["status"] != "REVOKED" || d["ended_at"] == nil {
			t.Errorf("after revoke: %v", d)
		}
	})
}

// TestProductionModeSaysSo: a production server without a bank connector
// makes no live link token and says why; a test tenant's token works
// (sandbox banks).
func TestProductionModeSaysSo(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setupMode(t, engine, false)
		_, _, body := b.do(t, "POST", "/v1/company/create", "merchant", `{"full_name":"Khách A"}`)
		cxid := body["data"].(map[string]any)["xid"].(string)
		req := `{"company_xid":"` + cxid + `","purpose":"LINK_BANK_ACCOUNT"}`
		status, _, body := b.do(t, "POST", "/v1/link-token/create", "merchant", req)
		if status != 503 || !strings.Contains(body["message"].(string), "no connector to real banks") {
			t.Fatalf("live token in production mode: %d %v", status, body)
		}
		// The test tenant is the same company here (the table's choice):
		// what matters is the credential's mode.
		status, _, body = b.do(t, "POST", "/v1/link-token/create", "test", req)
		if status != 201 {
			t.Fatalf("test token in production mode: %d %v", status, body)
		}
		_, _, body = b.do(t, "POST", "/v1/link-token/get", "test", `{"link_token_xid":"`+body["xid"].(string)+`"}`)
		if body["data"].(map[string]any)["sandbox"] != true {
			t.Fatalf("test token: %v", body)
		}
	})
}
