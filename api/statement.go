package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"time"

	"recon"
	"recon/statement"
	"recon/web"
)

// MaxStatementBytes is the largest statement file the upload accepts (the
// dashboard's too).
const MaxStatementBytes = recon.MaxStatementBytes

// uploadStatement imports a statement file into one of the company's bank
// accounts: POST /api/v1/bank-accounts/{id}/statements with the file as the
// raw body, or as the "file" part of a multipart/form-data body. Query:
// format=auto|csv|xlsx|camt053|mt940, skip_invalid=true|false,
// preview=true|false (docs/statements.md, Preview): a preview reads the
// whole file and answers its first rows as they would be stored, storing
// nothing.
//
// The file is first spooled to a temporary file (so that a slow client
// never holds the import's database transaction open, nor an import slot),
// then parsed, checked and stored in one streaming pass and one database
// transaction: all rows or none. The imports take the server's upload
// slots (Handler.Uploads, shared with the dashboard); an upload finding
// none free, or its company's share taken, gets 503 with Retry-After.
func (h *Handler) uploadStatement(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return recon.FieldError("id", "the bank account id in the path must be a positive integer")
	}
	q := r.URL.Query()
	for name := range q {
		if name != "format" && name != "skip_invalid" && name != "preview" {
			return recon.FieldError(name, "unknown query parameter %q (known: format, skip_invalid, preview)", name)
		}
	}
	preview := false
	if v := q.Get("preview"); v != "" {
		if preview, err = strconv.ParseBool(v); err != nil {
			return recon.FieldError("preview", "preview must be true or false")
		}
	}
	skip := false
	if v := q.Get("skip_invalid"); v != "" {
		if skip, err = strconv.ParseBool(v); err != nil {
			return recon.FieldError("skip_invalid", "skip_invalid must be true or false")
		}
	}
	body := io.Reader(r.Body)
	name := "upload"
	if ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		part, err := multipartFile(r, params["boundary"])
		if err != nil {
			return err
		}
		defer part.Close()
		body, name = part, part.FileName()
	}
	spool, err := os.CreateTemp(h.TempDir, "recon-statement-*")
	if err != nil {
		return fmt.Errorf("spooling the statement: %w", err)
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()
	_, err = io.Copy(spool, body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return recon.Errorf(recon.EINVALID, "the statement file is larger than the limit of %d bytes", tooLarge.Limit)
	case err != nil:
		return recon.Errorf(recon.EINVALID, "the statement file could not be read: %v", err)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spooling the statement: %w", err)
	}
	// The slots bound the imports (database work), taken once the file is
	// in: a client sending slowly holds no slot.
	company, err := h.companyOf(r, c)
	if err != nil {
		return err
	}
	release, err := h.Uploads.Acquire(company)
	if err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(web.SlotsRetryAfter))
		return err
	}
	defer release()
	f := statement.Format(q.Get("format"))
	opts := statement.Options{Location: h.location(), Clock: h.Clock, TempDir: h.TempDir}
	type skippedRow struct {
		Row     int    `json:"row"`
		Message string `json:"message"`
	}
	rowsOf := func(errs []statement.RowError) []skippedRow {
		out := make([]skippedRow, len(errs))
		for i, s := range errs {
			out[i] = skippedRow{s.Row, s.Error()}
		}
		return out
	}
	if preview {
		pv, err := statement.PreviewFile(r.Context(), h.Store, c.Tenant, id, name, spool, f, opts, statement.PreviewRows)
		if err != nil {
			return err
		}
		rows := make([]map[string]any, len(pv.Lines))
		for i, l := range pv.Lines {
			rows[i] = map[string]any{
				"row": l.Row, "transaction_date": l.Tx.TransactionDate.Format(recon.DateTimeLayout), "amount_in": l.Tx.AmountIn, "amount_out": l.Tx.AmountOut,
				"transaction_content": l.Tx.Content, "reference_number": l.Tx.ReferenceNumber, "accumulated": l.Tx.Accumulated,
				"sub_account": l.Tx.SubAccount, "code": pv.Codes[i],
			}
		}
		web.WriteJSON(w, http.StatusOK, ok(map[string]any{
			"format": pv.Format, "preview": true, "rows": rows, "row_count": pv.Rows, "invalid": rowsOf(pv.Bad), "invalid_count": pv.BadCount, "mapped": pv.Mapped,
		}))
		return nil
	}
	rep, err := statement.ImportFile(r.Context(), h.Store, c.Tenant, id, name, spool, f, opts, skip)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]any{
		"format": rep.Format, "imported": rep.Imported, "duplicates": rep.Duplicates, "skipped": rowsOf(rep.Skipped), "skipped_count": rep.SkippedCount,
		"orders_paid": rep.OrdersPaid, "exceptions_opened": rep.ExceptionsOpened, "import_id": rep.ImportID, "repeated": rep.Repeated,
	}))
	return nil
}

