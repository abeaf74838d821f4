package dashboard

import (
	_ "embed"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"recon"
	"recon/linking"
	"recon/web"
)

// The bank accounts screen: each account with its balance and newest
// transaction, its hub link, the balance discontinuities, a statement
// upload and (with the hub) a "link a bank" button.

// statementBodyLimit bounds the upload form's body: the file's limit
// (recon.MaxStatementBytes, the API's) and room for the other fields and the
// multipart framing.
const statementBodyLimit = recon.MaxStatementBytes + 64<<10

//go:embed static/upload.js
var uploadJS []byte

// serveUploadJS serves the upload form's progress script: progressive
// enhancement (the form works without it), allowed by the pages' CSP
// (script-src 'self', connect-src 'self').
func serveUploadJS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(uploadJS)
}

// errStatementTooLarge is the refusal of a file over the limit, in the
// API's words, naming the form's field.
func errStatementTooLarge() error {
	return recon.FieldError("file", "the statement file is larger than the limit of %d bytes (%d MiB)", recon.MaxStatementBytes, recon.MaxStatementBytes>>20)
}

// refuseLargeStatement answers an upload whose body is announced larger
// than the form may be before anything is read (nothing is written either
// way; a body without a length is cut at the limit by the Mux).
func (h *Handler) refuseLargeStatement(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > statementBodyLimit {
			setSecurityHeaders(w)
			h.writeErrorPage(w, r, nil, http.StatusBadRequest, recon.ErrorMessage(errStatementTooLarge()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// StatementResult is what a statement upload did (ImportStatement). When
// the file fails on a row, nothing is stored and RowErrors lists every bad
// row ("row N: field: problem"), BadRows counts them.
type StatementResult struct {
	Format               string
	Imported, Duplicates int
	RowErrors            []string
	BadRows              int
	// RowProblems are RowErrors as errors, which the page writes in its
	// language (lang.ErrorText).
	RowProblems []error
	// OrdersPaid and ExceptionsOpened count what the new rows did; From
	// and To are their first and last days (zero when none); Account is
	// the bank account (set by the handler), for the result's links.
	OrdersPaid, ExceptionsOpened int
	From, To                     time.Time
	Account                      int64
	// ImportID is the statement's import record, whose proof the result
	// links to (docs/statements.md, Balance proof); 0 when none.
	ImportID int64
}

// HubIdentity is a sandbox bank identity (linking.SandboxIdentity).
type HubIdentity struct {
	Bank, AccountType, Holder, Account, NationalID, Phone, OTP, Fails string
}

// hubIdentities are the sandbox banks' fixed test identities.
func hubIdentities() []HubIdentity {
	var out []HubIdentity
	for _, i := range linking.SandboxIdentities() {
		out = append(out, HubIdentity{Bank: i.BankCode, AccountType: i.AccountType, Holder: i.HolderName, Account: i.AccountNumber,
			NationalID: i.NationalID, Phone: i.Phone, OTP: i.OTP, Fails: i.Fail})
	}
	return out
}

type accountRow struct {
	A        *recon.BankAccount
	Last     *recon.Transaction
	Link     *recon.LinkedAccount
	Customer string
}

type gapRow struct {
	D       *recon.BalanceDiscontinuity
	Account string
	At      string
}

type bankView struct {
	Accounts  []accountRow
	Gaps      []gapRow
	GapPager  pager
	Customers []*recon.HubCustomer
	HasHub    bool
	// MayHub: the caller may link banks and make hub companies (hubcompanies.go).
	MayHub    bool
	Result    *StatementResult
	UploadErr template.HTML // in the page's language (lang.ErrorText)
	// Preview is the previewed file (statements.go) and PreviewToken the
	// confirmation's token ("" when the file cannot be imported).
	Preview      *StatementPreview
	PreviewToken string
	// The column mappings: the saved ones, the form sent back with its
	// refusal, the account of the last change, and what was done.
	Mappings       []mappingRow
	MappingForm    *recon.StatementMapping
	MappingAccount int64
	MappingErr     string
	MappingDone    string
	Busy           bool // the upload found no import slot free (503)
	LinkErr        string
	Account        int64 // the account of the upload just made
}

// MaxBytes is the largest statement file (recon.MaxStatementBytes).
func (*bankView) MaxBytes() int64 { return recon.MaxStatementBytes }

// MaxMiB is MaxBytes in MiB, as the form shows it.
func (*bankView) MaxMiB() int64 { return recon.MaxStatementBytes >> 20 }

// LastAtOf is a transaction's date as the page writes it.
func (v *bankView) LastAtOf(t *recon.Transaction) string { return t.TransactionDate.Format(timeLayout) }

const gapPerPage = 20

// bankAccounts serves GET /dashboard/bank-accounts.
func (h *Handler) bankAccounts(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.renderBank(w, r, q, http.StatusOK, &bankView{})
}

func (h *Handler) renderBank(w http.ResponseWriter, r *http.Request, q *request, status int, v *bankView) error {
	ctx, tenant := r.Context(), q.caller.Tenant
	accounts, err := h.Store.BankAccounts(ctx, tenant)
	if err != nil {
		return err
	}
	links := map[int64]*recon.LinkedAccount{}
	v.HasHub = h.Hub != nil
	if v.HasHub {
		linked, _, err := h.Store.HubBankAccounts(ctx, tenant, recon.HubAccountFilter{Page: 1, PerPage: 100})
		if err != nil {
			return err
		}
		for _, l := range linked {
			links[l.ID] = l
		}
		if v.MayHub = q.caller.May(recon.ActionHub); v.MayHub {
			if v.Customers, _, err = h.Store.HubCustomers(ctx, tenant, recon.HubCustomerFilter{Page: 1, PerPage: 100}); err != nil {
				return err
			}
		}
	}
	number := map[int64]string{}
	for _, a := range accounts {
		row := accountRow{A: a, Link: links[a.ID]}
		number[a.ID] = a.BankName + " " + a.AccountNumber
		last, _, err := h.Store.Transactions(ctx, tenant, recon.TransactionFilter{BankAccountID: a.ID, Page: 1, Limit: 1})
		if err != nil {
			return err
		}
		if len(last) == 1 {
			row.Last = last[0]
		}
		if row.Link != nil {
			row.Customer = row.Link.CustomerXID
		}
		v.Accounts = append(v.Accounts, row)
	}
	gaps, err := h.Store.BalanceDiscontinuities(ctx, tenant)
	if err != nil {
		return err
	}
	page, _ := pageParam(r.URL.Query(), "gaps_page")
	from := min((page-1)*gapPerPage, len(gaps))
	for _, d := range gaps[from:min(from+gapPerPage, len(gaps))] {
		v.Gaps = append(v.Gaps, gapRow{D: d, Account: number[d.BankAccountID], At: h.timeText(d.CreatedAt)})
	}
	v.GapPager = newPager("/dashboard/bank-accounts", nil, "gaps_page", page, gapPerPage, int64(len(gaps)))
	if v.Mappings, err = h.mappingRows(ctx, tenant, v.Accounts); err != nil {
		return err
	}
	h.render(w, r, status, "bankaccounts", h.data(r, q, "bank_accounts", v))
	return nil
}

// uploadStatement serves POST /dashboard/bank-accounts/statement (a
// multipart form): the file goes through the API's import, all rows or
// none; a refused file shows every bad row.
func (h *Handler) uploadStatement(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.ImportStatement == nil {
		return errNotFound()
	}
	id, err := strconv.ParseInt(r.PostForm.Get("account"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	if _, err := h.Store.BankAccount(r.Context(), q.caller.Tenant, id); err != nil {
		return err // another tenant's account: 404
	}
	v := &bankView{Account: id}
	var res *StatementResult
	if r.MultipartForm == nil || len(r.MultipartForm.File["file"]) == 0 {
		err = recon.FieldError("file", "choose a statement file to upload")
	} else {
		fh := r.MultipartForm.File["file"][0]
		if fh.Size > recon.MaxStatementBytes {
			v.UploadErr = q.lang.ErrorText(errStatementTooLarge())
			return h.renderBank(w, r, q, http.StatusBadRequest, v)
		}
		if r.PostForm.Get("step") == "preview" && h.PreviewStatement != nil {
			return h.previewStatement(w, r, q, v, fh)
		}
		f, ferr := fh.Open()
		if ferr != nil {
			return ferr
		}
		defer f.Close()
		// The file is in (the form is read before the handler): the import
		// takes one of the server's slots, the API's too (docs/statements.md,
		// Limits), counted against the company (live and test together).
		release, serr := h.Uploads.Acquire(q.session.Company)
		if serr != nil {
			w.Header().Set("Retry-After", strconv.Itoa(web.SlotsRetryAfter))
			v.Busy = true
			return h.renderBank(w, r, q, http.StatusServiceUnavailable, v)
		}
		defer release()
		res, err = h.ImportStatement(r.Context(), q.caller.Tenant, id, fh.Filename, f)
	}
	return h.statementDone(w, r, q, v, res, err)
}

// linkBank serves POST /dashboard/bank-accounts/link: a link token for the
// chosen hub company (as POST /v1/link-token/create), then the browser goes
// to the hosted link page.
func (h *Handler) linkBank(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Hub == nil {
		return errNotFound()
	}
	cu, err := h.Store.HubCustomer(r.Context(), q.caller.Tenant, r.PostForm.Get("customer"))
	if err != nil {
		return err
	}
	t := &recon.LinkToken{Tenant: q.caller.Tenant, CustomerID: cu.ID, CustomerXID: cu.XID, Purpose: recon.LinkPurposeLink,
		Language: string(q.lang), Sandbox: !q.caller.Livemode() || h.Sandbox}
	u, err := h.Hub.CreateLinkToken(r.Context(), t)
	if recon.ErrorCode(err) == recon.EUNAVAILABLE {
		return h.renderBank(w, r, q, http.StatusServiceUnavailable, &bankView{LinkErr: "no_connector"})
	} else if err != nil {
		return err
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
	return nil
}
