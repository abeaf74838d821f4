package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"recon"
	"recon/api"
	"recon/sqlstore/dbtest"
)

// epochs authenticates as the tokens table does and reads the
// authentication epoch after the request came, as oauth.Server does.
type epochs struct {
	tokens recon.Authenticator
	store  recon.TokenStore
}

func (e epochs) Authenticate(ctx context.Context, token string) (*recon.Caller, error) {
	c, err := e.tokens.Authenticate(ctx, token)
	if err != nil {
		return nil, err
	}
	epoch, err := e.store.AuthEpoch(ctx)
	if err != nil {
		return nil, err
	}
	out := *c
	out.SetEpoch(epoch)
	return &out, nil
}

// companyReads is the real store, counting the company reads of pushes.
// While down is set, those reads fail as an unreachable database's.
type companyReads struct {
	api.Store
	n    atomic.Int64
	down atomic.Bool
}

func (s *companyReads) CompanyAtEpoch(ctx context.Context, id int64) (*recon.Company, int64, error) {
	s.n.Add(1)
	if s.down.Load() {
		return nil, 0, recon.Errorf(recon.EUNAVAILABLE, "the database is not reachable")
	}
	return s.Store.CompanyAtEpoch(ctx, id)
}

// TestPushExtractsByItsEpoch: a push reads its company only when the
// authentication epoch moved since the extractor it keeps was built, and a
// change of the formats or of the paycode switch, made on the store as
// another node or the CLI would, is in the very next push (recon.Extractors,
// migration 00053).
func TestPushExtractsByItsEpoch(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		reads := &companyReads{}
		b := setup(t, engine, func(h *api.Handler) {
			h.Auth = epochs{h.Auth, h.Store.(recon.TokenStore)}
			reads.Store, h.Store = h.Store, reads
		})
		ctx := t.Context()
		acct := b.account(t, b.company.ID, "0071000123456")
		formats := func(f ...recon.PaymentCodeFormat) {
			t.Helper()
			if _, err := b.store.ReplacePaymentCodeFormats(ctx, b.company.ID, f); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		send := func() (int, map[string]any) {
			t.Helper()
			n++
			status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", fmt.Sprintf(`{"transactions":[
				{"bank_account_id":%d,"transaction_date":"2026-03-01 08:15:00","amount_in":150000,"transaction_content":"chuyen tien DH1709 XY56","reference_number":"FT%d"}]}`, acct, n))
			return status, body
		}
		push := func() any {
			t.Helper()
			status, body := send()
			if status != 200 {
				t.Fatalf("push %d: %d %v", n, status, body)
			}
			return body["data"].([]any)[0].(map[string]any)["code"]
		}
		check := func(step string, code any, want any, wantReads int64) {
			t.Helper()
			if code != want || reads.n.Load() != wantReads {
				t.Fatalf("%s: code %v after %d company reads; want %v after %d", step, code, reads.n.Load(), want, wantReads)
			}
		}

		formats(recon.PaymentCodeFormat{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true})
		check("first push", push(), "DH1709", 1)
		check("second push, nothing changed", push(), "DH1709", 1)
		formats(recon.PaymentCodeFormat{Prefix: "XY", SuffixFrom: 2, SuffixTo: 4, CharacterType: recon.NumberOnly, IsActive: true})
		check("after the formats changed", push(), "XY56", 2)
		check("again", push(), "XY56", 2)
		if _, err := b.store.UpdateCompany(ctx, b.company.ID, func(c *recon.Company) error { c.Config.Paycode = false; return nil }); err != nil {
			t.Fatal(err)
		}
		check("after paycode was turned off", push(), nil, 3)

		// A read that fails fails the push (503, nothing stored) and keeps
		// nothing: the next push reads again.
		formats(recon.PaymentCodeFormat{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true})
		if _, err := b.store.UpdateCompany(ctx, b.company.ID, func(c *recon.Company) error { c.Config.Paycode = true; return nil }); err != nil {
			t.Fatal(err)
		}
		reads.down.Store(true)
		if status, body := send(); status != 503 {
			t.Fatalf("push with the company's read failing: %d %v, want 503", status, body)
		}
		reads.down.Store(false)
		n-- // the same transfer again: it was not stored
		if status, body := send(); status != 200 {
			t.Fatalf("the failed push again: %d %v", status, body)
		} else if item := body["data"].([]any)[0].(map[string]any); item["duplicate"] != false || item["code"] != "DH1709" {
			t.Fatalf("the failed push again: %v, want stored now, with DH1709", item)
		}
		if reads.n.Load() != 5 {
			t.Fatalf("%d company reads, want 5: the failed one and one after it", reads.n.Load())
		}
	})
}
