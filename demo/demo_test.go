package demo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/demo"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// auth stands for the authorization server: clients are stored with a
// made-up hash, tokens name what they were issued for.
type auth struct{ db *sqlstore.DB }

func (a auth) RegisterClient(ctx context.Context, c *recon.Client) (string, error) {
	c.SecretHash = "hash-of-" + c.ID
	return "secret-of-" + c.ID, a.db.CreateClient(ctx, c)
}

func (auth) HashPassword(password string) (string, error) { return "hash-of-" + password, nil }

func (auth) IssueToken(_ context.Context, clientID, userEmail string, scopes []string, _ time.Duration) (string, error) {
	return fmt.Sprintf("token(%s,%s,%s)", clientID, userEmail, strings.Join(scopes, " ")), nil
}

// seed seeds db with a clock at now and randomness from seed, and returns
// the banner.
func seed(t *testing.T, db *sqlstore.DB, now time.Time, seed uint64) string {
	t.Helper()
	var out strings.Builder
	err := demo.Seed(t.Context(), db, auth{db}, demo.Options{
		BaseURL: "http://demo.test", Location: time.UTC, Clock: testkit.NewClock(now),
		Rand: rand.NewChaCha8([32]byte{byte(seed)}), Out: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestSeed: the demo is what its clock and randomness make it (the same
// banner on two fresh databases), its transactions fall in the 60 days
// before the clock's today and pay orders; a second run on the same
// database prints fresh tokens and seeds nothing more, and a database
// holding other data is left alone.
func TestSeed(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		ctx := t.Context()
		now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		db := dbtest.OpenStore(t, engine)
		first := seed(t, db, now, 1)
		if again := seed(t, dbtest.OpenStore(t, engine), now, 1); again != first {
			t.Errorf("two fresh databases, one clock and one seed, two banners:\n%s\n----\n%s", first, again)
		}
		for _, want := range []string{
			"OAuth2 client:  demo-erp   secret: secret-of-demo-erp",
			"Dashboard: http://demo.test/dashboard/  sign in with an e-mail and its password:",
			"  " + demo.AdminEmail + "     / " + demo.AdminPassword + "     (Admin",
			"  " + demo.AccountantEmail + "    / " + demo.AccountantPassword + "    (Accountant",
			"  " + demo.MemberEmail + "  / " + demo.MemberPassword + "  (Member",
			"export TOKEN=token(demo-erp," + demo.AdminEmail + ",company transaction:read bank-account:read)",
			"Test OAuth2 client: test_demo-erp   secret: secret-of-test_demo-erp",
		} {
			if !strings.Contains(first, want) {
				t.Errorf("banner lacks %q:\n%s", want, first)
			}
		}
		live, err := db.MerchantOf(ctx, recon.LiveTenant(1))
		if err != nil || live.MerchantID != "DEMO-SAOMAI" || !strings.Contains(first, "'DEMO-SAOMAI:"+live.SecretKey+"'") {
			t.Fatalf("live merchant %+v (%v)", live, err)
		}
		txs, total, err := db.Transactions(ctx, recon.LiveTenant(1), recon.TransactionFilter{Page: 1, Limit: 500})
		if err != nil || total != 300 {
			t.Fatalf("%d transactions (%v), want 300", total, err)
		}
		for _, tx := range txs {
			if d := now.Sub(tx.TransactionDate); d < 0 || d > 61*24*time.Hour {
				t.Fatalf("transaction %d dated %s, not in the 60 days before %s", tx.ID, tx.TransactionDate, now)
			}
		}
		paid, _, err := db.Orders(ctx, recon.LiveTenant(1), recon.OrderFilter{Status: recon.OrderCaptured, Page: 1, PerPage: 100})
		if err != nil || len(paid) < 20 {
			t.Fatalf("%d orders paid (%v)", len(paid), err)
		}

		second := seed(t, db, now.Add(time.Hour), 2)
		if !strings.Contains(second, "secret: (printed when the demo was first seeded)") || !strings.Contains(second, "export TOKEN=token(") {
			t.Errorf("second run's banner:\n%s", second)
		}
		if _, total, err := db.Transactions(ctx, recon.LiveTenant(1), recon.TransactionFilter{Page: 1, Limit: 1}); err != nil || total != 300 {
			t.Errorf("after a second run: %d transactions (%v)", total, err)
		}

		other := dbtest.OpenStore(t, engine)
		if err := other.CreateCompany(ctx, &recon.Company{FullName: "Other", ShortName: "OTHER", Status: recon.CompanyActive}); err != nil {
			t.Fatal(err)
		}
		if out := seed(t, other, now, 1); out != "recon: --demo: the database already holds data that is not the demo's; nothing seeded\n" {
			t.Errorf("on another database: %q", out)
		}
	})
}
