package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"recon"
	"recon/einvoice"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// p12 writes a PKCS#12 file of a fresh RSA key and a certificate valid from
// notBefore to notAfter, with password; it returns the file and the key.
func p12(t *testing.T, notBefore, notAfter time.Time, password string) (string, *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Công ty TNHH Ánh Dương", SerialNumber: "MST:0312345679"},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	data, err := pkcs12.Modern.Encode(key, cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "seller.p12")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f, key
}

// TestInvoiceCertificateUpload: recon invoices certificate upload stores a
// valid PKCS#12 certificate (docs/invoices.md, XML and its signature), which
// then signs the company's invoices; a wrong password, an empty password
// variable and an expired certificate are refused with a clear error; the
// key is never printed.
func TestInvoiceCertificateUpload(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		dbURL := dbtest.NewMigratedURL(t, engine)
		keyFile := filepath.Join(t.TempDir(), "secret.key")
		env := map[string]string{"RECON_DATABASE_URL": dbURL, "RECON_SECRET_KEY_FILE": keyFile, "P12_PASSWORD": "mật khẩu 1"}
		company := fmt.Sprint(runJSON(t, env, "company", "create", "--full-name", "Công ty A", "--short-name", "A")["id"])
		now := time.Now()
		good, key := p12(t, now.Add(-time.Hour), now.AddDate(1, 0, 0), "mật khẩu 1")
		upload := func(file, pwEnv string, extra ...string) (string, error) {
			return runEnv(env, append([]string{"invoices", "certificate", "upload", "--company", company, "--file", file, "--password-env", pwEnv}, extra...)...)
		}

		if _, err := runEnv(env, "invoices", "certificate", "show", "--company", company); err == nil || !strings.Contains(err.Error(), "has no invoice certificate") {
			t.Fatalf("show before any upload: %v", err)
		}
		env["WRONG"] = "not the password"
		if _, err := upload(good, "WRONG"); err == nil || !strings.Contains(err.Error(), "the password does not open this PKCS#12 file") {
			t.Fatalf("wrong password: %v", err)
		}
		if _, err := upload(good, "UNSET"); err == nil || !strings.Contains(err.Error(), "UNSET (--password-env) is empty") {
			t.Fatalf("unset password variable: %v", err)
		}
		expired, _ := p12(t, now.AddDate(-2, 0, 0), now.AddDate(0, 0, -1), "mật khẩu 1")
		if _, err := upload(expired, "P12_PASSWORD"); err == nil || !strings.Contains(err.Error(), "expired on") {
			t.Fatalf("expired certificate: %v", err)
		}
		if _, err := upload(filepath.Join(t.TempDir(), "missing.p12"), "P12_PASSWORD"); err == nil || !strings.Contains(err.Error(), "read the certificate file") {
			t.Fatalf("missing file: %v", err)
		}
		if _, err := runEnv(env, "invoices", "certificate", "show", "--company", company); err == nil {
			t.Fatal("a refused upload stored a certificate")
		}

		out, err := upload(good, "P12_PASSWORD")
		if err != nil {
			t.Fatalf("upload: %v", err)
		}
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		keyText := base64.StdEncoding.EncodeToString(der)
		for _, secret := range []string{"PRIVATE KEY", keyText[:40], keyText[len(keyText)-60 : len(keyText)-20], "mật khẩu"} {
			if strings.Contains(out, secret) {
				t.Fatalf("the upload printed %q:\n%s", secret, out)
			}
		}
		if !strings.Contains(out, "Ánh Dương") || !strings.Contains(out, "uploaded") {
			t.Errorf("upload output:\n%s", out)
		}
		shown := runJSON(t, env, "invoices", "certificate", "show", "--company", company)
		if shown["self_signed"] != false || !strings.Contains(fmt.Sprint(shown["subject"]), "Ánh Dương") || len(shown) != 5 {
			t.Errorf("show: %v", shown)
		}

		// The stored certificate signs the company's invoices.
		db, err := sqlstore.Open(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		var id int64
		fmt.Sscan(company, &id)
		s := &einvoice.Signer{Store: db, Clock: recon.SystemClock{}}
		inv := &recon.Invoice{TemplateCode: "1", Series: "C26TAA", Number: 1, IssuedDate: now, Seller: recon.Seller{LegalName: "A", TaxCode: "0312345679"},
			Items: []recon.InvoiceItem{{LineNumber: 1, LineType: 1, ItemName: "x", Quantity: "1", UnitPrice: 1000, VATRate: "10", Amount: 1000, VATAmount: 100}}}
		signed, err := s.Sign(t.Context(), recon.LiveTenant(id), inv)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := db.InvoiceCertificate(t.Context(), recon.LiveTenant(id))
		if err != nil {
			t.Fatal(err)
		}
		c, err := einvoice.Load(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Key.Equal(key) {
			t.Fatal("the stored key is not the uploaded one")
		}
		if _, err := einvoice.Verify(signed, c.Chain, now); err != nil {
			t.Fatal(err)
		}
	})
}
