package recon

import "time"

// InvoiceCertificate is the certificate a tenant signs its invoices' XML
// with (docs/invoices.md, XML and its signature): the merchant's, uploaded
// as PKCS#12, or, in the sandbox, a self-signed one Recon made. The private
// key is stored sealed like every secret; it is never shown.
type InvoiceCertificate struct {
	CompanyID int64 // the tenant's company_id
	// PrivateKey is the RSA key in PKCS#8 PEM. Never printed or logged.
	PrivateKey string `json:"-"`
	// Certificates is the PEM of the signing certificate followed by the
	// rest of its chain, as the PKCS#12 file held it.
	Certificates string
	Subject      string
	SerialNumber string
	NotBefore    time.Time
	NotAfter     time.Time
	SelfSigned   bool // made by Recon for the sandbox
	CreatedAt    time.Time
}

// String names the certificate without its key.
func (c *InvoiceCertificate) String() string {
	return c.Subject + " (serial " + c.SerialNumber + ", valid until " + c.NotAfter.UTC().Format(time.DateOnly) + ")"
}
