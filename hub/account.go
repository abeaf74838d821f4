package hub

import (
	"net/http"
	"strconv"
	"time"

	"recon"
	"recon/web"
)

// bankAccountJSON is a linked account as the hub shows it.
type bankAccountJSON struct {
	XID               string  `json:"xid"`
	CompanyXID        string  `json:"company_xid"`
	BrandName         string  `json:"brand_name"`
	AccountHolderName string  `json:"account_holder_name"`
	AccountNumber     string  `json:"account_number"`
	Accumulated       string  `json:"accumulated"`
	AccountType       string  `json:"account_type"`
	BankAPIConnected  string  `json:"bank_api_connected"`
	Active            string  `json:"active"`
	LinkState         string  `json:"link_state"`
	LastTransaction   *string `json:"last_transaction"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

func (h *Handler) bankAccountJSON(a *recon.LinkedAccount) bankAccountJSON {
	out := bankAccountJSON{XID: a.XID, CompanyXID: a.CustomerXID, BrandName: a.BankName, AccountHolderName: a.HolderName,
		AccountNumber: a.AccountNumber, Accumulated: strconv.FormatInt(a.Balance, 10), AccountType: a.AccountType,
		BankAPIConnected: "0", Active: "0", LinkState: a.LinkState, CreatedAt: h.localTime(a.CreatedAt), UpdatedAt: h.localTime(a.LinkedAt)}
	if a.LinkState == recon.AccountLinked {
		out.BankAPIConnected, out.Active = "1", "1"
	}
	if !a.LastTransaction.IsZero() {
		s := a.LastTransaction.Format(recon.DateTimeLayout)
		out.LastTransaction = &s
	}
	return out
}

// listBankAccounts serves GET /v1/bank-account: the linked accounts,
// newest first; company_xid filters by company.
func (h *Handler) listBankAccounts(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if err := checkParams(r, "page", "per_page", "limit", "company_xid"); err != nil {
		return err
	}
	page, per, err := pageParams(r)
	if err != nil {
		return err
	}
	f := recon.HubAccountFilter{Page: page, PerPage: per, CustomerXID: r.URL.Query().Get("company_xid")}
	if f.CustomerXID != "" && !recon.ValidXID(f.CustomerXID) {
		return recon.FieldError("company_xid", "company_xid must be a company's xid (a UUID)")
	}
	list, total, err := h.Store.HubBankAccounts(r.Context(), c.Tenant, f)
	if err != nil {
		return err
	}
	out := make([]bankAccountJSON, len(list))
	for i, a := range list {
		out[i] = h.bankAccountJSON(a)
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data []bankAccountJSON `json:"data"`
		Meta pageMeta          `json:"meta"`
	}{out, newPageMeta(page, per, total)})
	return nil
}

// getBankAccount serves GET /v1/bank-account/{xid}.
func (h *Handler) getBankAccount(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	xid := r.PathValue("xid")
	if !recon.ValidXID(xid) {
		return recon.Errorf(recon.ENOTFOUND, "bank account %s not found", xid)
	}
	a, err := h.Store.HubBankAccount(r.Context(), c.Tenant, xid)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Data: h.bankAccountJSON(a)})
	return nil
}

// transactionJSON is a transaction of a linked account.
type transactionJSON struct {
	ID                 string  `json:"id"`
	BankAccountXID     string  `json:"bank_account_xid"`
	CompanyXID         string  `json:"company_xid"`
	BankBrandName      string  `json:"bank_brand_name"`
	AccountNumber      string  `json:"account_number"`
	TransactionDate    string  `json:"transaction_date"`
	AmountIn           int64   `json:"amount_in"`
	AmountOut          int64   `json:"amount_out"`
	Accumulated        int64   `json:"accumulated"`
	TransactionContent string  `json:"transaction_content"`
	ReferenceNumber    string  `json:"reference_number"`
	Code               *string `json:"code"`
	SubAccount         *string `json:"sub_account"`
	TransferType       string  `json:"transfer_type"`
}

func transactionJSONOf(t *recon.HubTransaction) transactionJSON {
	out := transactionJSON{ID: strconv.FormatInt(t.ID, 10), BankAccountXID: t.BankAccountXID, CompanyXID: t.CustomerXID,
		BankBrandName: t.BankName, AccountNumber: t.AccountNumber, TransactionDate: t.TransactionDate.Format(recon.DateTimeLayout),
		AmountIn: t.AmountIn, AmountOut: t.AmountOut, Accumulated: t.Accumulated, TransactionContent: t.Content,
		ReferenceNumber: t.ReferenceNumber, Code: strOrNil(t.Code), SubAccount: strOrNil(t.SubAccount), TransferType: "credit"}
	if t.AmountOut > 0 {
		out.TransferType = "debit"
	}
	return out
}

// listTransactions serves GET /v1/transaction: the transactions of linked
// accounts, newest first; filters company_xid, bank_account_xid, from_date
// and to_date (inclusive days).
func (h *Handler) listTransactions(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if err := checkParams(r, "page", "per_page", "limit", "company_xid", "bank_account_xid", "from_date", "to_date"); err != nil {
		return err
	}
	page, per, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := recon.HubTransactionFilter{Page: page, PerPage: per, CustomerXID: q.Get("company_xid"), AccountXID: q.Get("bank_account_xid")}
	for _, x := range []struct{ name, v string }{{"company_xid", f.CustomerXID}, {"bank_account_xid", f.AccountXID}} {
		if x.v != "" && !recon.ValidXID(x.v) {
			return recon.FieldError(x.name, "%s must be a UUID", x.name)
		}
	}
	for _, d := range []struct {
		name string
		dst  *time.Time
	}{{"from_date", &f.From}, {"to_date", &f.To}} {
		if v := q.Get(d.name); v != "" {
			if *d.dst, err = time.Parse(recon.DateLayout, v); err != nil {
				return recon.FieldError(d.name, "%s must be a date in the form YYYY-MM-DD", d.name)
			}
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.From.After(f.To) {
		return recon.FieldError("from_date", "from_date must not be after to_date")
	}
	list, total, err := h.Store.HubTransactions(r.Context(), c.Tenant, f)
	if err != nil {
		return err
	}
	out := make([]transactionJSON, len(list))
	for i, t := range list {
		out[i] = transactionJSONOf(t)
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data []transactionJSON `json:"data"`
		Meta pageMeta          `json:"meta"`
	}{out, newPageMeta(page, per, total)})
	return nil
}

// getTransaction serves GET /v1/transaction/{id}.
func (h *Handler) getTransaction(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return recon.Errorf(recon.ENOTFOUND, "transaction %s not found", r.PathValue("id"))
	}
	t, err := h.Store.HubTransaction(r.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Data: transactionJSONOf(t)})
	return nil
}

// merchantConfigJSON is the page's branding.
type merchantConfigJSON struct {
	DisplayName    string `json:"display_name"`
	PrimaryColor   string `json:"primary_color"`
	SecondaryColor string `json:"secondary_color"`
	LogoURL        string `json:"logo_url"`
}

func toMerchantConfig(b *recon.HubBranding) merchantConfigJSON {
	return merchantConfigJSON{b.DisplayName, b.PrimaryColor, b.SecondaryColor, b.LogoURL}
}

// getMerchantConfig serves GET /v1/merchant-config.
func (h *Handler) getMerchantConfig(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	b, err := h.Store.HubBranding(r.Context(), c.Tenant)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Data: toMerchantConfig(b)})
	return nil
}

// postMerchantConfig serves POST /v1/merchant-config: a partial update of
// display_name (≤ 100), primary_color and secondary_color (#rrggbb) and
// logo_url (https), shown on the hosted page.
func (h *Handler) postMerchantConfig(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var in struct {
		DisplayName    *string `json:"display_name"`
		PrimaryColor   *string `json:"primary_color"`
		SecondaryColor *string `json:"secondary_color"`
		LogoURL        *string `json:"logo_url"`
	}
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	b, err := h.Store.HubBranding(r.Context(), c.Tenant)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		in  *string
		dst *string
	}{{in.DisplayName, &b.DisplayName}, {in.PrimaryColor, &b.PrimaryColor}, {in.SecondaryColor, &b.SecondaryColor}, {in.LogoURL, &b.LogoURL}} {
		if f.in != nil {
			*f.dst = *f.in
		}
	}
	if err := h.Store.SetHubBranding(r.Context(), c.Tenant, b); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Code: http.StatusOK, Message: "Merchant config saved", Data: toMerchantConfig(b)})
	return nil
}
