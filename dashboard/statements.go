package dashboard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"recon"
	"recon/web"
)

// The statement upload's preview and confirmation, and the bank accounts'
// column mappings (docs/dashboard.md, Settings, bank accounts and sandbox). A preview reads the
// whole file and shows its first rows as they would be stored; the file is
// held in the server's temporary directory (previewTTL) under a random
// token that the confirmation posts back: nothing is stored before it.

// StatementPreview is what a preview read (statement.PreviewFile).
type StatementPreview struct {
	Format    string
	Rows      []PreviewRow
	Count     int // good rows in the whole file
	BadRows   int
	RowErrors []string
	Mapped    bool // the bank account's saved mapping was used
}

// PreviewRow is a row as Recon will store it.
type PreviewRow struct {
	Row                int
	Date               time.Time
	In, Out            int64
	Content, Reference string
	Code               string
	Balance            *int64
	When               string // Date as the page writes it (business zone)
}

// previewTTL is how long a previewed file waits for its confirmation;
// maxHeld bounds the files held by the server.
const (
	previewTTL = 30 * time.Minute
	maxHeld    = 64
)

// heldUpload is a previewed file waiting for its confirmation.
type heldUpload struct {
	tenant  recon.TenantID
	account int64
	name    string
	path    string
	expires time.Time
}

// heldUploads are the previewed files, by token.
type heldUploads struct {
	mu sync.Mutex
	m  map[string]*heldUpload
}

// put holds a file and returns its token; the oldest is dropped (and its
// file removed) past maxHeld, and the expired ones.
func (hs *heldUploads) put(u *heldUpload) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[string]*heldUpload{}
	}
	now := time.Now()
	var oldest string
	for k, v := range hs.m {
		if now.After(v.expires) {
			os.Remove(v.path)
			delete(hs.m, k)
			continue
		}
		if oldest == "" || v.expires.Before(hs.m[oldest].expires) {
			oldest = k
		}
	}
	if len(hs.m) >= maxHeld && oldest != "" {
		os.Remove(hs.m[oldest].path)
		delete(hs.m, oldest)
	}
	hs.m[token] = u
	return token
}

// take removes and returns the held file of token when it is the tenant's
// and the account's and has not expired.
func (hs *heldUploads) take(token string, tenant recon.TenantID, account int64) *heldUpload {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	u, ok := hs.m[token]
	if !ok || u.tenant != tenant || u.account != account {
		return nil
	}
	delete(hs.m, token)
	if time.Now().After(u.expires) {
		os.Remove(u.path)
		return nil
	}
	return u
}

// spoolUpload copies the form's file into a temporary file.
func (h *Handler) spoolUpload(fh *multipart.FileHeader) (*os.File, error) {
	src, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	f, err := os.CreateTemp(h.TempDir, "recon-preview-*")
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// previewStatement answers the upload form's "Preview": the file read
// whole, its first rows shown, held for the confirmation.
func (h *Handler) previewStatement(w http.ResponseWriter, r *http.Request, q *request, v *bankView, fh *multipart.FileHeader) error {
	f, err := h.spoolUpload(fh)
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		f.Close()
		if !keep {
			os.Remove(f.Name())
		}
	}()
	release, serr := h.Uploads.Acquire(q.session.Company)
	if serr != nil {
		w.Header().Set("Retry-After", strconv.Itoa(web.SlotsRetryAfter))
		v.Busy = true
		return h.renderBank(w, r, q, http.StatusServiceUnavailable, v)
	}
	pv, err := h.PreviewStatement(r.Context(), q.caller.Tenant, v.Account, fh.Filename, f)
	release()
	if err != nil {
		if recon.ErrorCode(err) != recon.EINVALID {
			return err
		}
		v.UploadErr = q.lang.ErrorText(err)
		return h.renderBank(w, r, q, http.StatusBadRequest, v)
	}
	for i, e := range pv.RowErrors {
		pv.RowErrors[i] = stmtError(q.lang, e)
	}
	for i := range pv.Rows {
		pv.Rows[i].When = h.timeText(pv.Rows[i].Date)
	}
	v.Preview = pv
	if pv.BadRows == 0 && pv.Count > 0 {
		keep = true
		v.PreviewToken = h.held.put(&heldUpload{tenant: q.caller.Tenant, account: v.Account, name: fh.Filename, path: f.Name(), expires: time.Now().Add(previewTTL)})
	}
	return h.renderBank(w, r, q, http.StatusOK, v)
}

