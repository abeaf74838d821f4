package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"recon"
	"recon/web"
)

type companyJSON struct {
	ID             int64             `json:"id"`
	FullName       string            `json:"full_name"`
	ShortName      string            `json:"short_name"`
	Role           string            `json:"role"`
	Status         string            `json:"status"`
	Subscription   string            `json:"subscription"`
	BeginDate      string            `json:"begin_date"`
	EndDate        string            `json:"end_date"`
	Configurations configurationJSON `json:"configurations"`
	Seller         sellerJSON        `json:"seller"`
	Invoicing      invoicingJSON     `json:"invoicing"`
	// DuplicateWindowDays: docs/statements.md, Possible duplicates.
	DuplicateWindowDays int  `json:"duplicate_window_days"`
	Livemode            bool `json:"livemode"`
}

// sellerJSON is the company as its invoices name it (docs/invoices.md, The
// seller): "" for what is not set yet.
type sellerJSON struct {
	LegalName   string `json:"legal_name"`
	TaxCode     string `json:"tax_code"`
	Address     string `json:"address"`
	Phone       string `json:"phone"`
	Email       string `json:"email"`
	BankName    string `json:"bank_name"`
	BankAccount string `json:"bank_account"`
}

type invoicingJSON struct {
	InvoiceTemplate string `json:"invoice_template"`
	InvoiceSeries   string `json:"invoice_series"`
	AutoInvoice     bool   `json:"auto_invoice"`
}

// CompanyJSON renders a company as GET /api/v1/company shows it, for the
// caller (its role and mode).
func CompanyJSON(co *recon.Company, c *recon.Caller) any {
	role := ""
	if c.User != nil {
		role = string(c.User.Role)
	}
	s := co.Config.Seller
	return companyJSON{
		ID: co.LiveID(), FullName: co.FullName, ShortName: co.ShortName, Role: role,
		Status: co.Status, Subscription: co.Subscription, BeginDate: co.BeginDate, EndDate: co.EndDate,
		Configurations:      toConfigurationJSON(&co.Config),
		Seller:              sellerJSON{s.LegalName, s.TaxCode, s.Address, s.Phone, s.Email, s.BankName, s.BankAcct},
		Invoicing:           invoicingJSON{co.Config.Invoicing.Template, co.Config.Invoicing.Series, co.Config.Invoicing.AutoInvoice},
		DuplicateWindowDays: co.Config.DuplicateWindowDays,
		Livemode:            c.Livemode(),
	}
}

type configurationJSON struct {
	BankSubAccount     bool         `json:"bank_sub_account"`
	Paycode            bool         `json:"paycode"`
	DataStorageTime    string       `json:"data_storage_time"`
	PaymentCodeFormats []formatJSON `json:"payment_code_formats"`
}

type formatJSON struct {
	Prefix        string `json:"prefix"`
	SuffixFrom    int    `json:"suffix_from"`
	SuffixTo      int    `json:"suffix_to"`
	CharacterType string `json:"character_type"`
	IsActive      bool   `json:"is_active"`
}

func toConfigurationJSON(c *recon.CompanyConfig) configurationJSON {
	out := configurationJSON{
		BankSubAccount:     c.BankSubAccount,
		Paycode:            c.Paycode,
		DataStorageTime:    strconv.Itoa(c.DataStorageDays),
		PaymentCodeFormats: make([]formatJSON, 0, len(c.PaymentCodeFormats)),
	}
	for _, f := range c.PaymentCodeFormats {
		out.PaymentCodeFormats = append(out.PaymentCodeFormats, formatJSON{
			Prefix: f.Prefix, SuffixFrom: f.SuffixFrom, SuffixTo: f.SuffixTo,
			CharacterType: string(f.CharacterType), IsActive: f.IsActive,
		})
	}
	return out
}

func (h *Handler) getCompany(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	co, err := h.Store.Company(r.Context(), c.Tenant.ID())
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(CompanyJSON(co, c)))
	return nil
}

