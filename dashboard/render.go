package dashboard

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"sync"
	"time"

	"recon"
	"recon/web"
)

// pageNames are the templates/*.html files that are pages (each with the
// layout); layout.html holds the frame.
var pageNames = []string{"signin", "error", "home", "transactions", "transaction", "orders", "order", "exceptions", "exception", "notifications", "delivery",
	"settings", "confirm", "bankaccounts", "sandbox", "refunds", "refund", "refund_new", "report", "invoices", "invoice", "customer",
	"users", "account", "companies", "setpassword", "forgot", "audit", "hubcompanies", "alerts", "statements"}

var funcs = template.FuncMap{"rate": rate, "add1": func(i int) int { return i + 1 },
	"gapOf": func(d *recon.BalanceDiscontinuity) int64 { return d.Reported - d.Expected },
	"pagerOf": func(l lang, p pager) any {
		return struct {
			Lang lang
			P    pager
		}{l, p}
	},
	"refundRowsOf": func(l lang, rows []refundRow) any {
		return struct {
			Lang lang
			Rows []refundRow
		}{l, rows}
	},
	"invoiceRowsOf": func(l lang, rows []invoiceRow) any {
		return struct {
			Lang lang
			Rows []invoiceRow
		}{l, rows}
	},
	"slice2": func(a, b recon.DayFlow) []recon.DayFlow { return []recon.DayFlow{a, b} },
	"keysetOf": func(l lang, first, next string) any {
		return struct {
			Lang        lang
			First, Next string
		}{l, first, next}
	},
}

// sharedPages are parsed once a process, not once a handler: a parsed
// template is safe for concurrent use and no handler changes its pages, and
// the tests start many servers in one process.
var sharedPages = sync.OnceValue(parsePages)

func parsePages() map[string]*template.Template {
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		pages[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// pageData is what the layout reads; Data is the page's own view.
type pageData struct {
	Lang  lang
	Title string // message key
	Path  string // the page's path, for the language and mode switches
	// Signed-in pages only (User is nil on the sign-in and some error pages).
	User      *recon.User
	Company   string
	Live      bool
	CSRF      string
	MayMoney  bool
	MayManage bool
	// MayCompany opens the settings; SandboxPanel shows the sandbox link.
	MayCompany, MayWrite, SandboxPanel bool
	// MayRefunds shows the refunds link (refunds.go).
	MayRefunds bool
	// MayInvoices shows the invoices link (invoices.go).
	MayInvoices bool
	// Team links the team pages and the account (users.go); Switch the
	// company picker, when the session's person is in several companies.
	Team, Switch bool
	Data         any
	// Loc is the business time zone, in which Time and Date write every
	// time a page shows (docs/dashboard.md, Language).
	Loc *time.Location
}

// Time writes t in the business time zone with the one layout of the
// dashboard's times ("" for the zero time).
func (d *pageData) Time(t time.Time) string { return localTime(t, d.Loc, timeLayout) }

// Date writes t's day in the business time zone.
func (d *pageData) Date(t time.Time) string { return localTime(t, d.Loc, time.DateOnly) }

func localTime(t time.Time, loc *time.Location, layout string) string {
	if t.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format(layout)
}

func (h *Handler) data(r *http.Request, q *request, title string, v any) *pageData {
	return &pageData{Lang: q.lang, Title: title, Path: r.URL.Path, User: q.caller.User, Company: q.company.ShortName,
		Live: q.caller.Livemode(), CSRF: csrfToken(q.token), MayMoney: q.caller.May(recon.ActionReadMoney),
		MayManage: q.caller.May(recon.ActionManageNotifications), MayCompany: q.caller.May(recon.ActionManageCompany),
		MayWrite:     q.caller.May(recon.ActionWriteTransactions),
		SandboxPanel: q.caller.May(recon.ActionWriteTransactions), // in live mode it offers the switch to test data
		MayRefunds:   h.Refunds != nil && q.caller.May(recon.ActionReadRefunds),
		MayInvoices:  h.Invoices != nil && q.caller.May(recon.ActionReadInvoices), Data: v, Loc: h.Location,
		Team: h.Team != nil, Switch: q.session.Users > 1}
}

// render writes the page whole, or a 500 when it fails to execute (never
// half a page).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, d *pageData) {
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		h.Logger.ErrorContext(r.Context(), "dashboard: render", "page", name, "err", err, "request_id", web.RequestID(r.Context()))
		http.Error(w, "An internal error occurred.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		// Every 503 says when to retry (web.SetRetryAfter).
		w.Header().Set("Retry-After", strconv.Itoa(web.RetryAfterUnavailable))
	}
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

func errNotFound() error { return recon.Errorf(recon.ENOTFOUND, "no such page") }

// writeError answers err with an error page in the user's language; the
// message of an internal error is logged, not shown.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, q *request, err error) {
	status, _ := web.ErrorStatus(err)
	if status == http.StatusInternalServerError { // a 503 (the database away for a moment) is in the access log
		h.Logger.ErrorContext(r.Context(), "dashboard: internal error", "err", err, "path", r.URL.Path, "request_id", web.RequestID(r.Context()))
	}
	l := h.langOf(r)
	if q != nil {
		l = q.lang
	}
	h.writeErrorHTML(w, r, q, status, l.ErrorText(err))
}

func (h *Handler) writeErrorPage(w http.ResponseWriter, r *http.Request, q *request, status int, msg string) {
	h.writeErrorHTML(w, r, q, status, template.HTML(template.HTMLEscapeString(msg)))
}

// writeErrorHTML answers with the error page showing msg, written in the
// page's language (lang.ErrorText).
func (h *Handler) writeErrorHTML(w http.ResponseWriter, r *http.Request, q *request, status int, msg template.HTML) {
	d := &pageData{Lang: h.langOf(r), Title: "error", Path: r.URL.Path, Loc: h.Location}
	if q != nil {
		d = h.data(r, q, "error", nil)
	}
	d.Data = struct {
		Status  int
		Message template.HTML
	}{status, msg}
	h.render(w, r, status, "error", d)
}

// writeFamilyError answers requests under /dashboard that fail before a
// handler (no route, wrong method, refused input) with the error page.
func (h *Handler) writeFamilyError(w http.ResponseWriter, r *http.Request, status int, _, message string) {
	setSecurityHeaders(w)
	if status == http.StatusNotFound {
		message = h.langOf(r).T("not_found")
	}
	h.writeErrorPage(w, r, nil, status, message)
}
