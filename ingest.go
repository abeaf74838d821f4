package recon

import (
	"context"
	"fmt"
	"time"
)

// IngestStore is what Ingest needs of storage.
type IngestStore interface {
	Company(ctx context.Context, id int64) (*Company, error)
	IngestTransactions(ctx context.Context, tenant TenantID, in []TransactionInput, codes []string) ([]IngestResult, error)
}

// Ingest is the one pipeline every way in shares (bank-feed push, statement
// import, sandbox transfer): it validates the batch, extracts each memo's
// payment code with the company's active formats (none when the company
// has paycode off), and stores the batch, duplicates reported and not
// stored twice. An invalid item is EINVALID naming it, and nothing is stored.
// now is the business time (the injected Clock's): it bounds the dates
// (TransactionInput.Validate).
func Ingest(ctx context.Context, s IngestStore, tenant TenantID, now time.Time, in []TransactionInput) ([]IngestResult, error) {
	if len(in) > MaxIngestBatch {
		return nil, FieldError("transactions", "a batch holds at most %d transactions, not %d", MaxIngestBatch, len(in))
	}
	for i := range in {
		if err := in[i].Validate(fmt.Sprintf("transactions[%d]", i), now); err != nil {
			return nil, err
		}
		in[i].References = CleanReferences(in[i].ReferenceNumber, in[i].References)
	}
	co, err := s.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	ext := CompanyExtractor(&co.Config)
	codes := make([]string, len(in))
	for i := range in {
		codes[i] = ext.Extract(in[i].Content)
	}
	return s.IngestTransactions(ctx, tenant, in, codes)
}

// CompanyExtractor returns the extractor of the company's active formats
// (none when the company has turned paycode off) and, always, of the memo
// codes of virtual accounts (MemoVAFormat; docs/api-v2.md, Virtual accounts).
func CompanyExtractor(c *CompanyConfig) *Extractor {
	formats := []PaymentCodeFormat{MemoVAFormat}
	if c.Paycode {
		formats = append(formats, c.PaymentCodeFormats...)
	}
	return NewExtractor(formats)
}

// AtomicIngestStore is what IngestAll needs of storage.
type AtomicIngestStore interface {
	IngestStore
	// IngestAtomically: see TransactionStore.
	IngestAtomically(ctx context.Context, tenant TenantID, fill func(ingest func(in []TransactionInput, codes []string) ([]IngestResult, error)) error) error
}

// MaxStatementBytes is the largest statement file an upload accepts, the
// same through the API (POST /api/v1/bank-accounts/{id}/statements) and the
// dashboard.
const MaxStatementBytes = 64 << 20

// IngestAll is Ingest for input too large for one batch (a statement file):
// fill calls add with batches of at most MaxIngestBatch transactions, each
// validated and coded as Ingest does, and everything is stored in one
// database transaction: all of it when fill returns nil, none of it when
// fill or add fails, whatever failed and wherever. now bounds the dates, as
// in Ingest.
func IngestAll(ctx context.Context, s AtomicIngestStore, tenant TenantID, now time.Time, fill func(add func(in []TransactionInput) ([]IngestResult, error)) error) error {
	co, err := s.Company(ctx, tenant.ID())
	if err != nil {
		return err
	}
	ext := CompanyExtractor(&co.Config)
	return s.IngestAtomically(ctx, tenant, func(ingest func([]TransactionInput, []string) ([]IngestResult, error)) error {
		return fill(func(in []TransactionInput) ([]IngestResult, error) {
			if len(in) > MaxIngestBatch {
				return nil, FieldError("transactions", "a batch holds at most %d transactions, not %d", MaxIngestBatch, len(in))
			}
			codes := make([]string, len(in))
			for i := range in {
				if err := in[i].Validate(fmt.Sprintf("transactions[%d]", i), now); err != nil {
					return nil, err
				}
				in[i].References = CleanReferences(in[i].ReferenceNumber, in[i].References)
				codes[i] = ext.Extract(in[i].Content)
			}
			return ingest(in, codes)
		})
	})
}
