// Package invoices is the service of electronic invoices (docs/invoices.md):
// creating one (a draft, or issued at once), issuing a draft, replacing,
// adjusting and cancelling an issued one, reading, listing and checking
// them by tracking code, sending them to the tenant's provider and
// recording its answer (Poll), and the invoice of a paid order (FromOrder,
// AutoInvoice). API v2, the dashboard and the CLI call it; it speaks no
// HTTP (ARCHITECTURE.md, "The dependency rule": services). The amounts are
// the server's (recon.ComputeInvoice); the rules of the life cycle are
// checked by the store under the invoices' locks.
package invoices

import (
	"context"
	"strings"
	"time"

	"recon"
)

// Store is the storage the service needs.
type Store interface {
	// recon.InvoiceStore's:
	CreateInvoice(ctx context.Context, tenant recon.TenantID, inv *recon.Invoice, issue bool, provider string, now time.Time) (*recon.Invoice, error)
	IssueInvoice(ctx context.Context, tenant recon.TenantID, ref string, issued time.Time, provider string, now time.Time) (*recon.Invoice, error)
	SetInvoiceXML(ctx context.Context, tenant recon.TenantID, ref string, xml []byte) error
	InvoiceXML(ctx context.Context, tenant recon.TenantID, ref string) ([]byte, error)
	RecordInvoiceAnswer(ctx context.Context, tenant recon.TenantID, ref string, ans recon.InvoiceAnswer, now time.Time) (*recon.Invoice, error)
	CorrectInvoice(ctx context.Context, tenant recon.TenantID, originalRef string, inv *recon.Invoice, provider string, now time.Time) (*recon.Invoice, error)
	CancelInvoice(ctx context.Context, tenant recon.TenantID, ref, reason string, now time.Time) (*recon.Invoice, error)
	Invoice(ctx context.Context, tenant recon.TenantID, ref string) (*recon.Invoice, error)
	InvoiceByTracking(ctx context.Context, tenant recon.TenantID, tracking string) (*recon.Invoice, error)
	InvoiceByLookup(ctx context.Context, lookup string) (*recon.Invoice, recon.TenantID, error)
	Invoices(ctx context.Context, tenant recon.TenantID, f recon.InvoiceFilter) ([]*recon.Invoice, int64, error)
	PendingInvoices(ctx context.Context, before time.Time, limit int) ([]*recon.Invoice, []recon.TenantID, error)
	QueuedPaidOrders(ctx context.Context, limit int) ([]*recon.Order, []recon.TenantID, error)
	TakeQueuedOrder(ctx context.Context, tenant recon.TenantID, orderID int64, inv *recon.Invoice, provider string, now time.Time) (*recon.Invoice, error)
	DropQueuedOrders(ctx context.Context, tenant recon.TenantID, orderIDs []int64) error
	// recon.CompanyStore's (the seller and its settings):
	Company(ctx context.Context, id int64) (*recon.Company, error)
}

// Signer signs an issued invoice's XML with the seller's certificate
// (docs/invoices.md, XML and its signature): the XML in the tax
// authority's structure, signed (XML-DSig, enveloped, RSA-SHA256).
type Signer interface {
	Sign(ctx context.Context, tenant recon.TenantID, inv *recon.Invoice) ([]byte, error)
}