// bankAccountID reads the {id} of a bank account route.
func bankAccountID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, recon.FieldError("id", "the bank account id in the path must be a positive integer")
	}
	return id, nil
}

// getStatementMapping serves GET /api/v1/bank-accounts/{id}/statement-mapping:
// the saved column mapping, or null (docs/statements.md, Column mappings).
func (h *Handler) getStatementMapping(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := bankAccountID(r)
	if err != nil {
		return err
	}
	m, err := h.Store.StatementMapping(r.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]any{"bank_account_id": id, "mapping": m}))
	return nil
}

// putStatementMapping serves PUT /api/v1/bank-accounts/{id}/statement-mapping:
// the body is the mapping (date, amount_in, amount_out, amount, content,
// reference, balance, sub_account: the header of each column), checked by
// statement.ValidateMapping, and replaces the saved one.
func (h *Handler) putStatementMapping(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := bankAccountID(r)
	if err != nil {
		return err
	}
	var m recon.StatementMapping
	if err := web.DecodeJSON(r, &m); err != nil {
		return err
	}
	if err := statement.ValidateMapping(&m); err != nil {
		return err
	}
	if err := h.Store.SetStatementMapping(r.Context(), c.Tenant, id, &m); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]any{"bank_account_id": id, "mapping": m}))
	return nil
}

// deleteStatementMapping serves DELETE /api/v1/bank-accounts/{id}/statement-mapping.
func (h *Handler) deleteStatementMapping(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := bankAccountID(r)
	if err != nil {
		return err
	}
	if err := h.Store.SetStatementMapping(r.Context(), c.Tenant, id, nil); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(map[string]any{"bank_account_id": id, "mapping": nil}))
	return nil
}

// companyOf is the live id of the caller's company: a test tenant's uploads
// count against its company's share of the slots.
func (h *Handler) companyOf(r *http.Request, c *recon.Caller) (int64, error) {
	if c.Livemode() {
		return c.Tenant.ID(), nil
	}
	co, err := h.Store.Company(r.Context(), c.Tenant.ID())
	if err != nil {
		return 0, err
	}
	if co.TestOf != 0 {
		return co.TestOf, nil
	}
	return co.ID, nil
}

// multipartFile returns the part named "file" of a multipart body.
func multipartFile(r *http.Request, boundary string) (interface {
	io.ReadCloser
	FileName() string
}, error) {
	if boundary == "" {
		return nil, recon.Errorf(recon.EINVALID, "multipart/form-data without a boundary")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, recon.Errorf(recon.EINVALID, "malformed multipart body: %v", err)
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, recon.FieldError("file", "the multipart body has no part named \"file\"")
		}
		if err != nil {
			return nil, recon.Errorf(recon.EINVALID, "malformed multipart body")
		}
		if p.FormName() == "file" {
			return p, nil
		}
		p.Close()
	}
}

// statementImportJSON is an imported statement, as the API and the CLI show
// it (docs/statements.md, Balance proof).
type statementImportJSON struct {
	ID             int64  `json:"id"`
	BankAccountID  int64  `json:"bank_account_id"`
	Format         string `json:"format"`
	FileName       string `json:"file_name"`
	FromDate       string `json:"from_date"`
	ToDate         string `json:"to_date"`
	OpeningBalance *int64 `json:"opening_balance"`
	ClosingBalance *int64 `json:"closing_balance"`
	Entries        int64  `json:"entries"`
	AmountIn       int64  `json:"amount_in"`
	AmountOut      int64  `json:"amount_out"`
	Imported       int64  `json:"imported"`
	Duplicates     int64  `json:"duplicates"`
	Skipped        int64  `json:"skipped"`
	CreatedAt      string `json:"created_at"`
	Livemode       bool   `json:"livemode"`
}

