package dashboard

import (
	"errors"
	"net/http"
	"net/url"

	"recon"
	"recon/web"
)

// The hub companies page (docs/dashboard.md, Hub companies): the merchant's
// companies of the bank-linking hub (recon.HubCustomer, docs/hub.md), which
// a link of a bank account belongs to, listed and made from the dashboard
// through linking.Service.CreateCustomer, as POST /v1/company/create makes
// them; in the mode the dashboard shows (a test company for test links).

type hubCompaniesView struct {
	List    []*recon.HubCustomer
	Total   int64
	Created string // the xid just made (?created=)
	Err     string
	Form    struct{ FullName, ShortName, Status string }
	// Statuses are the choices of the form (recon.HubCustomerStatuses).
	Statuses []string
}

// registerFirstrun adds the routes of the sandbox's test orders and of the
// hub companies page.
func (h *Handler) registerFirstrun(mux *web.Mux) {
	mux.HandleLimited("POST /dashboard/sandbox/order", h.form(recon.ActionWriteTransactions, h.sandboxOrder), formLimit)
	mux.Handle("GET /dashboard/hub-companies", h.page(recon.ActionHub, h.hubCompanies))
	mux.HandleLimited("POST /dashboard/hub-companies", h.form(recon.ActionHub, h.createHubCompany), formLimit)
}

// hubCompanies serves GET /dashboard/hub-companies.
func (h *Handler) hubCompanies(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Hub == nil {
		return errNotFound()
	}
	v := &hubCompaniesView{Created: r.URL.Query().Get("created")}
	v.Form.Status = recon.HubCustomerActive
	return h.renderHubCompanies(w, r, q, http.StatusOK, v)
}

func (h *Handler) renderHubCompanies(w http.ResponseWriter, r *http.Request, q *request, status int, v *hubCompaniesView) error {
	var err error
	if v.List, v.Total, err = h.Store.HubCustomers(r.Context(), q.caller.Tenant, recon.HubCustomerFilter{Page: 1, PerPage: 100}); err != nil {
		return err
	}
	for _, hc := range v.List {
		hc.CreatedAt = hc.CreatedAt.In(h.Location) // shown in the business time zone
	}
	v.Statuses = recon.HubCustomerStatuses
	h.render(w, r, status, "hubcompanies", h.data(r, q, "hub_companies", v))
	return nil
}

// createHubCompany serves POST /dashboard/hub-companies: full name, short
// name, status; a refusal shows the form again with what was typed.
func (h *Handler) createHubCompany(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Hub == nil {
		return errNotFound()
	}
	f := r.PostForm
	v := &hubCompaniesView{}
	v.Form.FullName, v.Form.ShortName, v.Form.Status = f.Get("full_name"), f.Get("short_name"), f.Get("status")
	hc, err := h.Hub.CreateCustomer(r.Context(), q.caller.Tenant, v.Form.FullName, v.Form.ShortName, v.Form.Status)
	if err != nil {
		switch recon.ErrorCode(err) {
		case recon.ECONFLICT:
			v.Err = q.lang.T("hc_err_duplicate")
		case recon.EINVALID:
			v.Err = q.lang.T(hubCompanyFieldKey(err))
		default:
			return err
		}
		return h.renderHubCompanies(w, r, q, http.StatusBadRequest, v)
	}
	http.Redirect(w, r, "/dashboard/hub-companies?created="+url.QueryEscape(hc.XID), http.StatusSeeOther)
	return nil
}

// hubCompanyFieldKey is the message of a refused company, by the field its
// error names (recon.HubCustomer.Validate's).
func hubCompanyFieldKey(err error) string {
	var e *recon.Error
	if errors.As(err, &e) {
		switch {
		case e.Fields["full_name"] != nil:
			return "hc_err_full_name"
		case e.Fields["short_name"] != nil:
			return "hc_err_short_name"
		case e.Fields["status"] != nil:
			return "hc_err_status"
		}
	}
	return "to_err_other"
}
