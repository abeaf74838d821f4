package einvoice

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
	"software.sslmate.com/src/go-pkcs12"

	"recon"
)

// The signature (docs/invoices.md, XML and its signature): XML-DSig,
// RSA-SHA256, exclusive canonicalization, one Reference to DLHDon by its
// Id with the enveloped-signature transform, the certificate chain in
// KeyInfo/X509Data. It is placed where the format puts the seller's
// signature, HDon/DSCKS/NBan, outside what it signs, so the authority's
// code (MCCQT, a sibling of DLHDon) can be added after signing.

// MinRSABits is the smallest RSA key accepted.
const MinRSABits = 2048

// Certificate is a parsed signing certificate.
type Certificate struct {
	Key   *rsa.PrivateKey
	Chain []*x509.Certificate // the signing certificate first
}

// ParsePKCS12 reads a PKCS#12 file with its password and checks it can sign
// invoices at now: an RSA key of at least MinRSABits bits matching the
// certificate, which is valid at now. The errors say which check failed and
// never quote the key.
func ParsePKCS12(data []byte, password string, now time.Time) (*recon.InvoiceCertificate, error) {
	key, cert, cas, err := pkcs12.DecodeChain(data, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return nil, recon.Errorf(recon.EINVALID, "the password does not open this PKCS#12 file")
	}
	if err != nil {
		return nil, recon.Errorf(recon.EINVALID, "not a PKCS#12 certificate file this can read: %v", err)
	}
	rk, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, recon.Errorf(recon.EINVALID, "the certificate's key is %T: invoices are signed with RSA-SHA256 and need an RSA key", key)
	}
	c := &Certificate{Key: rk, Chain: append([]*x509.Certificate{cert}, cas...)}
	if err := c.check(now); err != nil {
		return nil, err
	}
	return c.Record(false)
}

func (c *Certificate) check(now time.Time) error {
	cert := c.Chain[0]
	if c.Key.N.BitLen() < MinRSABits {
		return recon.Errorf(recon.EINVALID, "the key has %d bits: at least %d are needed", c.Key.N.BitLen(), MinRSABits)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok || !pub.Equal(&c.Key.PublicKey) {
		return recon.Errorf(recon.EINVALID, "the key in the file is not the certificate's")
	}
	if now.After(cert.NotAfter) {
		return recon.Errorf(recon.EINVALID, "the certificate of %s expired on %s", cert.Subject.CommonName, cert.NotAfter.UTC().Format(time.DateOnly))
	}
	if now.Before(cert.NotBefore) {
		return recon.Errorf(recon.EINVALID, "the certificate of %s is valid only from %s", cert.Subject.CommonName, cert.NotBefore.UTC().Format(time.DateOnly))
	}
	return nil
}

// Record is c as the store keeps it.
func (c *Certificate) Record(selfSigned bool) (*recon.InvoiceCertificate, error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		return nil, fmt.Errorf("encode the key: %w", err)
	}
	var chain bytes.Buffer
	for _, x := range c.Chain {
		_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: x.Raw})
	}
	cert := c.Chain[0]
	return &recon.InvoiceCertificate{
		PrivateKey:   string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		Certificates: chain.String(),
		Subject:      cert.Subject.String(),
		SerialNumber: cert.SerialNumber.Text(16),
		NotBefore:    cert.NotBefore.UTC(),
		NotAfter:     cert.NotAfter.UTC(),
		SelfSigned:   selfSigned,
	}, nil
}

// Load parses a stored certificate.
func Load(rec *recon.InvoiceCertificate) (*Certificate, error) {
	block, _ := pem.Decode([]byte(rec.PrivateKey))
	if block == nil {
		return nil, errors.New("the stored invoice certificate has no key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the stored invoice certificate's key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the stored invoice certificate's key is not RSA")
	}
	c := &Certificate{Key: rk}
	rest := []byte(rec.Certificates)
	for {
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		x, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("the stored invoice certificate: %w", err)
		}
		c.Chain = append(c.Chain, x)
	}
	if len(c.Chain) == 0 {
		return nil, errors.New("the stored invoice certificate has no certificate")
	}
	return c, nil
}