// confirmStatement serves POST /dashboard/bank-accounts/statement/confirm:
// the previewed file imported, all rows or none.
func (h *Handler) confirmStatement(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.ImportStatement == nil || h.PreviewStatement == nil {
		return errNotFound()
	}
	id, err := strconv.ParseInt(r.PostForm.Get("account"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	if _, err := h.Store.BankAccount(r.Context(), q.caller.Tenant, id); err != nil {
		return err
	}
	v := &bankView{Account: id}
	u := h.held.take(r.PostForm.Get("token"), q.caller.Tenant, id)
	if u == nil {
		v.UploadErr = template.HTML(template.HTMLEscapeString(q.lang.T("preview_expired")))
		return h.renderBank(w, r, q, http.StatusBadRequest, v)
	}
	defer os.Remove(u.path)
	f, err := os.Open(u.path)
	if err != nil {
		return err
	}
	defer f.Close()
	release, serr := h.Uploads.Acquire(q.session.Company)
	if serr != nil {
		w.Header().Set("Retry-After", strconv.Itoa(web.SlotsRetryAfter))
		v.Busy = true
		return h.renderBank(w, r, q, http.StatusServiceUnavailable, v)
	}
	defer release()
	res, err := h.ImportStatement(r.Context(), q.caller.Tenant, id, u.name, f)
	return h.statementDone(w, r, q, v, res, err)
}

// statementDone shows an import's result, or its refusal in the page's
// language.
func (h *Handler) statementDone(w http.ResponseWriter, r *http.Request, q *request, v *bankView, res *StatementResult, err error) error {
	if res != nil {
		res.Account = v.Account
		for i, e := range res.RowErrors {
			res.RowErrors[i] = stmtError(q.lang, e)
		}
	}
	v.Result = res
	status := http.StatusOK
	if err != nil {
		if recon.ErrorCode(err) != recon.EINVALID {
			return err
		}
		v.UploadErr, status = q.lang.ErrorText(err), http.StatusBadRequest
	}
	return h.renderBank(w, r, q, status, v)
}

// saveMapping serves POST /dashboard/bank-accounts/mapping: a bank
// account's column mapping saved (statement.ValidateMapping), or removed
// with action=clear.
func (h *Handler) saveMapping(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.SaveStatementMapping == nil {
		return errNotFound()
	}
	id, err := strconv.ParseInt(r.PostForm.Get("account"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	if _, err := h.Store.BankAccount(r.Context(), q.caller.Tenant, id); err != nil {
		return err
	}
	v := &bankView{MappingAccount: id}
	var m *recon.StatementMapping
	if r.PostForm.Get("action") != "clear" {
		f := r.PostForm.Get
		m = &recon.StatementMapping{Date: f("date"), AmountIn: f("amount_in"), AmountOut: f("amount_out"), Amount: f("amount"),
			Content: f("content"), Reference: f("reference"), Balance: f("balance"), SubAccount: f("sub_account")}
		v.MappingForm = m
	}
	if err := h.SaveStatementMapping(r.Context(), q.caller.Tenant, id, m); err != nil {
		if recon.ErrorCode(err) != recon.EINVALID {
			return err
		}
		v.MappingErr = stmtError(q.lang, recon.ErrorMessage(err))
		return h.renderBank(w, r, q, http.StatusBadRequest, v)
	}
	v.MappingForm = nil
	v.MappingDone = "mapping_saved"
	if m == nil {
		v.MappingDone = "mapping_cleared"
	}
	return h.renderBank(w, r, q, http.StatusOK, v)
}

// resultLinks are the lists an import's result links to: its bank
// account's transactions and exceptions on the days of the new rows, and
// the paid orders.
func (res *StatementResult) TransactionsURL() string {
	return "/dashboard/transactions?" + res.listQuery().Encode()
}

// ExceptionsURL lists the open exceptions of the new rows' days.
func (res *StatementResult) ExceptionsURL() string {
	return "/dashboard/exceptions?" + res.listQuery().Encode()
}

// OrdersURL lists the paid orders.
func (res *StatementResult) OrdersURL() string {
	return "/dashboard/orders?order_status=" + url.QueryEscape(recon.OrderCaptured)
}

func (res *StatementResult) listQuery() url.Values {
	q := url.Values{"bank_account_id": {strconv.FormatInt(res.Account, 10)}}
	if !res.From.IsZero() {
		q.Set("from_date", res.From.Format(time.DateOnly))
		q.Set("to_date", res.To.Format(time.DateOnly))
	}
	return q
}

// mappingRows are the saved mappings of the bank accounts, for the page.
func (h *Handler) mappingRows(ctx context.Context, tenant recon.TenantID, accounts []accountRow) ([]mappingRow, error) {
	if h.StatementMapping == nil {
		return nil, nil
	}
	var out []mappingRow
	for _, a := range accounts {
		m, err := h.StatementMapping(ctx, tenant, a.A.ID)
		if err != nil {
			return nil, err
		}
		if m != nil {
			out = append(out, mappingRow{Account: a.A, M: m})
		}
	}
	return out, nil
}

type mappingRow struct {
	Account *recon.BankAccount
	M       *recon.StatementMapping
}
