package ipn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"recon"
	"recon/ipn"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var errBlocked = errors.New("the address is internal")

func checkURL(raw string) error {
	if strings.Contains(raw, "127.0.0.1") {
		return errBlocked
	}
	return nil
}

// TestSave runs the rules of Service.Save against a real database, without
// HTTP: each row is one save on the company's settings as the rows before
// left them.
func TestSave(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
			Config: recon.CompanyConfig{DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMerchant(ctx, &recon.Merchant{CompanyID: c.ID, MerchantID: "SP-TEST-A1", SecretKey: "spsk_test_" + strings.Repeat("a", 30)}); err != nil {
			t.Fatal(err)
		}
		svc := &ipn.Service{Store: db, CheckURL: checkURL, Blocked: func(err error) bool { return errors.Is(err, errBlocked) }}
		str := func(s string) *string { return &s }
		var last *recon.Target
		for _, tc := range []struct {
			name                  string
			change                ipn.Change
			err                   string // the error's message, or "" when the save succeeds
			newSecret, newSigning bool
		}{
			{name: "missing URL", change: ipn.Change{AuthType: recon.AuthNone}, err: "ipn_url is required"},
			{name: "blocked", change: ipn.Change{URL: "https://127.0.0.1/ipn", AuthType: recon.AuthNone},
				err: "ipn_url points to an internal address, which is blocked: the address is internal"},
			{name: "bad auth type", change: ipn.Change{URL: "https://a.vn/ipn", AuthType: "BASIC"}, err: "auth_type must be SECRET_KEY or NONE"},
			{name: "empty secret", change: ipn.Change{URL: "https://a.vn/ipn", AuthType: recon.AuthSecretKey, SecretKey: str("")},
				err: "secret_key must be 1 to 500 characters"},
			{name: "secret with NONE", change: ipn.Change{URL: "https://a.vn/ipn", AuthType: recon.AuthNone, SecretKey: str("abc")},
				err: "secret_key is not used with auth_type NONE"},
			{name: "first save makes both secrets", change: ipn.Change{URL: "https://a.vn/ipn", AuthType: recon.AuthSecretKey, Active: true},
				newSecret: true, newSigning: true},
			{name: "same settings keep both", change: ipn.Change{URL: "https://a.vn/ipn2", AuthType: recon.AuthSecretKey}},
			{name: "a given secret is new", change: ipn.Change{URL: "https://a.vn/ipn2", AuthType: recon.AuthSecretKey, SecretKey: str("s3cret")},
				newSecret: true},
			{name: "rotation", change: ipn.Change{URL: "https://a.vn/ipn2", AuthType: recon.AuthSecretKey, RotateSigningSecret: true},
				newSigning: true},
			{name: "NONE has no secret", change: ipn.Change{URL: "https://a.vn/ipn2", AuthType: recon.AuthNone, Active: true}},
			{name: "back to SECRET_KEY makes one", change: ipn.Change{URL: "https://a.vn/ipn2", AuthType: recon.AuthSecretKey, Active: true},
				newSecret: true},
		} {
			saved, err := svc.Save(ctx, c.Tenant(), tc.change)
			if tc.err != "" {
				if recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != tc.err {
					t.Fatalf("%s: err %v, want EINVALID %q", tc.name, err, tc.err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if saved.NewSecret != tc.newSecret || saved.NewSigningSecret != tc.newSigning {
				t.Errorf("%s: new secret %v, new signing %v; want %v, %v", tc.name, saved.NewSecret, saved.NewSigningSecret, tc.newSecret, tc.newSigning)
			}
			stored, err := db.DeliveryTarget(ctx, c.ID, recon.DeliveryIPN)
			if err != nil {
				t.Fatal(err)
			}
			if *stored != *saved.Target || stored.URL != tc.change.URL || stored.Active != tc.change.Active {
				t.Errorf("%s: stored %+v, saved %+v", tc.name, stored, saved.Target)
			}
			if tc.change.SecretKey != nil && stored.Secret != *tc.change.SecretKey {
				t.Errorf("%s: secret %q, want the given one", tc.name, stored.Secret)
			}
			if last != nil && (stored.SigningSecret != last.SigningSecret) != tc.newSigning {
				t.Errorf("%s: signing secret changed: %v, want %v", tc.name, stored.SigningSecret != last.SigningSecret, tc.newSigning)
			}
			last = stored
		}
	})
}
