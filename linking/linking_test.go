package linking_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/linking"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var errBlocked = errors.New("the address is internal")

// newCompany makes an active company.
func newCompany(t *testing.T, db *sqlstore.DB) *recon.Company {
	t.Helper()
	c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestService runs CreateLinkToken and SaveWebhook against a real database,
// without HTTP.
func TestService(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		co := newCompany(t, db)
		cu := &recon.HubCustomer{Tenant: co.Tenant(), FullName: "Khách hàng A", Status: recon.HubCustomerActive}
		if err := db.CreateHubCustomer(ctx, cu); err != nil {
			t.Fatal(err)
		}
		svc := &linking.Service{Store: db, BaseURL: "https://recon.example.vn/", LinkTTL: time.Hour,
			CheckURL: func(raw string) error {
				if strings.Contains(raw, "127.0.0.1") {
					return errBlocked
				}
				return nil
			},
			Blocked: func(err error) bool { return errors.Is(err, errBlocked) }}

		for _, tc := range []struct {
			name    string
			token   recon.LinkToken
			code    string
			message string
		}{
			{"bad purpose", recon.LinkToken{Purpose: "X", Language: "en", Sandbox: true}, recon.EINVALID, "purpose must be LINK_BANK_ACCOUNT or UNLINK_BANK_ACCOUNT"},
			{"no real banks", recon.LinkToken{Purpose: recon.LinkPurposeLink, Language: "en", CustomerXID: cu.XID}, recon.EUNAVAILABLE, recon.ErrorMessage(linking.ErrNoBankConnector)},
			{"malformed company xid", recon.LinkToken{Purpose: recon.LinkPurposeLink, Language: "en", CustomerXID: "nope", Sandbox: true}, recon.ENOTFOUND, "company nope not found"},
			{"made", recon.LinkToken{Purpose: recon.LinkPurposeLink, Language: "en", CustomerXID: cu.XID, Sandbox: true}, "", ""},
		} {
			tok := tc.token
			tok.Tenant = co.Tenant()
			url, err := svc.CreateLinkToken(ctx, &tok)
			if recon.ErrorCode(err) != tc.code || tc.message != "" && recon.ErrorMessage(err) != tc.message {
				t.Fatalf("%s: err %v, want %s %q", tc.name, err, tc.code, tc.message)
			}
			if err == nil {
				if url != "https://recon.example.vn/link/"+tok.Token {
					t.Errorf("%s: hosted page %q", tc.name, url)
				}
				if d := tok.ExpiresAt.Sub(tok.CreatedAt); d != time.Hour {
					t.Errorf("%s: lives %s, want 1h", tc.name, d)
				}
			}
		}

		str := func(s string) *string { return &s }
		for _, tc := range []struct {
			name    string
			change  recon.HubWebhookChange
			code    string
			message string
			created bool
		}{
			{"empty URL", recon.HubWebhookChange{URL: str("")}, recon.EINVALID, "webhook_url must not be empty", false},
			{"blocked URL", recon.HubWebhookChange{URL: str("https://127.0.0.1/hook")}, recon.EINVALID,
				"webhook_url points to an internal address, which is blocked: the address is internal", false},
			{"unknown event", recon.HubWebhookChange{URL: str("https://a.vn/hook"), AllowEvents: []string{"NOPE"}, AllowEventsSet: true}, recon.EINVALID, "", false},
			{"made", recon.HubWebhookChange{URL: str("https://a.vn/hook")}, "", "", true},
			{"changed", recon.HubWebhookChange{URL: str("https://a.vn/hook2")}, "", "", false},
		} {
			wh, created, err := svc.SaveWebhook(ctx, co.Tenant(), tc.change)
			if recon.ErrorCode(err) != tc.code || tc.message != "" && recon.ErrorMessage(err) != tc.message {
				t.Fatalf("%s: err %v, want %s %q", tc.name, err, tc.code, tc.message)
			}
			if err == nil && (created != tc.created || wh.URL != *tc.change.URL) {
				t.Errorf("%s: created %v, URL %q", tc.name, created, wh.URL)
			}
		}
	})
}
