package invoices

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"recon"
)

// SandboxProvider is the name of the sandbox invoice provider.
const SandboxProvider = "sandbox"

// SandboxFailures are the buyer tax codes the sandbox provider refuses
// (valid codes, check digit included), with the failure reason each gets
// (docs/invoices.md, Providers): a merchant's test of INVOICE_FAILED.
var SandboxFailures = map[string]string{
	"9999999919": "the buyer's tax code is not registered with the tax authority",
	"9999999926": "the buyer's tax code belongs to a business that stopped operating",
}

// DefaultSandboxDelay is the sandbox's "moment": how long after an invoice
// was sent the tax authority answers.
const DefaultSandboxDelay = 5 * time.Second

// Sandbox is the sandbox provider (recon.InvoiceProvider), test tenants'
// provider: it takes every invoice (Submit) and answers a moment later
// (Delay after the invoice became pending, by Clock): refused when the
// buyer's tax code is one of SandboxFailures, else accepted with a fake
// authority code (SandboxCQTCode). It never sleeps: the service's Poll,
// driven by the maintenance loop or a test, asks it. Its answer is a pure
// function of the invoice and the time, so several nodes asking at once
// agree, and the store records the first answer only.
type Sandbox struct {
	Clock recon.Clock
	// Delay is the moment (default DefaultSandboxDelay).
	Delay time.Duration
}

// Name implements recon.InvoiceProvider.
func (s *Sandbox) Name() string { return SandboxProvider }

// Submit implements recon.InvoiceProvider: the sandbox takes every invoice.
func (s *Sandbox) Submit(context.Context, *recon.Invoice, []byte) error { return nil }

// Poll implements recon.InvoiceProvider.
func (s *Sandbox) Poll(_ context.Context, inv *recon.Invoice) (bool, string, string, error) {
	now := time.Now()
	if s.Clock != nil {
		now = s.Clock.Now()
	}
	delay := s.Delay
	if delay <= 0 {
		delay = DefaultSandboxDelay
	}
	if now.Before(inv.UpdatedAt.Add(delay)) {
		return false, "", "", nil
	}
	if reason, fails := SandboxFailures[strings.TrimSpace(inv.Buyer.TaxCode)]; fails {
		return true, "", reason, nil
	}
	return true, SandboxCQTCode(inv), "", nil
}

// SandboxCQTCode is the fake authority code (MCCQT) the sandbox gives an
// invoice: 34 characters like the tax authority's, "SB" and 32 upper-case
// hexadecimal digits of a hash of the company, template, series, year and
// number, so it is the same on every node and never a real code.
func SandboxCQTCode(inv *recon.Invoice) string {
	h := sha256.Sum256([]byte(strings.Join([]string{"recon-sandbox", strconv.FormatInt(inv.CompanyID, 10), inv.TemplateCode, inv.Series,
		strconv.Itoa(inv.IssuedDate.Year()), strconv.FormatInt(inv.Number, 10)}, "|")))
	return "SB" + strings.ToUpper(hex.EncodeToString(h[:16]))
}
