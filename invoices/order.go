package invoices

import (
	"context"
	"errors"
	"time"

	"recon"
)

// WalkInBuyer is the buyer of an order's invoice when the order names none
// (khách lẻ: a walk-in customer).
const WalkInBuyer = "Khách lẻ"

// OrderRequest is the invoice content of an order (docs/invoices.md, From
// the order): its buyer (WalkInBuyer when none) and one line from its
// amount and description ("Đơn hàng" and its invoice number when it has
// none). The line's total is the amount paid: under template 2 (sales
// invoice, no VAT) the unit price is the amount; under template 1 the
// amount includes VAT at rate, and the unit price is the one whose
// computed total (price + VAT rounded half up) is exactly the amount.
func OrderRequest(o *recon.Order, template, rate string) Request {
	buyer := o.Buyer
	if buyer.IsZero() {
		buyer = recon.Buyer{Name: WalkInBuyer}
	}
	name := o.Description
	if name == "" {
		name = "Đơn hàng " + o.InvoiceNumber
	}
	item := recon.InvoiceItem{LineNumber: 1, LineType: recon.LineGoods, ItemName: name, Quantity: "1", UnitPrice: o.Amount}
	if template != recon.InvoiceTemplateSales {
		item.VATRate = rate
		item.UnitPrice = priceBeforeVAT(o.Amount, rate)
	}
	return Request{TemplateCode: template, Buyer: buyer, Items: []recon.InvoiceItem{item}, OrderID: o.ID}
}

// vatPercents are the rates with VAT on top; the others (KCT, KKKNT, 0)
// have none.
var vatPercents = map[string]int64{recon.VAT5: 5, recon.VAT8: 8, recon.VAT10: 10}

// priceBeforeVAT is the price p whose p + round_half_up(p × rate) is total,
// the closest such when none is exact (total × 100 / (100 + rate) rounded,
// then the neighbours tried).
func priceBeforeVAT(total int64, rate string) int64 {
	pct, ok := vatPercents[rate]
	if !ok || total <= 0 {
		return total
	}
	with := func(p int64) int64 { return p + (p*pct+50)/100 }
	p := (total*100 + (100+pct)/2) / (100 + pct)
	for _, d := range []int64{0, -1, 1, -2, 2} {
		if q := p + d; q >= 0 && with(q) == total {
			return q
		}
	}
	return p
}

// FromOrder makes the invoice of a paid order of the caller's tenant (the
// dashboard's button on a paid order): OrderRequest with the company's
// template, issued unless draft.
func (s *Service) FromOrder(ctx context.Context, c *recon.Caller, o *recon.Order, draft bool) (*recon.Invoice, error) {
	if err := c.Authorize(recon.ActionIssueInvoices); err != nil {
		return nil, err
	}
	if o.CompanyID != c.Tenant.ID() {
		return nil, recon.Errorf(recon.ENOTFOUND, "order %s not found", o.InvoiceNumber)
	}
	if o.Status != recon.OrderCaptured {
		return nil, recon.RuleError(recon.RuleInvalidState, "order %s is not paid: only a paid order gets its invoice", o.InvoiceNumber)
	}
	co, err := s.Store.Company(ctx, c.Tenant.ID())
	if err != nil {
		return nil, err
	}
	req := OrderRequest(o, co.Config.Invoicing.Template, s.autoRate())
	req.IsDraft = draft
	return s.Create(ctx, c, req)
}

func (s *Service) autoRate() string {
	if s.AutoVATRate == "" {
		return recon.VAT10
	}
	return s.AutoVATRate
}

// MaxAutoBatch bounds the orders one read of the queue takes, and
// maxAutoBatches the reads of one AutoInvoice run: 2,000 orders a run, every
// two seconds, drain the queue faster than payments fill it (the queue took
// 100 a run, and fell behind 500 payments a second). A run that has made
// invoices reads no more once it has lasted autoRunFor (real time, not the
// service's clock: a bound on the run's work): each is sent to the provider,
// and the maintenance steps after it wait for the run.
const (
	MaxAutoBatch   = 100
	maxAutoBatches = 20
	autoRunFor     = time.Second
)

func (s *Service) autoRunFor() time.Duration {
	if s.runFor > 0 {
		return s.runFor
	}
	return autoRunFor
}

// AutoInvoice is auto_invoice (docs/invoices.md, From the order): the
// maintenance step that takes the orders that became paid (queued by the
// payment's own transaction) and, for a company with auto_invoice on,
// issues each one's invoice (OrderRequest), or keeps it a draft when the
// tenant has no provider or the server no signer. Exactly once, whichever
// node runs it: taking an order off the queue and storing its invoice are
// one transaction (TakeQueuedOrder). An order of a company without
// auto_invoice is taken off with nothing made, each read's such orders in
// one statement a tenant (DropQueuedOrders); one whose invoice cannot be
// made (the seller's details incomplete, the buyer's tax code wrong) too,
// its error returned joined with the others' (the loop logs them): the
// dashboard's button makes it once fixed. It reads the queue until it is
// empty or maxAutoBatches reads, and reports how many invoices it made.
func (s *Service) AutoInvoice(ctx context.Context) (int, error) {
	n := 0
	var errs []error
	companies := map[int64]*recon.Company{} // read once a run
	start := time.Now()
	for range maxAutoBatches {
		orders, tenants, err := s.Store.QueuedPaidOrders(ctx, MaxAutoBatch)
		if err != nil {
			return n, err
		}
		drop := map[recon.TenantID][]int64{}
		for i, o := range orders {
			tenant := tenants[i]
			co, ok := companies[tenant.ID()]
			if !ok {
				if co, err = s.Store.Company(ctx, tenant.ID()); err != nil {
					return n, err
				}
				companies[tenant.ID()] = co
			}
			// An order voided since it was paid gets none.
			if !co.Config.Invoicing.AutoInvoice || o.Status != recon.OrderCaptured {
				drop[tenant] = append(drop[tenant], o.ID)
				continue
			}
			inv, err := s.build(ctx, tenant, OrderRequest(o, co.Config.Invoicing.Template, s.autoRate()))
			if c := recon.ErrorCode(err); c == recon.EINTERNAL || c == recon.EUNAVAILABLE {
				return n, err // the database failed or is away for a moment: the order stays queued
			}
			if err != nil {
				errs = append(errs, recon.Errorf(recon.ErrorCode(err), "order %s: no automatic invoice: %s", o.InvoiceNumber, recon.ErrorMessage(err)))
				drop[tenant] = append(drop[tenant], o.ID)
				continue
			}
			provider := ""
			if p, err := s.sender(tenant); err == nil {
				provider = p.Name()
				inv.IssuedDate = s.today(s.now())
			}
			made, err := s.Store.TakeQueuedOrder(ctx, tenant, o.ID, inv, provider, s.now())
			if err != nil {
				return n, err
			}
			if made == nil {
				continue
			}
			n++
			if provider != "" {
				if _, err := s.send(ctx, tenant, s.provider(tenant), made); err != nil {
					return n, err
				}
			}
		}
		for tenant, ids := range drop {
			if err := s.Store.DropQueuedOrders(ctx, tenant, ids); err != nil {
				return n, err
			}
		}
		if len(orders) < MaxAutoBatch || (n > 0 && time.Since(start) > s.autoRunFor()) {
			break
		}
	}
	return n, errors.Join(errs...)
}