// patchCompany: PATCH /api/v1/company {legal_name?, tax_code?, address?,
// phone?, email?, bank_name?, bank_account?, invoice_template?,
// invoice_series?, auto_invoice?} sets the seller's details and invoice
// settings given (docs/api.md, Company API; docs/invoices.md, The seller)
// and answers the company as GET shows it. A field that fails is a 400
// naming it; nothing is written then.
func (h *Handler) patchCompany(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if !c.Livemode() {
		return recon.Errorf(recon.EFORBIDDEN, "the seller's details are settings of the company, shared by its live and test modes: change them with a live credential")
	}
	var up recon.SellerUpdate
	if err := web.DecodeJSON(r, &up); err != nil {
		return err
	}
	if up.Empty() {
		return recon.Errorf(recon.EINVALID, "nothing to change: give at least one of legal_name, tax_code, address, phone, email, bank_name, bank_account, invoice_template, invoice_series, auto_invoice, duplicate_window_days")
	}
	var co *recon.Company
	err := h.audited(r, c, recon.AuditSellerUpdate, "", nil, func(ctx context.Context) (err error) {
		co, err = h.Store.UpdateCompany(ctx, c.Tenant.ID(), recon.AuditingCompany(ctx, func(co *recon.Company) error { return up.Apply(&co.Config) }))
		return err
	})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(CompanyJSON(co, c)))
	return nil
}

func (h *Handler) patchConfigurations(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if !c.Livemode() {
		return recon.Errorf(recon.EFORBIDDEN, "payment code formats are settings of the company, shared by its live and test modes: change them with a live credential")
	}
	var body struct {
		PaymentCodeFormats *[]json.RawMessage `json:"payment_code_formats"`
	}
	if err := web.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.PaymentCodeFormats == nil {
		return recon.FieldError("payment_code_formats", "payment_code_formats is required: an array of payment code formats ([] clears the list)")
	}
	formats, ruleErr, err := h.formatsFrom(*body.PaymentCodeFormats)
	if ruleErr != nil {
		return ruleFailure(w, ruleErr)
	}
	if err != nil {
		return err
	}
	before, err := h.Store.Company(r.Context(), c.Tenant.ID())
	if err != nil {
		return err
	}
	var cfg *recon.CompanyConfig
	change := []recon.AuditChange{{Field: "formats", Before: recon.AuditFormats(before.Config.PaymentCodeFormats), After: recon.AuditFormats(formats)}}
	err = h.audited(r, c, recon.AuditFormatsUpdate, "", change, func(ctx context.Context) (err error) {
		cfg, err = h.Store.ReplacePaymentCodeFormats(ctx, c.Tenant.ID(), formats)
		return err
	})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(ruleResult{Status: true, Data: toConfigurationJSON(cfg)}))
	return nil
}

// formatsFrom decodes and validates a list of formats as PATCH
// configurations stores them: a broken format rule comes back as ruleErr
// (the body of ruleFailure), other problems as err.
func (h *Handler) formatsFrom(raws []json.RawMessage) (formats []recon.PaymentCodeFormat, ruleErr *recon.Error, err error) {
	inputs := make([]recon.FormatInput, len(raws))
	for i, raw := range raws {
		in, err := decodeFormat(raw)
		if err != nil {
			return nil, recon.FormatRuleError(i+1, "%s", recon.ErrorMessage(err)), nil
		}
		inputs[i] = in
	}
	maxLen := h.MaxPrefixLen
	if maxLen == 0 {
		maxLen = recon.DefaultPrefixMaxLen
	}
	formats, err = recon.ValidateFormats(inputs, maxLen)
	if re, ok := err.(*recon.Error); ok && re.Fields == nil {
		return nil, re, nil
	}
	return formats, nil, err
}

type codeCandidateJSON struct {
	Position int    `json:"position"`
	Format   int    `json:"format"`
	Prefix   string `json:"prefix"`
	Text     string `json:"text"`
	Match    bool   `json:"match"`
	Reason   string `json:"reason"`
}

type tryMemoJSON struct {
	Memo       string              `json:"memo"`
	Normalized string              `json:"normalized"`
	Code       *string             `json:"code"`
	Summary    string              `json:"summary"`
	Candidates []codeCandidateJSON `json:"candidates"`
	Ignored    []string            `json:"ignored"`
}

