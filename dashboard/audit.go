package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"recon"
	"recon/web"
)

// The audit log (docs/dashboard.md, Audit log): the page that lists it and
// audit, which every handler that changes settings, users, secrets,
// targets, refunds or exceptions calls around its change.

func (h *Handler) registerAudit(mux *web.Mux) {
	mux.Handle("GET /dashboard/audit", h.page(recon.ActionManageCompany, h.auditLog))
}

// companyWide are the audit families of the company's own settings,
// shared by its live and test modes: their entries go to the live log
// whichever mode the change was made in.
var companyWide = []string{"company", "formats", "seller", "user"}

// audit runs change as the signed-in user's audited action on object,
// recording the entry in the change's transaction (recon.Audited) with the
// request's address and user agent, in the business clock's time.
func (h *Handler) audit(r *http.Request, q *request, action, object string, changes []recon.AuditChange, change func(ctx context.Context) error) error {
	tenant := q.caller.Tenant
	for _, f := range companyWide {
		if recon.AuditFamily(action) == f || action == recon.AuditChatUpdate {
			tenant = recon.LiveTenant(q.session.Company)
		}
	}
	e := &recon.AuditEntry{Tenant: tenant, At: h.now(), Action: action, Object: object, Changes: changes,
		Actor: recon.AuditActorOf(q.caller, recon.AuditViaDashboard, clientAddress(r), r.UserAgent())}
	return recon.Audited(r.Context(), h.Store, e, change)
}

// auditPerPage is the log's page size.
const auditPerPage = 50

type auditRow struct {
	When, Who, Via, Action, Object, From, Agent string
	Changes                                     []auditChangeRow
}

type auditChangeRow struct{ Field, Before, After string }

type auditView struct {
	Query    url.Values
	Families []string
	Rows     []auditRow
	Pager    pager
	Error    string
}

// auditLog serves GET /dashboard/audit?family=&actor=&from=&to=&page=: the
// log of the mode the session is in, newest first, every time in the
// business time zone.
func (h *Handler) auditLog(w http.ResponseWriter, r *http.Request, q *request) error {
	query := trimmedQuery(r, "family", "actor", "from", "to", "page")
	v := &auditView{Query: query, Families: recon.AuditFamilies}
	f := recon.AuditFilter{Family: query.Get("family"), Actor: strings.ToLower(query.Get("actor")), From: query.Get("from"), To: query.Get("to"),
		Location: h.Location, Page: 1, PerPage: auditPerPage}
	var err error
	if p := query.Get("page"); p != "" {
		if f.Page, err = strconv.Atoi(p); err != nil || f.Page < 1 {
			err = recon.FieldError("page", "page must be a positive number")
		}
	}
	var list []*recon.AuditEntry
	var total int64
	if err == nil {
		list, total, err = h.Store.AuditEntries(r.Context(), q.caller.Tenant, f)
	}
	status := http.StatusOK
	switch recon.ErrorCode(err) {
	case "":
		for _, e := range list {
			v.Rows = append(v.Rows, h.auditRow(q.lang, e))
		}
		v.Pager = newPager(r.URL.Path, query, "page", f.Page, f.PerPage, total)
	case recon.EINVALID:
		v.Error, status = q.lang.T("au_bad_"+errField(err)), http.StatusBadRequest
	default:
		return err
	}
	h.render(w, r, status, "audit", h.data(r, q, "audit", v))
	return nil
}

// auditRow is an entry as the page shows it, in the page's language: the
// action and the fields translated, a secret's change "rotated".
func (h *Handler) auditRow(l lang, e *recon.AuditEntry) auditRow {
	row := auditRow{When: h.timeText(e.At), Action: l.T("au_" + e.Action), Object: l.auditObject(e.Object), From: e.Actor.IP, Agent: e.Actor.UserAgent,
		Via: l.T("au_via_" + e.Actor.Via)}
	switch {
	case e.Actor.Via == recon.AuditViaRecon: // endpoint health (docs/design.md, D7)
		row.Who = "Recon"
	case e.Actor.Email != "":
		row.Who = e.Actor.Email
	case e.Actor.ClientID != "":
		row.Who = l.T("au_client") + " " + e.Actor.ClientID
	default:
		row.Who = l.T("au_operator")
	}
	for _, c := range e.Changes {
		field := c.Field
		if t := l.T("af_" + c.Field); t != "af_"+c.Field {
			field = t
		}
		after := c.After
		if after == recon.AuditRotated {
			after = l.T("au_rotated")
		}
		row.Changes = append(row.Changes, auditChangeRow{Field: field, Before: l.auditValue(c.Field, c.Before), After: l.auditValue(c.Field, after)})
	}
	return row
}

// auditValue translates the values the log records in a fixed form (on,
// off, roles, decisions, statuses, amounts); anything else is shown as
// recorded.
func (l lang) auditValue(field, s string) string {
	switch s {
	case "":
		return ""
	case "true":
		return l.T("au_on")
	case "false":
		return l.T("au_off")
	}
	prefix := map[string]string{"role": "role_", "decision": "xa_", "status": "rs_"}[field]
	if prefix != "" {
		if t := l.T(prefix + s); t != prefix+s {
			return t
		}
	}
	if field == "amount" || field == "refund_approval_threshold" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return l.Money(n)
		}
	}
	return s
}

// auditObject translates the kind of object an entry names ("exception
// 12", "refund …", "webhook"); an e-mail address or a client id is shown as
// recorded.
func (l lang) auditObject(s string) string {
	kind, rest, _ := strings.Cut(s, " ")
	if t := l.T("au_obj_" + kind); t != "au_obj_"+kind {
		return strings.TrimSpace(t + " " + rest)
	}
	return s
}

// errField is the field a validation error names ("" when none).
func errField(err error) string {
	var e *recon.Error
	if errors.As(err, &e) {
		for f := range e.Fields {
			return f
		}
	}
	return ""
}

// auditAfter records, right after a change that succeeded, what only its
// result tells (a new id, which secrets are new).
func (h *Handler) auditAfter(r *http.Request, q *request, action, object string, changes []recon.AuditChange) error {
	return h.audit(r, q, action, object, changes, func(context.Context) error { return nil })
}
