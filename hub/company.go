package hub

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"recon"
	"recon/web"
)

// companyJSON is a hub customer as the hub API shows a "company".
type companyJSON struct {
	XID       string `json:"xid"`
	FullName  string `json:"full_name"`
	ShortName string `json:"short_name"`
	Status    string `json:"status"`
	// Active is "1" for status Active, "0" otherwise (SePay's string).
	Active    string `json:"active"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// CompanyJSON is a hub company as the API shows it (also for the CLI), its
// times in loc.
func CompanyJSON(c *recon.HubCustomer, loc *time.Location) companyJSON {
	active := "0"
	if c.Status == recon.HubCustomerActive {
		active = "1"
	}
	return companyJSON{XID: c.XID, FullName: c.FullName, ShortName: c.ShortName, Status: c.Status, Active: active,
		CreatedAt: localTime(c.CreatedAt, loc), UpdatedAt: localTime(c.UpdatedAt, loc)}
}

// companyInput is the body of create and edit; a nil field is absent.
type companyInput struct {
	FullName  *string `json:"full_name"`
	ShortName *string `json:"short_name"`
	Status    *string `json:"status"`
}

type dataBody struct {
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Data    any    `json:"data"`
}

// createCompany serves POST /v1/company/create: full_name (required,
// unique among the merchant's companies), short_name, status (Active
// default, Pending or Suspended) → 201 with the company.
func (h *Handler) createCompany(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var in companyInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.FullName == nil {
		return recon.FieldError("full_name", "full_name is required")
	}
	short, status := "", recon.HubCustomerActive
	if in.ShortName != nil {
		short = *in.ShortName
	}
	if in.Status != nil {
		status = *in.Status
	}
	hc, err := h.Links.CreateCustomer(r.Context(), c.Tenant, *in.FullName, short, status)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, dataBody{Code: http.StatusCreated, Message: "Company created", Data: CompanyJSON(hc, h.location())})
	return nil
}

// listCompanies serves GET /v1/company: page, per_page (default 20, at most
// 100), q (substring of full_name, case-insensitive), status,
// sort[created_at] (desc default, or asc).
func (h *Handler) listCompanies(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if err := checkParams(r, "page", "per_page", "limit", "q", "status", "sort[created_at]"); err != nil {
		return err
	}
	page, per, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := recon.HubCustomerFilter{Page: page, PerPage: per, Q: q.Get("q"), Status: q.Get("status")}
	if len(f.Q) > maxQueryLen {
		return recon.FieldError("q", "q must be at most %d characters", maxQueryLen)
	}
	if f.Status != "" && !slices.Contains(recon.HubCustomerStatuses, f.Status) {
		return recon.FieldError("status", "status must be one of %s", strings.Join(recon.HubCustomerStatuses, ", "))
	}
	switch q.Get("sort[created_at]") {
	case "", "desc":
	case "asc":
		f.Ascending = true
	default:
		return recon.FieldError("sort[created_at]", "sort[created_at] must be asc or desc")
	}
	list, total, err := h.Store.HubCustomers(r.Context(), c.Tenant, f)
	if err != nil {
		return err
	}
	out := make([]companyJSON, len(list))
	for i, hc := range list {
		out[i] = CompanyJSON(hc, h.location())
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data []companyJSON `json:"data"`
		Meta pageMeta      `json:"meta"`
	}{out, newPageMeta(page, per, total)})
	return nil
}

// customerXID reads the {xid} path value: a malformed one is the same 404
// as an unknown one (or another merchant's).
func customerXID(r *http.Request) (string, error) {
	xid := r.PathValue("xid")
	if !recon.ValidXID(xid) {
		return "", recon.Errorf(recon.ENOTFOUND, "company %s not found", xid)
	}
	return xid, nil
}

// getCompany serves GET /v1/company/{xid}.
func (h *Handler) getCompany(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	xid, err := customerXID(r)
	if err != nil {
		return err
	}
	hc, err := h.Store.HubCustomer(r.Context(), c.Tenant, xid)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Data: CompanyJSON(hc, h.location())})
	return nil
}

// editCompany serves POST /v1/company/edit/{xid}: a partial update of
// full_name, short_name and status.
func (h *Handler) editCompany(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	xid, err := customerXID(r)
	if err != nil {
		return err
	}
	var in companyInput
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	hc, err := h.Store.UpdateHubCustomer(r.Context(), c.Tenant, xid, func(hc *recon.HubCustomer) error {
		if in.FullName != nil {
			hc.FullName = strings.TrimSpace(*in.FullName)
		}
		if in.ShortName != nil {
			hc.ShortName = strings.TrimSpace(*in.ShortName)
		}
		if in.Status != nil {
			hc.Status = *in.Status
		}
		return nil
	})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Code: http.StatusOK, Message: "Company updated", Data: CompanyJSON(hc, h.location())})
	return nil
}

type counterDay struct {
	Date           string `json:"date,omitempty"`
	Transaction    int64  `json:"transaction"`
	TransactionIn  int64  `json:"transaction_in"`
	TransactionOut int64  `json:"transaction_out"`
}

// companyCounter serves GET /v1/company/counter/{xid}[?date=YYYY-MM-DD]:
// the company's linked accounts and their transactions per day.
func (h *Handler) companyCounter(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	if err := checkParams(r, "date"); err != nil {
		return err
	}
	xid, err := customerXID(r)
	if err != nil {
		return err
	}
	cnt, err := h.Store.HubCustomerCounter(r.Context(), c.Tenant, xid, r.URL.Query().Get("date"))
	if err != nil {
		return err
	}
	days := make([]counterDay, len(cnt.Days))
	for i, d := range cnt.Days {
		days[i] = counterDay{d.Date, d.Transactions, d.In, d.Out}
	}
	web.WriteJSON(w, http.StatusOK, dataBody{Data: struct {
		BankAccounts int64        `json:"bank_account"`
		Dates        []counterDay `json:"dates"`
		Total        counterDay   `json:"total"`
	}{cnt.BankAccounts, days, counterDay{"", cnt.Total.Transactions, cnt.Total.In, cnt.Total.Out}}})
	return nil
}