// StatementImportJSON renders an imported statement.
func StatementImportJSON(imp *recon.StatementImport, livemode bool) any {
	return statementImportJSON{
		ID: imp.ID, BankAccountID: imp.BankAccountID, Format: imp.Format, FileName: imp.FileName,
		FromDate: imp.From, ToDate: imp.To, OpeningBalance: imp.Opening, ClosingBalance: imp.Closing,
		Entries: imp.Entries, AmountIn: imp.In, AmountOut: imp.Out,
		Imported: imp.Imported, Duplicates: imp.Duplicates, Skipped: imp.Skipped,
		CreatedAt: imp.CreatedAt.Format(time.RFC3339), Livemode: livemode,
	}
}

// ProofCausesJSON renders the causes of a difference; rows false leaves
// their rows out (the reconciliation report's balances).
func ProofCausesJSON(causes []recon.ProofCause, rows bool) []map[string]any {
	out := make([]map[string]any, len(causes))
	for i, c := range causes {
		m := map[string]any{"kind": c.Kind, "count": c.Count, "effect": c.Effect, "unknown": c.Unknown}
		if rows {
			list := make([]map[string]any, len(c.Rows))
			for j, r := range c.Rows {
				var txID, row any
				var date any
				if r.TransactionID != 0 {
					txID, date = r.TransactionID, r.TransactionDate.Format(recon.DateTimeLayout)
				}
				if r.Row != 0 {
					row = r.Row
				}
				list[j] = map[string]any{
					"transaction_id": txID, "row": row, "transaction_date": date, "reference_number": nullable(r.ReferenceNumber),
					"amount_in": r.AmountIn, "amount_out": r.AmountOut, "statement_amount": r.Amount, "effect": r.Effect, "note": nullable(r.Note),
				}
			}
			m["rows"] = list
		}
		out[i] = m
	}
	return out
}

// StatementProofJSON renders a statement's proof, as the API and the CLI
// show it (docs/api.md, Statement imports).
func StatementProofJSON(p *recon.StatementProof, livemode bool) map[string]any {
	var disc any
	if d := p.Discontinuity; d != nil {
		disc = map[string]any{"previous_import_id": d.PreviousImportID, "previous_to_date": d.PreviousTo,
			"previous_closing_balance": d.PreviousClosing, "opening_balance": d.Opening, "gap": d.Gap}
	}
	return map[string]any{
		"import":     StatementImportJSON(p.Import, livemode),
		"recon":      map[string]any{"rows": p.ReconRows, "amount_in": p.ReconIn, "amount_out": p.ReconOut, "closing_balance": p.ReconClosing},
		"difference": p.Difference, "proved": p.Proved, "unexplained": p.Unexplained,
		"causes": ProofCausesJSON(p.Causes, true), "discontinuity": disc,
	}
}

// listStatementImports serves GET /api/v1/bank-accounts/{id}/statements:
// the account's imported statements, the latest period first, paginated
// as the transactions (page, limit).
func (h *Handler) listStatementImports(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := bankAccountID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if err := recon.CheckParams(q, []string{"page", "limit"}); err != nil {
		return err
	}
	f, err := recon.ParseTransactionFilter(q)
	if err != nil {
		return err
	}
	list, total, err := h.Store.StatementImports(r.Context(), c.Tenant, id, f.Page, f.Limit)
	if err != nil {
		return err
	}
	data := make([]any, len(list))
	for i, imp := range list {
		data[i] = StatementImportJSON(imp, c.Livemode())
	}
	writePage(w, data, total, f.Page, f.Limit)
	return nil
}

// showStatementProof serves GET /api/v1/bank-accounts/{id}/statements/{import}:
// the import and the proof of its balances against Recon's rows.
func (h *Handler) showStatementProof(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := bankAccountID(r)
	if err != nil {
		return err
	}
	imp, err := strconv.ParseInt(r.PathValue("import"), 10, 64)
	if err != nil || imp <= 0 {
		return recon.FieldError("import", "the statement import id in the path must be a positive integer")
	}
	if err := recon.CheckParams(r.URL.Query(), nil); err != nil {
		return err
	}
	p, err := h.Store.StatementProof(r.Context(), c.Tenant, id, imp)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(StatementProofJSON(p, c.Livemode())))
	return nil
}
