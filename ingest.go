package recon

import (
	"context"
	"fmt"
	"sync"
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
	return ingest(ctx, s, tenant, now, in, func() (*Extractor, error) {
		co, err := s.Company(ctx, tenant.ID())
		if err != nil {
			return nil, err
		}
		return CompanyExtractor(&co.Config), nil
	})
}

// ingest is Ingest with the company's extractor from extractor, asked for
// once the batch is valid.
func ingest(ctx context.Context, s IngestStore, tenant TenantID, now time.Time, in []TransactionInput, extractor func() (*Extractor, error)) ([]IngestResult, error) {
	if len(in) > MaxIngestBatch {
		return nil, FieldError("transactions", "a batch holds at most %d transactions, not %d", MaxIngestBatch, len(in))
	}
	for i := range in {
		if err := in[i].Validate(fmt.Sprintf("transactions[%d]", i), now); err != nil {
			return nil, err
		}
		in[i].References = CleanReferences(in[i].ReferenceNumber, in[i].References)
	}
	ext, err := extractor()
	if err != nil {
		return nil, err
	}
	codes := make([]string, len(in))
	for i := range in {
		codes[i] = ext.Extract(in[i].Content)
	}
	return s.IngestTransactions(ctx, tenant, in, codes)
}

// ExtractorStore is what Extractors needs of storage.
type ExtractorStore interface {
	IngestStore
	// CompanyAtEpoch: see CompanyStore.
	CompanyAtEpoch(ctx context.Context, id int64) (*Company, int64, error)
}

// Extractors keeps the extractor of each tenant that pushed, with the
// authentication epoch read in the same snapshot as the company it was
// built from, so that a push does not read its company again while nothing
// it extracts by has changed. Every change of a company or of its formats
// moves the epoch (TokenStore.AuthEpoch), and every authenticated request
// reads the epoch after it came (Caller.Epoch): when that read finds the
// kept extractor's epoch, no change came between the extractor's snapshot
// and the request, and the extractor is the one a read of the company now
// would build (docs/design.md, "Extractors kept under the authentication
// epoch"). The zero value is ready; it is safe for concurrent use.
type Extractors struct {
	mu   sync.Mutex
	kept map[TenantID]keptExtractor
}

type keptExtractor struct {
	epoch int64
	ext   *Extractor
}

// maxKeptExtractors bounds Extractors: about 2 KB each. When full, it is
// emptied, as the epoch's moves empty it in effect.
const maxKeptExtractors = 4096

// Ingest is Ingest for the caller's tenant, with the extractor kept under
// the caller's epoch when it has one, or else built from a read of the
// company, and then kept under the epoch of that read.
func (x *Extractors) Ingest(ctx context.Context, s ExtractorStore, c *Caller, now time.Time, in []TransactionInput) ([]IngestResult, error) {
	return ingest(ctx, s, c.Tenant, now, in, func() (*Extractor, error) { return x.get(ctx, s, c) })
}

func (x *Extractors) get(ctx context.Context, s ExtractorStore, c *Caller) (*Extractor, error) {
	if epoch, ok := c.Epoch(); ok {
		x.mu.Lock()
		k, found := x.kept[c.Tenant]
		x.mu.Unlock()
		if found && k.epoch == epoch {
			return k.ext, nil
		}
	}
	co, epoch, err := s.CompanyAtEpoch(ctx, c.Tenant.ID())
	if err != nil {
		return nil, err
	}
	ext := CompanyExtractor(&co.Config)
	x.mu.Lock()
	if x.kept == nil || len(x.kept) >= maxKeptExtractors {
		x.kept = make(map[TenantID]keptExtractor)
	}
	x.kept[c.Tenant] = keptExtractor{epoch, ext}
	x.mu.Unlock()
	return ext, nil
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
