package hub_test

import (
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

func TestWebhookAPI(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		status, _, body := b.do(t, "GET", "/v1/webhook", "merchant", "")
		if status != 200 || jsonText(body) != `{"data":null,"error":null,"messages":{"error":[],"success":["No webhook is configured"]},"status":200}` {
			t.Fatalf("GET none: %d %s", status, jsonText(body))
		}
		// Create: webhook_url is required; every default applies; the secret is generated.
		status, _, body = b.do(t, "POST", "/v1/webhook", "merchant", `{"active":1}`)
		if status != 400 || body["error"] != "VALIDATION_ERROR" || !strings.Contains(jsonText(body), "webhook_url is required") {
			t.Fatalf("create without url: %d %v", status, body)
		}
		status, _, body = b.do(t, "POST", "/v1/webhook", "merchant", `{"webhook_url":"https://hooks.example.vn/hub"}`)
		data, _ := body["data"].(map[string]any)
		secret, _ := data["secret_key"].(string)
		signing, _ := data["signing_secret"].(string)
		if status != 200 || body["status"] != float64(200) || body["error"] != nil || len(secret) != 48 || len(signing) != 48 || signing == secret ||
			data["signing_secret_whsec"] != recon.WhsecSecret(signing) || data["previous_signing_secret_until"] != nil ||
			data["auth_type"] != "SECRET_KEY" || data["active"] != float64(1) || jsonText(data["allow_events"]) != `["*"]` ||
			data["request_content_type"] != "application/json" || data["webhook_url"] != "https://hooks.example.vn/hub" {
			t.Fatalf("create: %d %s", status, jsonText(body))
		}
		// GET masks the secrets: *** and their last 4.
		status, _, body = b.do(t, "GET", "/v1/webhook", "merchant", "")
		data = body["data"].(map[string]any)
		if status != 200 || data["secret_key"] != "***"+secret[44:] || data["signing_secret"] != "***"+signing[44:] ||
			data["webhook_url"] != "https://hooks.example.vn/hub" {
			t.Fatalf("GET: %d %s", status, jsonText(body))
		}
		// Partial updates of one field keep the others, and show neither
		// secret again: only the answer that set a secret shows it.
		for _, tc := range []struct{ body, field, want string }{
			{`{"active":0}`, "active", "0"},
			{`{"allow_events":["LINK_TOKEN_CREATED","BANK_ACCOUNT_INACTIVED"]}`, "allow_events", `["LINK_TOKEN_CREATED","BANK_ACCOUNT_INACTIVATED"]`},
			{`{"allow_events":null}`, "allow_events", `[]`},
			{`{"allow_events":["*","LINK_TOKEN_CREATED"]}`, "allow_events", `["*"]`},
			{`{"allow_events":[]}`, "allow_events", `[]`},
			{`{"active":1}`, "active", "1"},
			{`{"auth_type":"NONE"}`, "auth_type", `"NONE"`},
		} {
			status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", tc.body)
			data := body["data"].(map[string]any)
			if status != 200 || jsonText(data[tc.field]) != tc.want || data["secret_key"] != "***"+secret[44:] ||
				data["signing_secret"] != "***"+signing[44:] || data["webhook_url"] != "https://hooks.example.vn/hub" {
				t.Fatalf("POST %s: %d %s", tc.body, status, jsonText(body))
			}
		}
		status, _, body = b.do(t, "POST", "/v1/webhook", "merchant", `{"secret_key":"my-own-secret-1234"}`)
		if data := body["data"].(map[string]any); status != 200 || data["secret_key"] != "my-own-secret-1234" || data["signing_secret"] != "***"+signing[44:] {
			t.Fatalf("set secret: %d %v", status, body)
		}
		// Rotating the signing secret shows the new one, this once.
		status, _, body = b.do(t, "POST", "/v1/webhook", "merchant", `{"rotate_signing_secret":true}`)
		data = body["data"].(map[string]any)
		rotated, _ := data["signing_secret"].(string)
		if status != 200 || len(rotated) != 48 || rotated == signing || data["secret_key"] != "***1234" {
			t.Fatalf("rotate the signing secret: %d %v", status, body)
		}
		if got := getWebhook(t, b, "merchant"); !strings.Contains(got, `"signing_secret":"***`+rotated[44:]+`"`) {
			t.Fatalf("GET after the rotation: %s", got)
		}
		// Its whsec_ form too, shown in full in the same answers only; the
		// replaced secret signs a day more (docs/hub.md, The webhook API).
		until, _ := data["previous_signing_secret_until"].(string)
		end, err := time.ParseInLocation(recon.DateTimeLayout, until, hcm)
		if data["signing_secret_whsec"] != recon.WhsecSecret(rotated) || err != nil ||
			end.Before(time.Now().Add(recon.SigningOverlap-time.Minute)) || end.After(time.Now().Add(recon.SigningOverlap)) {
			t.Fatalf("rotated: whsec %v, previous until %q (%v); want %q, a day from now", data["signing_secret_whsec"], until, err, recon.WhsecSecret(rotated))
		}
		if got := getWebhook(t, b, "merchant"); !strings.Contains(got, `"signing_secret_whsec":"`+recon.MaskSecret(recon.WhsecSecret(rotated))+`"`) ||
			!strings.Contains(got, `"previous_signing_secret_until":"`+until+`"`) || strings.Contains(got, recon.WhsecSecret(rotated)) {
			t.Fatalf("GET after the rotation: %s", got)
		}
		before := getWebhook(t, b, "merchant")
		// Refusals: 400 with the envelope's code, naming the problem; nothing stored.
		long := "https://hooks.example.vn/" + strings.Repeat("a", 2000)
		for _, tc := range []struct{ body, code, says string }{
			{`{"allow_events":["LINK_TOKEN_CREATED","ORDER_PAID"]}`, "INVALID_EVENT", `ORDER_PAID`},
			{`{"allow_events":"*"}`, "VALIDATION_ERROR", "allow_events"},
			{`{"webhook_url":"http://hooks.example.vn/x"}`, "INVALID_URL", "https"},
			{`{"webhook_url":"https://127.0.0.1/x","active":0}`, "BLOCKED_ADDRESS", "internal"},
			{`{"webhook_url":"https://2130706433/x"}`, "BLOCKED_ADDRESS", "internal"},
			{`{"webhook_url":"` + long + `"}`, "INVALID_URL", "2000"},
			{`{"webhook_url":""}`, "INVALID_URL", "empty"},
			{`{"secret_key":"` + strings.Repeat("s", 501) + `"}`, "VALIDATION_ERROR", "500"},
			{`{"secret_key":""}`, "VALIDATION_ERROR", "secret_key"},
			{`{"auth_type":"BASIC"}`, "VALIDATION_ERROR", "auth_type"},
			{`{"active":2}`, "VALIDATION_ERROR", "active"},
			{`{"rotate_signing_secret":"yes"}`, "VALIDATION_ERROR", "rotate_signing_secret"},
			{`{"request_content_type":"text/xml"}`, "VALIDATION_ERROR", "application/json"},
			{`{"webhook_url":5}`, "VALIDATION_ERROR", "webhook_url"},
			{`{"colour":"red"}`, "VALIDATION_ERROR", "colour"},
			{`{"active":0,"allow_events":["NOPE"]}`, "INVALID_EVENT", "NOPE"},
			{`not json`, "VALIDATION_ERROR", "malformed"},
			{``, "VALIDATION_ERROR", "empty"},
		} {
			status, _, body := b.do(t, "POST", "/v1/webhook", "merchant", tc.body)
			if status != 400 || body["error"] != tc.code || body["status"] != float64(400) || body["data"] != nil ||
				!strings.Contains(jsonText(body["messages"]), tc.says) {
				t.Errorf("POST %.60s: %d %s, want 400 %s saying %s", tc.body, status, jsonText(body), tc.code, tc.says)
			}
		}
		if after := getWebhook(t, b, "merchant"); after != before {
			t.Fatalf("a refused change was stored:\n%s\n%s", before, after)
		}
		// Another merchant sees none and changes only its own.
		status, _, body = b.do(t, "GET", "/v1/webhook", "other", "")
		if status != 200 || body["data"] != nil {
			t.Fatalf("other's GET: %d %v", status, body)
		}
		// No token: 401 in the envelope.
		status, _, body = b.do(t, "GET", "/v1/webhook", "", "")
		if status != 401 || body["error"] != "UNAUTHORIZED" {
			t.Fatalf("no token: %d %v", status, body)
		}
	})
}

func getWebhook(t *testing.T, b *bundle, token string) string {
	t.Helper()
	_, _, body := b.do(t, "GET", "/v1/webhook", token, "")
	return jsonText(body["data"])
}