// SelfSigned makes the sandbox's certificate for seller: an RSA key from
// random and a self-signed certificate valid from now for ten years. Only
// the sandbox signs with it (docs/invoices.md, XML and its signature).
func SelfSigned(seller recon.Seller, now time.Time, random io.Reader) (*Certificate, error) {
	if random == nil {
		random = rand.Reader
	}
	key, err := rsa.GenerateKey(random, MinRSABits)
	if err != nil {
		return nil, fmt.Errorf("make the sandbox key: %w", err)
	}
	serial := make([]byte, 16)
	if _, err := io.ReadFull(random, serial); err != nil {
		return nil, fmt.Errorf("make the sandbox certificate: %w", err)
	}
	name := seller.LegalName
	if name == "" {
		name = "Recon sandbox seller"
	}
	subject := pkix.Name{CommonName: name + " (sandbox)", Organization: []string{"Recon sandbox, not valid for the tax authority"}}
	if seller.TaxCode != "" {
		subject.SerialNumber = "MST:" + seller.TaxCode
	}
	tmpl := &x509.Certificate{
		SerialNumber:          new(big.Int).SetBytes(serial),
		Subject:               subject,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true, // its own trust anchor, so a verifier can be given it as such
	}
	der, err := x509.CreateCertificate(random, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the sandbox certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Certificate{Key: key, Chain: []*x509.Certificate{cert}}, nil
}

// signingContext is the XML-DSig profile of docs/invoices.md.
func (c *Certificate) signingContext() (*dsig.SigningContext, error) {
	certs := make([][]byte, len(c.Chain))
	for i, x := range c.Chain {
		certs[i] = x.Raw
	}
	ctx, err := dsig.NewSigningContext(c.Key, certs)
	if err != nil {
		return nil, err
	}
	ctx.IdAttribute = "Id"
	ctx.Prefix = ""
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	if err := ctx.SetSignatureMethod(dsig.RSASHA256SignatureMethod); err != nil {
		return nil, err
	}
	return ctx, nil
}

// SignDocument signs doc's DLHDon and puts the signature in HDon/DSCKS/NBan.
func (c *Certificate) SignDocument(doc *etree.Document) ([]byte, error) {
	root := doc.Root()
	if root == nil || root.Tag != "HDon" {
		return nil, errors.New("not an invoice document (no HDon)")
	}
	data := root.SelectElement("DLHDon")
	if data == nil {
		return nil, errors.New("not an invoice document (no DLHDon)")
	}
	ctx, err := c.signingContext()
	if err != nil {
		return nil, err
	}
	sig, err := ctx.ConstructSignature(data, true)
	if err != nil {
		return nil, fmt.Errorf("sign the invoice: %w", err)
	}
	ds := root.SelectElement("DSCKS")
	if ds == nil {
		ds = root.CreateElement("DSCKS")
	}
	nban := ds.SelectElement("NBan")
	if nban == nil {
		nban = ds.CreateElement("NBan")
	}
	nban.AddChild(sig)
	return write(doc)
}

// Verify checks the seller's signature of signed (HDon/DSCKS/NBan/Signature
// over DLHDon) with goxmldsig, trusting the certificates roots at now, and
// returns the signing certificate. goxmldsig verifies enveloped signatures
// only, so the signature is checked inside a copy of DLHDon: the
// enveloped-signature transform takes it out again before the digest.
func Verify(signed []byte, roots []*x509.Certificate, now time.Time) (*x509.Certificate, error) {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(signed); err != nil {
		return nil, fmt.Errorf("read the XML: %w", err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "HDon" {
		return nil, errors.New("not an invoice document (no HDon)")
	}
	data := root.SelectElement("DLHDon")
	sig := root.FindElement("./DSCKS/NBan/Signature")
	if data == nil || sig == nil {
		return nil, errors.New("the invoice has no seller's signature (HDon/DSCKS/NBan/Signature)")
	}
	probe := data.Copy()
	probe.AddChild(sig.Copy())
	vc := dsig.NewDefaultValidationContext(&dsig.MemoryX509CertificateStore{Roots: roots})
	vc.IdAttribute = "Id"
	vc.Clock = dsig.NewFakeClockAt(now)
	if _, err := vc.Validate(probe); err != nil {
		return nil, fmt.Errorf("the seller's signature does not verify: %w", err)
	}
	x := sig.FindElement(".//X509Certificate")
	if x == nil {
		return nil, errors.New("the signature carries no certificate")
	}
	for _, r := range roots {
		if base64Equal(x.Text(), r.Raw) {
			return r, nil
		}
	}
	return nil, errors.New("the signing certificate is not among the trusted ones")
}

func base64Equal(b64 string, raw []byte) bool {
	der, err := decodeBase64(b64)
	return err == nil && sha256.Sum256(der) == sha256.Sum256(raw)
}

// CertStore keeps each tenant's invoice certificate (sqlstore).
type CertStore interface {
	// InvoiceCertificate returns the tenant's certificate, or ENOTFOUND.
	InvoiceCertificate(ctx context.Context, tenant recon.TenantID) (*recon.InvoiceCertificate, error)
	// SaveInvoiceCertificate stores c as the tenant's certificate. With
	// onlyIfNone it keeps a certificate already there and returns that
	// one (so concurrent signers agree on one sandbox certificate).
	SaveInvoiceCertificate(ctx context.Context, tenant recon.TenantID, c *recon.InvoiceCertificate, onlyIfNone bool) (*recon.InvoiceCertificate, error)
}

// Signer signs invoices' XML with the tenant's certificate; the invoice
// service calls it at issue (docs/invoices.md, XML and its signature).
type Signer struct {
	Store CertStore
	Clock recon.Clock
	// Random makes sandbox keys; nil is crypto/rand.
	Random io.Reader
	// Sandbox lets live tenants without a certificate sign with a
	// self-signed one too (recon serve --sandbox). Test tenants always may.
	Sandbox bool
	// Original returns the invoice of tenant with the reference code: the
	// one a replacement or adjustment names (for TTHDLQuan).
	Original func(ctx context.Context, tenant recon.TenantID, referenceCode string) (*recon.Invoice, error)
}

// Sign returns inv's signed XML.
func (s *Signer) Sign(ctx context.Context, tenant recon.TenantID, inv *recon.Invoice) ([]byte, error) {
	var orig *recon.Invoice
	if inv.Relation != 0 {
		if s.Original == nil {
			return nil, errors.New("einvoice.Signer has no Original lookup: it cannot sign a replacement or adjustment")
		}
		var err error
		if orig, err = s.Original(ctx, tenant, inv.OriginalReferenceCode); err != nil {
			return nil, err
		}
	}
	doc, err := Document(inv, orig)
	if err != nil {
		return nil, err
	}
	cert, err := s.Certificate(ctx, tenant, inv.Seller)
	if err != nil {
		return nil, err
	}
	return cert.SignDocument(doc)
}

// Certificate returns the tenant's signing certificate: the uploaded one,
// or in the sandbox (a test tenant, or Sandbox) a self-signed one made and
// stored on first use. A live tenant without one gets an EINVALID naming
// the command that uploads it; an expired one is refused.
func (s *Signer) Certificate(ctx context.Context, tenant recon.TenantID, seller recon.Seller) (*Certificate, error) {
	now := s.Clock.Now()
	rec, err := s.Store.InvoiceCertificate(ctx, tenant)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		if tenant.Live() && !s.Sandbox {
			return nil, recon.Errorf(recon.EINVALID, "the company has no certificate to sign invoices with: upload its PKCS#12 file (recon invoices certificate upload)")
		}
		made, err := SelfSigned(seller, now, s.Random)
		if err != nil {
			return nil, err
		}
		r, err := made.Record(true)
		if err != nil {
			return nil, err
		}
		if rec, err = s.Store.SaveInvoiceCertificate(ctx, tenant, r, true); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	c, err := Load(rec)
	if err != nil {
		return nil, err
	}
	if now.After(c.Chain[0].NotAfter) {
		return nil, recon.Errorf(recon.EINVALID, "the company's invoice certificate expired on %s: upload a new one", c.Chain[0].NotAfter.UTC().Format(time.DateOnly))
	}
	return c, nil
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
}

// XmlsecArgs are the arguments of Debian's xmlsec1 that verify the signed
// invoice file against the trusted certificate certPEM (docs/invoices.md,
// XML and its signature).
func XmlsecArgs(certPEM, file string) []string {
	return []string{"--verify", "--enabled-reference-uris", "empty,same-doc", "--id-attr:Id", "DLHDon", "--trusted-pem", certPEM, file}
}