// Service runs invoices.
type Service struct {
	Store Store
	Clock recon.Clock
	// Location is the business time zone: an invoice's issued date is its
	// day there (default UTC).
	Location *time.Location
	// Signer makes the signed XML an issued invoice is sent with. Without
	// one nothing is issued (drafts only): an invoice is never sent
	// unsigned.
	Signer Signer
	// Live and Test are the providers of live and test tenants; nil: none,
	// invoices are drafted and exported but not sent
	// (recon.RuleNoInvoiceProvider). A server gives test tenants the
	// sandbox (Sandbox); live ones have none until a provider is
	// configured.
	Live, Test recon.InvoiceProvider
	// AutoVATRate is the VAT rate of the one line of an order's automatic
	// invoice under template 1 (default recon.VAT10; docs/invoices.md, From
	// the order).
	AutoVATRate string

	runFor time.Duration // replaces autoRunFor when positive (tests)
}

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// today is the business day of now, as an invoice's issued date (midnight
// UTC of that day's date, as recon.WallClock keeps wall times).
func (s *Service) today(now time.Time) time.Time {
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// provider is the tenant's provider, nil when none.
func (s *Service) provider(tenant recon.TenantID) recon.InvoiceProvider {
	if tenant.Live() {
		return s.Live
	}
	return s.Test
}

// sender returns the tenant's provider when an invoice can be sent, and
// why not otherwise: no provider (RuleNoInvoiceProvider, 422) or no signer
// (EUNAVAILABLE: the server is not set up to sign).
func (s *Service) sender(tenant recon.TenantID) (recon.InvoiceProvider, error) {
	p := s.provider(tenant)
	if p == nil {
		return nil, recon.RuleError(recon.RuleNoInvoiceProvider,
			"no invoice provider is configured for this company: invoices can be drafted and exported (XML, PDF) but not sent to the tax authority")
	}
	if s.Signer == nil {
		return nil, recon.Errorf(recon.EUNAVAILABLE, "this server has no invoice signer: invoices can be drafted but not issued")
	}
	return p, nil
}

// Request is an invoice's content as a merchant gives it: the server fills
// the seller (the company) and computes every amount.
type Request struct {
	// TemplateCode and Series default to the company's (invoice_template,
	// invoice_series).
	TemplateCode, Series string
	// Currency defaults to VND, ExchangeRate to "1", PaymentMethod to "TM/CK".
	Currency, ExchangeRate, PaymentMethod string
	Buyer                                 recon.Buyer
	Items                                 []recon.InvoiceItem
	// OrderID is the order it is for (internal id), 0 none.
	OrderID int64
	// IsDraft keeps it a draft (Create only).
	IsDraft bool
	// AdjustmentType is an adjustment's (Adjust only).
	AdjustmentType string
}

// build makes the invoice of req for the tenant: the company's seller and
// defaults, the amounts computed.
func (s *Service) build(ctx context.Context, tenant recon.TenantID, req Request) (*recon.Invoice, error) {
	co, err := s.Store.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	seller, err := co.Config.InvoiceSeller()
	if err != nil {
		return nil, err
	}
	inv := &recon.Invoice{
		TemplateCode: req.TemplateCode, Series: strings.TrimSpace(req.Series), Currency: req.Currency, ExchangeRate: req.ExchangeRate,
		PaymentMethod: req.PaymentMethod, Seller: seller, Buyer: req.Buyer, Items: append([]recon.InvoiceItem(nil), req.Items...),
		OrderID: req.OrderID, AdjustmentType: req.AdjustmentType,
	}
	if inv.TemplateCode == "" {
		inv.TemplateCode = co.Config.Invoicing.Template
	}
	if inv.Series == "" {
		inv.Series = co.Config.Invoicing.Series
	}
	if inv.Currency == "" {
		inv.Currency = "VND"
	}
	if inv.ExchangeRate == "" {
		inv.ExchangeRate = "1"
	}
	if inv.PaymentMethod == "" {
		inv.PaymentMethod = "TM/CK"
	}
	if !recon.ValidInvoiceTemplate(inv.TemplateCode) {
		return nil, recon.FieldError("template_code", "template_code must be %q (VAT invoice) or %q (sales invoice)", recon.InvoiceTemplateVAT, recon.InvoiceTemplateSales)
	}
	if err := recon.ValidateInvoiceSeries(inv.Series); err != nil {
		return nil, recon.FieldError("invoice_series", "invoice_series: %v", err)
	}
	if inv.Currency != "VND" || inv.ExchangeRate != "1" {
		return nil, recon.FieldError("currency", "invoices are in VND (currency VND, exchange_rate 1)")
	}
	if err := inv.Buyer.Validate(); err != nil {
		return nil, err
	}
	if tc := strings.TrimSpace(inv.Buyer.TaxCode); tc != "" {
		norm, err := recon.NormalizeTaxCode(tc)
		if err != nil {
			return nil, recon.FieldError("buyer.tax_code", "buyer.tax_code: %v", err)
		}
		inv.Buyer.TaxCode = norm
	}
	if err := recon.ComputeInvoice(inv); err != nil {
		return nil, err
	}
	return inv, nil
}

// Create makes an invoice for the caller's tenant: a draft (req.IsDraft),
// or issued at once: numbered, signed and sent to the tenant's provider.
// It returns the invoice (pending when sent: Check follows it).
func (s *Service) Create(ctx context.Context, c *recon.Caller, req Request) (*recon.Invoice, error) {
	if err := c.Authorize(recon.ActionIssueInvoices); err != nil {
		return nil, err
	}
	if req.AdjustmentType != "" {
		return nil, recon.FieldError("adjustment_type", "adjustment_type is for an adjustment (adjust)")
	}
	inv, err := s.build(ctx, c.Tenant, req)
	if err != nil {
		return nil, err
	}
	if req.IsDraft {
		return s.Store.CreateInvoice(ctx, c.Tenant, inv, false, "", s.now())
	}
	p, err := s.sender(c.Tenant)
	if err != nil {
		return nil, err
	}
	now := s.now()
	inv.IssuedDate = s.today(now)
	inv, err = s.Store.CreateInvoice(ctx, c.Tenant, inv, true, p.Name(), now)
	if err != nil {
		return nil, err
	}
	return s.send(ctx, c.Tenant, p, inv)
}

// send signs a pending invoice, keeps its XML and hands it to the
// provider. A signature or submission that fails fails the invoice (its
// number stays used: docs/invoices.md, Numbering) with INVOICE_FAILED.
func (s *Service) send(ctx context.Context, tenant recon.TenantID, p recon.InvoiceProvider, inv *recon.Invoice) (*recon.Invoice, error) {
	xml, err := s.Signer.Sign(ctx, tenant, inv)
	if err == nil {
		err = s.Store.SetInvoiceXML(ctx, tenant, inv.ReferenceCode, xml)
	}
	if err == nil {
		err = p.Submit(ctx, inv, xml)
	}
	if err != nil {
		failed, ferr := s.Store.RecordInvoiceAnswer(ctx, tenant, inv.ReferenceCode,
			recon.InvoiceAnswer{Failure: "could not be sent: " + recon.ErrorMessage(err)}, s.now())
		if ferr != nil {
			// The invoice is stored and numbered: answer it as stored
			// (pending), never an error a retry would make a second
			// invoice of; the loop sends it again (Poll, ResendAfter) or
			// records the answer.
			return inv, nil
		}
		return failed, nil
	}
	return inv, nil
}

// Issue issues a draft of the caller's tenant: numbered now, signed and sent.
func (s *Service) Issue(ctx context.Context, c *recon.Caller, ref string) (*recon.Invoice, error) {
	if err := c.Authorize(recon.ActionIssueInvoices); err != nil {
		return nil, err
	}
	inv, err := s.Store.Invoice(ctx, c.Tenant, ref)
	if err != nil {
		return nil, err
	}
	if err := recon.CanIssueInvoice(inv); err != nil {
		return nil, err
	}
	p, err := s.sender(c.Tenant)
	if err != nil {
		return nil, err
	}
	now := s.now()
	inv, err = s.Store.IssueInvoice(ctx, c.Tenant, ref, s.today(now), p.Name(), now)
	if err != nil {
		return nil, err
	}
	return s.send(ctx, c.Tenant, p, inv)
}

// Replace issues a replacement of the issued invoice originalRef with the
// full content of req; the original becomes replaced (the rules: the
// store, recon.CanReplaceInvoice).
func (s *Service) Replace(ctx context.Context, c *recon.Caller, originalRef string, req Request) (*recon.Invoice, error) {
	if req.AdjustmentType != "" {
		return nil, recon.FieldError("adjustment_type", "adjustment_type is for an adjustment (adjust), not a replacement")
	}
	return s.correct(ctx, c, originalRef, req, recon.InvoiceRelReplace)
}

// Adjust issues an adjustment of the issued invoice originalRef: req
// carries only the differences (increase or decrease) or the corrected
// information (info); the original becomes adjusted and may be adjusted
// again.
func (s *Service) Adjust(ctx context.Context, c *recon.Caller, originalRef string, req Request) (*recon.Invoice, error) {
	return s.correct(ctx, c, originalRef, req, recon.InvoiceRelAdjust)
}

func (s *Service) correct(ctx context.Context, c *recon.Caller, originalRef string, req Request, relation int) (*recon.Invoice, error) {
	if err := c.Authorize(recon.ActionIssueInvoices); err != nil {
		return nil, err
	}
	if req.IsDraft {
		return nil, recon.FieldError("is_draft", "a replacement or adjustment is issued at once, never a draft")
	}
	orig, err := s.Store.Invoice(ctx, c.Tenant, originalRef)
	if err != nil {
		return nil, err
	}
	// The rules, early (the store checks them again under the lock).
	if relation == recon.InvoiceRelReplace {
		err = recon.CanReplaceInvoice(orig)
	} else {
		err = recon.CanAdjustInvoice(orig, req.AdjustmentType)
	}
	if err != nil {
		return nil, err
	}
	if req.OrderID == 0 {
		req.OrderID = orig.OrderID
	}
	if req.TemplateCode == "" {
		req.TemplateCode = orig.TemplateCode
	}
	inv, err := s.build(ctx, c.Tenant, req)
	if err != nil {
		return nil, err
	}
	inv.Relation = relation
	p, err := s.sender(c.Tenant)
	if err != nil {
		return nil, err
	}
	now := s.now()
	inv.IssuedDate = s.today(now)
	inv, err = s.Store.CorrectInvoice(ctx, c.Tenant, orig.ReferenceCode, inv, p.Name(), now)
	if err != nil {
		return nil, err
	}
	return s.send(ctx, c.Tenant, p, inv)
}

// Cancel cancels an issued invoice of the caller's tenant that was neither
// replaced nor adjusted, with the reason; its number stays used.
func (s *Service) Cancel(ctx context.Context, c *recon.Caller, ref, reason string) (*recon.Invoice, error) {
	if err := c.Authorize(recon.ActionIssueInvoices); err != nil {
		return nil, err
	}
	inv, err := s.Store.Invoice(ctx, c.Tenant, ref)
	if err != nil {
		return nil, err
	}
	if err := recon.CanCancelInvoice(inv, reason); err != nil {
		return nil, err
	}
	return s.Store.CancelInvoice(ctx, c.Tenant, ref, reason, s.now())
}

// Get returns one of the caller's tenant's invoices.
func (s *Service) Get(ctx context.Context, c *recon.Caller, ref string) (*recon.Invoice, error) {
	if err := c.Authorize(recon.ActionReadInvoices); err != nil {
		return nil, err
	}
	return s.Store.Invoice(ctx, c.Tenant, ref)
}

// XML returns an invoice's signed XML; a draft, or an invoice whose
// signature failed, has none (ENOTFOUND).
func (s *Service) XML(ctx context.Context, c *recon.Caller, ref string) ([]byte, error) {
	if err := c.Authorize(recon.ActionReadInvoices); err != nil {
		return nil, err
	}
	xml, err := s.Store.InvoiceXML(ctx, c.Tenant, ref)
	if err != nil {
		return nil, err
	}
	if xml == nil {
		return nil, recon.Errorf(recon.ENOTFOUND, "invoice %s has no signed XML: it was never issued", ref)
	}
	return xml, nil
}

// MaxPerPage bounds a page of List.
const MaxPerPage = 100

// List returns a page of the caller's tenant's invoices, newest first, and
// the total.
func (s *Service) List(ctx context.Context, c *recon.Caller, f recon.InvoiceFilter) ([]*recon.Invoice, int64, error) {
	if err := c.Authorize(recon.ActionReadInvoices); err != nil {
		return nil, 0, err
	}
	if f.PerPage > MaxPerPage {
		return nil, 0, recon.FieldError("per_page", "per_page must be from 1 to %d", MaxPerPage)
	}
	if f.Location == nil {
		f.Location = s.Location
	}
	return s.Store.Invoices(ctx, c.Tenant, f)
}

// Check states of a tracking code (GET /v1/invoices/create/check).
const (
	CheckPending = "Pending" // a draft, or sent and not answered yet
	CheckSuccess = "Success" // issued (and maybe corrected or cancelled since)
	CheckFailed  = "Failed"  // refused by the provider
)

// CheckStatus is the tracking state of an invoice's status.
func CheckStatus(status string) string {
	switch status {
	case recon.InvoiceDraft, recon.InvoicePending:
		return CheckPending
	case recon.InvoiceFailed:
		return CheckFailed
	}
	return CheckSuccess
}

// Check follows an invoice by its tracking code: Pending, Success or
// Failed, and the invoice.
func (s *Service) Check(ctx context.Context, c *recon.Caller, tracking string) (string, *recon.Invoice, error) {
	if err := c.Authorize(recon.ActionReadInvoices); err != nil {
		return "", nil, err
	}
	inv, err := s.Store.InvoiceByTracking(ctx, c.Tenant, tracking)
	if err != nil {
		return "", nil, err
	}
	return CheckStatus(inv.Status), inv, nil
}

// Lookup finds an invoice by its lookup code for the public lookup page
// (no caller: the code is the key), with its XML (nil when none).
func (s *Service) Lookup(ctx context.Context, code string) (*recon.Invoice, []byte, error) {
	inv, tenant, err := s.Store.InvoiceByLookup(ctx, code)
	if err != nil {
		return nil, nil, err
	}
	if inv.Status == recon.InvoiceDraft {
		return nil, nil, recon.Errorf(recon.ENOTFOUND, "no invoice has lookup code %s", code)
	}
	xml, err := s.Store.InvoiceXML(ctx, tenant, inv.ReferenceCode)
	if err != nil {
		return nil, nil, err
	}
	return inv, xml, nil
}

// ResendAfter is how long after it was numbered a pending invoice without
// its signed XML is taken as abandoned (the node that numbered it stopped
// before sending it) and Poll signs and sends it.
const ResendAfter = time.Minute

// MaxPollBatch bounds the invoices one Poll asks about.
const MaxPollBatch = 100

// Poll asks the providers about pending invoices and records each answer
// that came (issued or failed, with its IPN), and reports how many. The
// maintenance loop runs it on every node; an answer is recorded once (the
// store refuses a second: RuleInvoiceNotPending, skipped here).
func (s *Service) Poll(ctx context.Context) (int, error) {
	now := s.now()
	pending, tenants, err := s.Store.PendingInvoices(ctx, now, MaxPollBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for i, inv := range pending {
		p := s.provider(tenants[i])
		if p == nil {
			continue // the provider was removed: it stays pending until one answers
		}
		xml, err := s.Store.InvoiceXML(ctx, tenants[i], inv.ReferenceCode)
		if err != nil {
			return n, err
		}
		if xml == nil {
			// Not sent yet: being sent by the request that numbered it,
			// or abandoned (its node stopped between numbering and
			// sending), then sent now.
			if inv.UpdatedAt.Add(ResendAfter).Before(now) && s.Signer != nil {
				if _, err := s.send(ctx, tenants[i], p, inv); err != nil {
					return n, err
				}
			}
			continue
		}
		done, cqt, failure, err := p.Poll(ctx, inv)
		if err != nil {
			return n, err
		}
		if !done {
			continue
		}
		_, err = s.Store.RecordInvoiceAnswer(ctx, tenants[i], inv.ReferenceCode, recon.InvoiceAnswer{CQTCode: cqt, Failure: failure}, now)
		if recon.ErrorReason(err) == recon.RuleInvoiceNotPending {
			continue // another node recorded it
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
