package ipn_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

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
		if err := db.SetMerchant(ctx, &recon.Merchant{Tenant: c.Tenant(), MerchantID: "SP-TEST-A1", SecretKey: "spsk_test_" + strings.Repeat("a", 30)}); err != nil {
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

// TestSaveNotificationTypes: notification_types are checked by
// recon.ParseIPNTypes and saved into the target's settings JSON, whose other
// keys stay; a save without them (PUT /v1/ipn the v1 way, a rotation) keeps
// what the target had, recon.DefaultIPNTypes for a target that never chose
// (docs/api-v2.md, Notifications); a refused list writes nothing. JSON shows
// what the target receives.
func TestSaveNotificationTypes(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		c := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
			Config: recon.CompanyConfig{DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
		svc := &ipn.Service{Store: db}
		base := ipn.Change{URL: "https://a.vn/ipn", AuthType: recon.AuthNone, Active: true}
		with := func(types ...string) ipn.Change {
			ch := base
			ch.NotificationTypes = types
			if types == nil {
				ch.NotificationTypes = []string{}
			}
			return ch
		}
		for _, tc := range []struct {
			name     string
			change   ipn.Change
			err      string   // the EINVALID message, "" when saved
			settings string   // the settings JSON stored after
			shown    []string // notification_types of ipn.JSON: left out (nil) while never chosen, the v1 answer
		}{
			{name: "a new target saved the v1 way", change: base, settings: "{}", shown: nil},
			{name: "choose", change: with("ORDER_PAID", "ORDER_PARTIALLY_PAID"),
				settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`, shown: []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}},
			{name: "saved again the v1 way keeps them", change: base,
				settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`, shown: []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}},
			{name: "a rotation keeps them", change: ipn.Change{URL: "https://a.vn/ipn", AuthType: recon.AuthNone, Active: true, RotateSigningSecret: true},
				settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`, shown: []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}},
			{name: "unknown type", change: with("ORDER_PAID", "ORDER_SHIPPED"),
				err:      `unknown notification type "ORDER_SHIPPED" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED)`,
				settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`},
			{name: "empty list", change: with(),
				err:      "notification_types needs at least one of ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED",
				settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`},
			{name: "twice", change: with("ORDER_EXPIRED", "ORDER_EXPIRED"), err: `notification type "ORDER_EXPIRED" is listed twice`,
				settings: `{"notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`},
			{name: "back to the v1 types, said", change: with("ORDER_PAID", "TRANSACTION_VOID"),
				settings: `{"notification_types":["ORDER_PAID","TRANSACTION_VOID"]}`, shown: []string{"ORDER_PAID", "TRANSACTION_VOID"}},
			{name: "refunds only", change: with("REFUND_FAILED", "REFUND_SUCCEEDED"),
				settings: `{"notification_types":["REFUND_FAILED","REFUND_SUCCEEDED"]}`, shown: []string{"REFUND_FAILED", "REFUND_SUCCEEDED"}},
		} {
			saved, err := svc.Save(ctx, c.Tenant(), tc.change)
			if tc.err != "" {
				if recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != tc.err {
					t.Fatalf("%s: err %v, want EINVALID %q", tc.name, err, tc.err)
				}
			} else if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			stored, err := db.DeliveryTarget(ctx, c.ID, recon.DeliveryIPN)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Settings != tc.settings {
				t.Errorf("%s: settings %s, want %s", tc.name, stored.Settings, tc.settings)
			}
			if tc.err != "" {
				continue
			}
			if saved.Target.Settings != tc.settings {
				t.Errorf("%s: told settings %s, want %s", tc.name, saved.Target.Settings, tc.settings)
			}
			b, _ := json.Marshal(ipn.JSON(saved.Target, false, false, time.UTC))
			var shown struct {
				Types []string `json:"notification_types"`
			}
			if err := json.Unmarshal(b, &shown); err != nil || !slices.Equal(shown.Types, tc.shown) {
				t.Errorf("%s: JSON %s, want notification_types %v", tc.name, b, tc.shown)
			}
		}
		// Keys of the settings besides notification_types stay as they were.
		if err := db.SetIPN(ctx, c.Tenant(), &recon.Target{URL: "https://a.vn/ipn", AuthType: recon.AuthNone, Active: true,
			Settings: `{"later":{"x":[1,"hai"]},"notification_types":["ORDER_PAID"]}`}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Save(ctx, c.Tenant(), with("ORDER_EXPIRED")); err != nil {
			t.Fatal(err)
		}
		stored, err := db.DeliveryTarget(ctx, c.ID, recon.DeliveryIPN)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"later":{"x":[1,"hai"]},"notification_types":["ORDER_EXPIRED"]}`; stored.Settings != want {
			t.Errorf("settings %s, want the other keys kept: %s", stored.Settings, want)
		}
		// The hub IPN's target shows no notification types.
		if b, _ := json.Marshal(ipn.TargetJSON(stored, false, false, time.UTC)); strings.Contains(string(b), "notification_types") {
			t.Errorf("TargetJSON %s", b)
		}
	})
}
