package main

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"recon/internal/testkit"
)

// The hub's routes in the cross-mode test (TestEveryRouteKeepsTheModesApart,
// docs/design.md, D10): each mode has a hub client, a company of the same name,
// a webhook and branding; the test mode (sandbox banks on any server) also a
// link token and an account linked on the hosted page with a transfer on it.
// The server runs in production mode, so a live link token is refused for
// want of a bank connector, said plainly.

// hubSide is one mode's hub data.
type hubSide struct {
	token      string // bearer token from POST /v1/token
	company    string // xid of the merchant's company "Khách chung"
	linkToken  string // xid of a link token (test mode only)
	open       string // xid of an active link token (test mode only)
	account    string // xid of the linked account (test mode only)
	tx         string // id of the transfer on it (test mode only)
	webhookURL string
}

// hubCall calls a hub route with the side's hub token.
func (md *modeData) hubCall(t testing.TB, s *side, method, path, body string) (int, map[string]any) {
	t.Helper()
	return testkit.Call(t, method, md.base+path, s.hub.token, body)
}

// hubSetup makes both modes' hub data once.
func (md *modeData) hubSetup(t testing.TB) {
	t.Helper()
	if md.live.hub != nil {
		return
	}
	for _, s := range []*side{md.live, md.test} {
		args := []string{"hub", "client", "create", "--company", fmt.Sprint(md.company), "--name", "hub " + s.name}
		if !s.live {
			args = append(args, "--test")
		}
		cl := cliJSON(t, md.dbURL, args...)
		status, raw := hubToken(t.(*testing.T), md.base, cl["client_id"].(string), cl["client_secret"].(string))
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if status != 201 || unmarshal(raw, &tok) != nil {
			t.Fatalf("%s hub token: %d %s", s.name, status, raw)
		}
		h := &hubSide{token: tok.AccessToken, webhookURL: "https://" + s.name + ".hooks.invalid/hub"}
		s.hub = h
		status, body := testkit.Call(t, "POST", md.base+"/v1/company/create", h.token, `{"full_name":"Khách chung"}`)
		if status != 201 {
			t.Fatalf("%s hub company: %d %v", s.name, status, body)
		}
		h.company = body["data"].(map[string]any)["xid"].(string)
		if status, body := testkit.Call(t, "POST", md.base+"/v1/webhook", h.token, `{"webhook_url":"`+h.webhookURL+`","allow_events":["*"]}`); status != 200 {
			t.Fatalf("%s webhook: %d %v", s.name, status, body)
		}
		if status, body := testkit.Call(t, "POST", md.base+"/v1/merchant-config", h.token, `{"display_name":"Cửa hàng `+s.name+`"}`); status != 200 {
			t.Fatalf("%s merchant-config: %d %v", s.name, status, body)
		}
	}
	// Test mode links an MBBank account on the page and receives a transfer.
	h := md.test.hub
	status, body := testkit.Call(t, "POST", md.base+"/v1/link-token/create", h.token, `{"company_xid":"`+h.company+`","purpose":"LINK_BANK_ACCOUNT","language":"en"}`)
	if status != 201 {
		t.Fatalf("test link token: %d %v", status, body)
	}
	h.linkToken = body["xid"].(string)
	page := body["hosted_link_url"].(string)
	var session, csrf string
	for _, f := range []url.Values{nil,
		{"action": {"pick_bank"}, "bank": {"MB"}, "account_type": {"individual"}},
		{"action": {"details"}, "account_number": {"0123456789"}, "national_id": {"001099012345"}, "phone": {"0901234567"}},
		{"action": {"link_otp"}, "otp": {"12345678"}},
	} {
		if status, html := pageStep(t.(*testing.T), page, &session, &csrf, f); status != 200 {
			t.Fatalf("page step %v: %d\n%s", f, status, html)
		}
	}
	status, body = testkit.Call(t, "GET", md.base+"/v1/bank-account", h.token, "")
	if status != 200 || len(body["data"].([]any)) != 1 {
		t.Fatalf("test linked accounts: %d %v", status, body)
	}
	h.account = body["data"].([]any)[0].(map[string]any)["xid"].(string)
	_, body = testkit.Call(t, "POST", md.base+"/v1/link-token/create", h.token, `{"company_xid":"`+h.company+`","purpose":"LINK_BANK_ACCOUNT"}`)
	h.open = body["xid"].(string)
	accounts, err := md.db.BankAccounts(t.Context(), md.test.tenant)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	for _, a := range accounts {
		if a.AccountNumber == "0123456789" {
			id = a.ID
		}
	}
	if status, body := testkit.Call(t, "POST", md.base+"/api/v1/sandbox/transfers", md.test.feed,
		fmt.Sprintf(`{"bank_account_id":%d,"amount":75000,"transaction_content":"chuyen tien hub"}`, id)); status != 200 {
		t.Fatalf("transfer to the linked account: %d %v", status, body)
	}
	md.test.transactions++
	status, body = testkit.Call(t, "GET", md.base+"/v1/transaction", h.token, "")
	if status != 200 || len(body["data"].([]any)) != 1 {
		t.Fatalf("test hub transactions: %d %v", status, body)
	}
	h.tx = fmt.Sprint(body["data"].([]any)[0].(map[string]any)["id"])
}

