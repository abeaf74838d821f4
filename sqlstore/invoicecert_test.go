package sqlstore_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func invoiceCertCell(company int64) cell {
	return cell{"invoice_certificates", "private_key", fmt.Sprintf("company_id = %d", company)}
}

// TestInvoiceCertificates: a tenant's invoice certificate is stored with its
// key sealed and bound to its row (docs/invoices.md, XML and its signature),
// read back whole, replaced or kept (onlyIfNone), another tenant's is not
// found, a key moved into another tenant's row is refused, and a rotation
// re-seals it.
func TestInvoiceCertificates(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := openNoKey(t, dbtest.NewURL(t, engine))
		keyFile := filepath.Join(t.TempDir(), "recon.key")
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		a, b := sealSome(t, db, 1), sealSome(t, db, 2)
		ta, tb := recon.LiveTenant(a.company), recon.LiveTenant(b.company)
		ctx := t.Context()
		if _, err := db.InvoiceCertificate(ctx, ta); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("none yet: %v", err)
		}
		day := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		certOf := func(n string) *recon.InvoiceCertificate {
			return &recon.InvoiceCertificate{PrivateKey: "-----BEGIN PRIVATE KEY-----\nkey " + n + "\n-----END PRIVATE KEY-----\n",
				Certificates: "-----BEGIN CERTIFICATE-----\ncert " + n + "\n-----END CERTIFICATE-----\n",
				Subject:      "CN=" + n, SerialNumber: "0a" + n, NotBefore: day, NotAfter: day.AddDate(2, 0, 0), SelfSigned: n == "sandbox"}
		}
		want := func(tn recon.TenantID, c *recon.InvoiceCertificate) {
			t.Helper()
			got, err := db.InvoiceCertificate(ctx, tn)
			if err != nil {
				t.Fatal(err)
			}
			if got.PrivateKey != c.PrivateKey || got.Certificates != c.Certificates || got.Subject != c.Subject ||
				got.SerialNumber != c.SerialNumber || !got.NotBefore.Equal(c.NotBefore) || !got.NotAfter.Equal(c.NotAfter) ||
				got.SelfSigned != c.SelfSigned || got.CompanyID != tn.ID() || got.CreatedAt.IsZero() {
				t.Fatalf("read %+v, want %+v", got, c)
			}
		}
		sandbox := certOf("sandbox")
		if got, err := db.SaveInvoiceCertificate(ctx, ta, sandbox, true); err != nil || got.Subject != "CN=sandbox" {
			t.Fatalf("save: %+v, %v", got, err)
		}
		want(ta, sandbox)
		// onlyIfNone keeps the one there and returns it.
		if got, err := db.SaveInvoiceCertificate(ctx, ta, certOf("other"), true); err != nil || got.Subject != "CN=sandbox" {
			t.Fatalf("save only if none: %+v, %v", got, err)
		}
		want(ta, sandbox)
		// An upload replaces it.
		uploaded := certOf("merchant")
		if _, err := db.SaveInvoiceCertificate(ctx, ta, uploaded, false); err != nil {
			t.Fatal(err)
		}
		want(ta, uploaded)
		// Another tenant has none.
		if _, err := db.InvoiceCertificate(ctx, tb); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("B reads: %v", err)
		}
		// The key is sealed, not stored as text.
		if raw := readCell(t, db, invoiceCertCell(a.company)); bytes.Contains(raw, []byte("key merchant")) {
			t.Fatal("the private key is stored in the clear")
		}
		// A's sealed key copied into B's row does not open there.
		if _, err := db.SaveInvoiceCertificate(ctx, tb, certOf("b"), false); err != nil {
			t.Fatal(err)
		}
		saved := readCell(t, db, invoiceCertCell(b.company))
		writeCell(t, db, invoiceCertCell(b.company), readCell(t, db, invoiceCertCell(a.company)))
		_, err := db.InvoiceCertificate(ctx, tb)
		wantRefused(t, "invoice certificate key, A's into B's row", err, "sealed for another row, tenant or column")
		writeCell(t, db, invoiceCertCell(b.company), saved)
		// A rotation re-seals it under the new key.
		before := readCell(t, db, invoiceCertCell(a.company))
		if _, err := db.RotateSecretKey(ctx, sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(before, readCell(t, db, invoiceCertCell(a.company))) {
			t.Error("the rotation did not re-seal the invoice certificate's key")
		}
		want(ta, uploaded)
		want(tb, certOf("b"))
		// A company that does not exist.
		if _, err := db.SaveInvoiceCertificate(ctx, recon.LiveTenant(999999), uploaded, false); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Errorf("unknown company: %v", err)
		}
	})
}