// TryMemoJSON renders an explanation, as the API and the CLI show it.
func TryMemoJSON(memo string, e recon.CodeExplanation) tryMemoJSON {
	out := tryMemoJSON{Memo: memo, Normalized: e.Normalized, Summary: e.Summary(), Candidates: []codeCandidateJSON{}, Ignored: e.Ignored}
	if e.Code != "" {
		out.Code = &e.Code
	}
	if out.Ignored == nil {
		out.Ignored = []string{}
	}
	for _, c := range e.Candidates {
		out.Candidates = append(out.Candidates, codeCandidateJSON{Position: c.Position, Format: c.Format, Prefix: c.Prefix, Text: c.Text, Match: c.Match, Reason: c.Reason})
	}
	return out
}

// tryMemo: POST /api/v1/company/try-memo {"memo", "payment_code_formats"?}
// → which payment code the extractor finds in the memo and why, with the
// company's formats, or with the formats given (to try a change before
// saving it; they are checked as PATCH configurations checks them).
func (h *Handler) tryMemo(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var body struct {
		Memo               *string            `json:"memo"`
		PaymentCodeFormats *[]json.RawMessage `json:"payment_code_formats"`
	}
	if err := web.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Memo == nil {
		return recon.FieldError("memo", "memo is required: the transfer memo to try")
	}
	if len(*body.Memo) > 2000 {
		return recon.FieldError("memo", "memo must be at most 2000 bytes, as a transaction_content")
	}
	var formats []recon.PaymentCodeFormat
	if body.PaymentCodeFormats != nil {
		var ruleErr *recon.Error
		var err error
		if formats, ruleErr, err = h.formatsFrom(*body.PaymentCodeFormats); ruleErr != nil {
			return ruleFailure(w, ruleErr)
		} else if err != nil {
			return err
		}
	} else {
		co, err := h.Store.Company(r.Context(), c.Tenant.ID())
		if err != nil {
			return err
		}
		formats = co.Config.PaymentCodeFormats
	}
	web.WriteJSON(w, http.StatusOK, ok(TryMemoJSON(*body.Memo, recon.ExplainCode(*body.Memo, formats))))
	return nil
}

// ruleFailure writes the body docs/design.md, D2 documents for a failed format
// rule: HTTP 400 with {"status":"success","data":{"status":false,"message":...}}.
func ruleFailure(w http.ResponseWriter, e *recon.Error) error {
	web.WriteJSON(w, http.StatusBadRequest, ok(ruleResult{Status: false, Message: e.Message}))
	return nil
}

var formatFields = []string{"prefix", "suffix_from", "suffix_to", "character_type", "is_active"}

// decodeFormat turns one element of payment_code_formats into a FormatInput,
// noting missing fields and fields of the wrong JSON type for the rule check.
// It fails only when the element is not a JSON object.
func decodeFormat(raw json.RawMessage) (recon.FormatInput, error) {
	var in recon.FormatInput
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return in, recon.Errorf(recon.EINVALID, "each format must be a JSON object")
	}
	in.Bad = map[string]string{}
	var unknown []string
	for k := range m {
		if !slices.Contains(formatFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		in.Unknown = unknown[0]
	}
	str := func(name string, dst *string) {
		v, ok := m[name]
		if !ok {
			in.Bad[name] = "missing"
		} else if json.Unmarshal(v, dst) != nil || string(v) == "null" {
			in.Bad[name] = "type"
		}
	}
	integer := func(name string, dst *int64) {
		v, ok := m[name]
		if !ok {
			in.Bad[name] = "missing"
			return
		}
		// Only a JSON number with no fraction or exponent is an integer: "4",
		// 4.0, 4e0, true and null are all the wrong type.
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			in.Bad[name] = "type"
		}
		*dst = n
	}
	str("prefix", &in.Prefix)
	integer("suffix_from", &in.SuffixFrom)
	integer("suffix_to", &in.SuffixTo)
	str("character_type", &in.CharacterType)
	integer("is_active", &in.IsActive)
	return in, nil
}