// wantHub404 checks that a call answered 404 (another mode's object).
func wantHub404(t *testing.T, what string, status int, body map[string]any) {
	t.Helper()
	if status != 404 {
		t.Errorf("%s: %d %v, want 404", what, status, body)
	}
}

// listLen is the number of rows of a hub listing.
func listLen(body map[string]any) int {
	l, _ := body["data"].([]any)
	return len(l)
}

func init() {
	for p, c := range map[string]func(t *testing.T, md *modeData){
		"POST /v1/token": func(t *testing.T, md *modeData) {
			// Each mode's client's token reaches its own mode only: the
			// company each made is the one it lists.
			md.cross(func(me, other *side) {
				status, body := md.hubCall(t, me, "GET", "/v1/company", "")
				if status != 200 || listLen(body) != 1 || body["data"].([]any)[0].(map[string]any)["xid"] != me.hub.company {
					t.Errorf("%s's hub token lists %d %v", me.name, status, body)
				}
			})
		},
		"POST /v1/company/create": func(t *testing.T, md *modeData) {
			// The same name in both modes: separate tenants, no conflict;
			// the same name again in one mode conflicts there.
			md.cross(func(me, _ *side) {
				if status, body := md.hubCall(t, me, "POST", "/v1/company/create", `{"full_name":"Khách chung"}`); status == 201 || status >= 500 {
					t.Errorf("%s duplicate company: %d %v", me.name, status, body)
				}
			})
		},
		"GET /v1/company": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				_, body := md.hubCall(t, me, "GET", "/v1/company?q=Kh", "")
				if listLen(body) != 1 || strings.Contains(fmt.Sprint(body), other.hub.company) {
					t.Errorf("%s lists %v", me.name, body)
				}
			})
		},
		"GET /v1/company/{xid}": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				if status, body := md.hubCall(t, me, "GET", "/v1/company/"+me.hub.company, ""); status != 200 {
					t.Errorf("%s own company: %d %v", me.name, status, body)
				}
				status, body := md.hubCall(t, me, "GET", "/v1/company/"+other.hub.company, "")
				wantHub404(t, me.name+" reads "+other.name+"'s company", status, body)
			})
		},
		"POST /v1/company/edit/{xid}": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				status, body := md.hubCall(t, me, "POST", "/v1/company/edit/"+other.hub.company, `{"full_name":"Đổi tên"}`)
				wantHub404(t, me.name+" edits "+other.name+"'s company", status, body)
				if _, body := md.hubCall(t, other, "GET", "/v1/company/"+other.hub.company, ""); body["data"].(map[string]any)["full_name"] != "Khách chung" {
					t.Errorf("%s's company changed: %v", other.name, body)
				}
			})
		},
		"GET /v1/company/counter/{xid}": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				status, body := md.hubCall(t, me, "GET", "/v1/company/counter/"+other.hub.company, "")
				wantHub404(t, me.name+" counts "+other.name+"'s company", status, body)
			})
			status, body := md.hubCall(t, md.test, "GET", "/v1/company/counter/"+md.test.hub.company, "")
			if status != 200 || !strings.Contains(fmt.Sprint(body), "1") {
				t.Errorf("test counter: %d %v", status, body)
			}
		},
		"POST /v1/link-token/create": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				status, body := md.hubCall(t, me, "POST", "/v1/link-token/create", `{"company_xid":"`+other.hub.company+`","purpose":"LINK_BANK_ACCOUNT"}`)
				if status != 404 && !(me.live && status == 503) {
					t.Errorf("%s link token for %s's company: %d %v", me.name, other.name, status, body)
				}
			})
			// Production server: a live token has no bank to reach, and says so.
			status, body := md.hubCall(t, md.live, "POST", "/v1/link-token/create", `{"company_xid":"`+md.live.hub.company+`","purpose":"LINK_BANK_ACCOUNT"}`)
			if status != 503 || !strings.Contains(fmt.Sprint(body["message"]), "sandbox") {
				t.Errorf("live link token on a production server: %d %v", status, body)
			}
			// Unlinking the test mode's account with a live token: not found.
			status, body = md.hubCall(t, md.live, "POST", "/v1/link-token/create", `{"company_xid":"`+md.live.hub.company+`","purpose":"UNLINK_BANK_ACCOUNT","bank_account_xid":"`+md.test.hub.account+`"}`)
			if status != 404 && status != 503 {
				t.Errorf("live unlink of the test account: %d %v", status, body)
			}
		},
		"POST /v1/link-token/get": func(t *testing.T, md *modeData) {
			status, body := md.hubCall(t, md.live, "POST", "/v1/link-token/get", `{"link_token_xid":"`+md.test.hub.linkToken+`"}`)
			wantHub404(t, "live reads the test link token", status, body)
			if status, body := md.hubCall(t, md.test, "POST", "/v1/link-token/get", `{"link_token_xid":"`+md.test.hub.linkToken+`"}`); status != 200 {
				t.Errorf("test reads its link token: %d %v", status, body)
			}
		},
		"POST /v1/link-token/revoke": func(t *testing.T, md *modeData) {
			status, body := md.hubCall(t, md.live, "POST", "/v1/link-token/revoke", `{"link_token_xid":"`+md.test.hub.open+`"}`)
			wantHub404(t, "live revokes the test link token", status, body)
			if _, body := md.hubCall(t, md.test, "POST", "/v1/link-token/get", `{"link_token_xid":"`+md.test.hub.open+`"}`); body["data"].(map[string]any)["status"] != "ACTIVE" {
				t.Errorf("the test token after live's revoke: %v", body)
			}
		},
		"GET /v1/webhook": func(t *testing.T, md *modeData) {
			md.cross(func(me, _ *side) {
				status, body := md.hubCall(t, me, "GET", "/v1/webhook", "")
				if status != 200 || body["data"].(map[string]any)["webhook_url"] != me.hub.webhookURL {
					t.Errorf("%s GET /v1/webhook: %d %v", me.name, status, body)
				}
			})
		},
		"POST /v1/webhook": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				if status, body := md.hubCall(t, me, "POST", "/v1/webhook", `{"active":0}`); status != 200 {
					t.Errorf("%s POST /v1/webhook: %d %v", me.name, status, body)
				}
				if _, body := md.hubCall(t, other, "GET", "/v1/webhook", ""); body["data"].(map[string]any)["active"] != 1.0 {
					t.Errorf("%s's change reached %s's webhook: %v", me.name, other.name, body)
				}
				md.hubCall(t, me, "POST", "/v1/webhook", `{"active":1}`)
			})
		},
		"GET /v1/merchant-config": func(t *testing.T, md *modeData) {
			md.cross(func(me, _ *side) {
				_, body := md.hubCall(t, me, "GET", "/v1/merchant-config", "")
				if !strings.Contains(fmt.Sprint(body), "Cửa hàng "+me.name) {
					t.Errorf("%s branding: %v", me.name, body)
				}
			})
		},
		"POST /v1/merchant-config": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				md.hubCall(t, me, "POST", "/v1/merchant-config", `{"display_name":"Tạm `+me.name+`"}`)
				if _, body := md.hubCall(t, other, "GET", "/v1/merchant-config", ""); strings.Contains(fmt.Sprint(body), "Tạm "+me.name) {
					t.Errorf("%s's branding reached %s: %v", me.name, other.name, body)
				}
				md.hubCall(t, me, "POST", "/v1/merchant-config", `{"display_name":"Cửa hàng `+me.name+`"}`)
			})
		},
		"GET /v1/bank-account": func(t *testing.T, md *modeData) {
			for _, s := range []*side{md.live, md.test} {
				for _, q := range []string{"", "?company_xid=" + md.test.hub.company, "?company_xid=" + md.live.hub.company} {
					_, body := md.hubCall(t, s, "GET", "/v1/bank-account"+q, "")
					want := 0
					if !s.live && q != "?company_xid="+md.live.hub.company {
						want = 1
					}
					if listLen(body) != want {
						t.Errorf("%s /v1/bank-account%s: %v, want %d rows", s.name, q, body, want)
					}
				}
			}
		},
		"GET /v1/bank-account/{xid}": func(t *testing.T, md *modeData) {
			status, body := md.hubCall(t, md.live, "GET", "/v1/bank-account/"+md.test.hub.account, "")
			wantHub404(t, "live reads the test linked account", status, body)
			if status, body := md.hubCall(t, md.test, "GET", "/v1/bank-account/"+md.test.hub.account, ""); status != 200 {
				t.Errorf("test reads its linked account: %d %v", status, body)
			}
		},
		"GET /v1/transaction": func(t *testing.T, md *modeData) {
			for _, s := range []*side{md.live, md.test} {
				for _, q := range []string{"", "?bank_account_xid=" + md.test.hub.account, "?company_xid=" + md.test.hub.company} {
					_, body := md.hubCall(t, s, "GET", "/v1/transaction"+q, "")
					if want := map[bool]int{true: 0, false: 1}[s.live]; listLen(body) != want {
						t.Errorf("%s /v1/transaction%s: %v, want %d rows", s.name, q, body, want)
					}
				}
			}
		},
		"GET /v1/transaction/{id}": func(t *testing.T, md *modeData) {
			status, body := md.hubCall(t, md.live, "GET", "/v1/transaction/"+md.test.hub.tx, "")
			wantHub404(t, "live reads the test hub transaction", status, body)
			if status, body := md.hubCall(t, md.test, "GET", "/v1/transaction/"+md.test.hub.tx, ""); status != 200 {
				t.Errorf("test reads its hub transaction: %d %v", status, body)
			}
		},
	} {
		crossModeCases[p] = func(t *testing.T, md *modeData) { md.hubSetup(t); c(t, md) }
	}
}
