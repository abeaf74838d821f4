package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/team"
	"recon/web"
)

// The team's pages (docs/dashboard.md, Team): the Admin's list of users
// with invitations, reset links, roles and deactivation; each person's own
// account (password, e-mail language); the company picker of a person in
// several companies; and the public pages of the one-time links (accept an
// invitation, reset a forgotten password). The operations are the team
// service's (team.Service).

func (h *Handler) registerTeam(mux *web.Mux) {
	mux.Handle("GET /dashboard/companies", h.page(recon.ActionNone, h.companies))
	mux.HandleLimited("POST /dashboard/companies", h.form(recon.ActionNone, h.switchCompany), formLimit)
	if h.Team == nil {
		return
	}
	mux.Handle("GET /dashboard/users", h.page(recon.ActionManageCompany, h.users))
	mux.HandleLimited("POST /dashboard/users/invite", h.form(recon.ActionManageCompany, h.invite), formLimit)
	mux.HandleLimited("POST /dashboard/users/{id}/invite", h.form(recon.ActionManageCompany, h.resendInvite), formLimit)
	mux.HandleLimited("POST /dashboard/users/{id}/reset", h.form(recon.ActionManageCompany, h.adminReset), formLimit)
	mux.HandleLimited("POST /dashboard/users/{id}/role", h.form(recon.ActionManageCompany, h.teamRole), formLimit)
	mux.Handle("GET /dashboard/users/{id}/deactivate", h.page(recon.ActionManageCompany, h.confirmDeactivate))
	mux.HandleLimited("POST /dashboard/users/{id}/deactivate", h.form(recon.ActionManageCompany, h.deactivate), formLimit)
	mux.HandleLimited("POST /dashboard/users/{id}/reactivate", h.form(recon.ActionManageCompany, h.reactivate), formLimit)
	mux.Handle("GET /dashboard/account", h.page(recon.ActionNone, h.account))
	mux.HandleLimited("POST /dashboard/account/password", h.form(recon.ActionNone, h.changePassword), formLimit)
	mux.HandleLimited("POST /dashboard/account/lang", h.form(recon.ActionNone, h.setUserLang), formLimit)
	mux.Handle("GET /dashboard/invite", h.public(h.linkPage(recon.UserTokenInvite)))
	mux.HandleLimited("POST /dashboard/invite", h.public(h.useLink(recon.UserTokenInvite)), formLimit)
	mux.Handle("GET /dashboard/reset", h.public(h.linkPage(recon.UserTokenReset)))
	mux.HandleLimited("POST /dashboard/reset", h.public(h.useLink(recon.UserTokenReset)), formLimit)
	mux.Handle("GET /dashboard/forgot", h.public(h.forgotPage))
	mux.HandleLimited("POST /dashboard/forgot", h.public(h.forgot), formLimit)
}

// teamError is err in the page's language: the message of the rule it
// broke (recon.Error.Reason, or the field), never the store's English.
func teamError(l lang, err error) string {
	var e *recon.Error
	if errors.As(err, &e) {
		if e.Reason != "" {
			if m, ok := messages[l]["tm_e_"+e.Reason]; ok {
				return m
			}
		}
		for f := range e.Fields {
			if m, ok := messages[l]["tm_e_field_"+f]; ok {
				return m
			}
		}
		if e.Code == recon.EFORBIDDEN {
			return l.T("tm_e_forbidden")
		}
	}
	return l.T("tm_e_generic")
}

// teamStatus is the HTTP status of a refused team form: 4xx by the code.
func teamStatus(err error) int {
	s, _ := web.ErrorStatus(err)
	return s
}

// userRow is one user of the team page.
type userRow struct {
	U       *recon.User
	Status  string // tm_active, tm_invited, tm_deactivated
	Created string
	Self    bool
}

type usersView struct {
	Rows        []userRow
	Pager       pager
	Roles       []recon.Role
	Permissions []string
	Langs       []string
	Mail        bool // SMTP is configured
	// What the last action did, shown once.
	Sent      *team.Sent
	SentWhat  string // tm_sent_invite or tm_sent_reset
	Done      string // a message key: what was done
	Error     string
	FormEmail string
}

// users serves GET /dashboard/users.
func (h *Handler) users(w http.ResponseWriter, r *http.Request, q *request) error {
	v := &usersView{}
	switch r.URL.Query().Get("done") {
	case "deactivated", "reactivated", "role":
		v.Done = "tm_done_" + r.URL.Query().Get("done")
	}
	return h.renderUsers(w, r, q, http.StatusOK, v)
}

func (h *Handler) renderUsers(w http.ResponseWriter, r *http.Request, q *request, status int, v *usersView) error {
	page, err := pageParam(r.URL.Query(), "page")
	if err != nil {
		return err
	}
	users, total, err := h.Store.Users(r.Context(), q.session.Company, (page-1)*userPerPage, userPerPage)
	if err != nil {
		return err
	}
	for _, u := range users {
		st := "tm_active"
		switch {
		case !u.Active():
			st = "tm_deactivated"
		case u.Invited():
			st = "tm_invited"
		}
		v.Rows = append(v.Rows, userRow{U: u, Status: st, Created: h.timeText(u.CreatedAt), Self: u.ID == q.caller.User.ID})
	}
	v.Pager = newPager("/dashboard/users", url.Values{}, "page", page, userPerPage, total)
	v.Roles, v.Permissions, v.Langs = recon.GrantableRoles(q.caller.User), recon.Permissions, recon.UserLangs
	v.Mail = h.Team.Mail != nil
	h.render(w, r, status, "users", h.data(r, q, "tm_team", v))
	return nil
}

// afterTeamAction shows the team page with what was sent, or the refusal.
func (h *Handler) afterTeamAction(w http.ResponseWriter, r *http.Request, q *request, sent *team.Sent, what string, err error) error {
	if err != nil {
		if c := recon.ErrorCode(err); c == recon.EINTERNAL || c == recon.EUNAVAILABLE || c == recon.ENOTFOUND {
			return err
		}
		return h.renderUsers(w, r, q, teamStatus(err), &usersView{Error: teamError(q.lang, err), FormEmail: r.PostForm.Get("email")})
	}
	return h.renderUsers(w, r, q, http.StatusOK, &usersView{Sent: sent, SentWhat: what})
}

// invite serves POST /dashboard/users/invite.
func (h *Handler) invite(w http.ResponseWriter, r *http.Request, q *request) error {
	role, perms, err := roleForm(q, r.PostForm)
	var sent *team.Sent
	if err == nil {
		email := strings.ToLower(strings.TrimSpace(r.PostForm.Get("email")))
		err = h.audit(r, q, recon.AuditUserInvite, email, []recon.AuditChange{{Field: "role", After: string(role)}, {Field: "permissions", After: strings.Join(perms, ", ")}},
			func(ctx context.Context) (err error) {
				sent, err = h.Team.Invite(ctx, q.caller.User, r.PostForm.Get("email"), role, perms, r.PostForm.Get("lang"))
				return err
			})
	}
	return h.afterTeamAction(w, r, q, sent, "tm_sent_invite", err)
}

func userID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound()
	}
	return id, nil
}

// resendInvite serves POST /dashboard/users/{id}/invite.
func (h *Handler) resendInvite(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := userID(r)
	if err != nil {
		return err
	}
	sent, err := h.Team.ResendInvite(r.Context(), q.caller.User, id)
	return h.afterTeamAction(w, r, q, sent, "tm_sent_invite", err)
}

// adminReset serves POST /dashboard/users/{id}/reset.
func (h *Handler) adminReset(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := userID(r)
	if err != nil {
		return err
	}
	sent, err := h.Team.AdminReset(r.Context(), q.caller.User, id)
	return h.afterTeamAction(w, r, q, sent, "tm_sent_reset", err)
}

// teamRole serves POST /dashboard/users/{id}/role: settings.go's setRole
// from the team page.
func (h *Handler) teamRole(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := userID(r)
	if err != nil {
		return err
	}
	target, err := h.Store.User(r.Context(), id)
	if err != nil || target.Company != q.session.Company {
		return errNotFound()
	}
	role, perms, err := roleForm(q, r.PostForm)
	if err == nil {
		err = recon.CheckGrant(q.caller.User, target, role)
	}
	if err == nil {
		err = h.audit(r, q, recon.AuditUserRole, target.Email, recon.AuditRoleChanges(target, role, perms), func(ctx context.Context) error {
			return h.Store.ChangeUserRole(ctx, q.session.Company, target.ID, role, perms)
		})
	}
	if err != nil {
		return h.afterTeamAction(w, r, q, nil, "", err)
	}
	http.Redirect(w, r, "/dashboard/users?done=role", http.StatusSeeOther)
	return nil
}

// confirmDeactivate serves GET /dashboard/users/{id}/deactivate.
func (h *Handler) confirmDeactivate(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := userID(r)
	if err != nil {
		return err
	}
	u, err := h.Store.User(r.Context(), id)
	if err != nil || u.Company != q.session.Company {
		return errNotFound()
	}
	return h.renderConfirm(w, r, q, &confirmView{Title: "tm_c_deactivate", Intro: "tm_c_deactivate_intro",
		Items:  []confirmItem{{Label: "email", Value: u.Email, ID: "c-email"}, {Label: "role", Value: q.lang.T("tm_role_" + string(u.Role)), ID: "c-role"}},
		Action: "/dashboard/users/" + strconv.FormatInt(u.ID, 10) + "/deactivate", Button: "tm_deactivate", Back: "/dashboard/users"})
}

// deactivate serves POST /dashboard/users/{id}/deactivate (confirmed).
func (h *Handler) deactivate(w http.ResponseWriter, r *http.Request, q *request) error {
	if !confirmed(r) {
		return h.confirmDeactivate(w, r, q)
	}
	id, err := userID(r)
	if err != nil {
		return err
	}
	u, err := h.Team.Deactivate(r.Context(), q.caller.User, id)
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditUserDeactivate, u.Email, nil)
	}
	if err != nil {
		return h.afterTeamAction(w, r, q, nil, "", err)
	}
	http.Redirect(w, r, "/dashboard/users?done=deactivated", http.StatusSeeOther)
	return nil
}

// reactivate serves POST /dashboard/users/{id}/reactivate.
func (h *Handler) reactivate(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := userID(r)
	if err != nil {
		return err
	}
	u, err := h.Team.Reactivate(r.Context(), q.caller.User, id)
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditUserReactivate, u.Email, nil)
	}
	if err != nil {
		return h.afterTeamAction(w, r, q, nil, "", err)
	}
	http.Redirect(w, r, "/dashboard/users?done=reactivated", http.StatusSeeOther)
	return nil
}

type accountView struct {
	Langs []string
	Saved string // a message key
	Error string
}

// account serves GET /dashboard/account: the signed-in person's password
// and e-mail language.
func (h *Handler) account(w http.ResponseWriter, r *http.Request, q *request) error {
	v := &accountView{}
	switch r.URL.Query().Get("saved") {
	case "password":
		v.Saved = "tm_saved_password"
	case "lang":
		v.Saved = "tm_saved_lang"
	}
	return h.renderAccount(w, r, q, http.StatusOK, v)
}

func (h *Handler) renderAccount(w http.ResponseWriter, r *http.Request, q *request, status int, v *accountView) error {
	v.Langs = recon.UserLangs
	h.render(w, r, status, "account", h.data(r, q, "tm_account", v))
	return nil
}

// changePassword serves POST /dashboard/account/password.
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.PostForm
	var err error
	if f.Get("new") != f.Get("confirm_new") {
		err = &recon.Error{Code: recon.EINVALID, Reason: "mismatch", Message: "the two new passwords differ"}
	}
	if err == nil {
		var others []*recon.User
		if others, err = h.Store.DashboardSessionUsers(r.Context(), q.session.ID); err == nil {
			err = h.audit(r, q, recon.AuditUserPassword, q.caller.User.Email, []recon.AuditChange{{Field: "password", After: recon.AuditRotated}},
				func(ctx context.Context) error {
					return h.Team.ChangePassword(ctx, q.caller.User, others, f.Get("current"), f.Get("new"), tokenHash(q.token))
				})
		}
	}
	if err != nil {
		if c := recon.ErrorCode(err); c == recon.EINTERNAL || c == recon.EUNAVAILABLE {
			return err
		}
		return h.renderAccount(w, r, q, teamStatus(err), &accountView{Error: teamError(q.lang, err)})
	}
	http.Redirect(w, r, "/dashboard/account?saved=password", http.StatusSeeOther)
	return nil
}

// setUserLang serves POST /dashboard/account/lang.
func (h *Handler) setUserLang(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.Team.SetLang(r.Context(), q.caller.User, r.PostForm.Get("lang")); err != nil {
		if c := recon.ErrorCode(err); c == recon.EINTERNAL || c == recon.EUNAVAILABLE {
			return err
		}
		return h.renderAccount(w, r, q, teamStatus(err), &accountView{Error: teamError(q.lang, err)})
	}
	http.Redirect(w, r, "/dashboard/account?saved=lang", http.StatusSeeOther)
	return nil
}

// companyChoice is one company of the picker.
type companyChoice struct {
	UserID  int64
	Company int64
	Name    string
	Role    recon.Role
	Current bool
}

type companiesView struct {
	Choices []companyChoice
	SignIn  bool
}

// companies serves GET /dashboard/companies: the companies the session's
// person may switch to (those whose user had the password given at
// sign-in), the current one marked.
func (h *Handler) companies(w http.ResponseWriter, r *http.Request, q *request) error {
	users, err := h.Store.DashboardSessionUsers(r.Context(), q.session.ID)
	if err != nil {
		return err
	}
	v := &companiesView{SignIn: r.URL.Query().Get("signin") == "1"}
	for _, u := range users {
		c, err := h.Store.Company(r.Context(), u.Company)
		if err != nil {
			return err
		}
		v.Choices = append(v.Choices, companyChoice{UserID: u.ID, Company: u.Company, Name: c.FullName, Role: u.Role, Current: u.ID == q.caller.User.ID})
	}
	h.render(w, r, http.StatusOK, "companies", h.data(r, q, "tm_companies", v))
	return nil
}

// switchCompany serves POST /dashboard/companies: the session moves to the
// chosen user's company (its live data), one the session may switch to.
func (h *Handler) switchCompany(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := strconv.ParseInt(r.PostForm.Get("user"), 10, 64)
	if err != nil {
		return errNotFound()
	}
	if err := h.Store.SwitchDashboardSession(r.Context(), tokenHash(q.token), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
	return nil
}

// linkView is the page of a one-time link: set a password.
type linkView struct {
	CSRF, Token    string
	Kind           string // invite or reset
	Email, Company string
	Error          string // the link's refusal, or the form's
	Usable         bool
}

// linkPage serves GET /dashboard/invite and /dashboard/reset: the form
// that sets the password, or why the link cannot be used.
func (h *Handler) linkPage(kind recon.UserTokenKind) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("t")
		v := linkView{Kind: string(kind), Token: tok}
		l, err := h.Team.CheckLink(r.Context(), kind, tok)
		status := http.StatusOK
		switch code := recon.ErrorCode(err); code {
		case "":
			v.Usable, v.Email, v.Company = true, l.Email, l.Company
		case recon.EINVALID, recon.ENOTFOUND:
			v.Error, status = teamError(h.langOf(r), err), http.StatusGone
			if code == recon.ENOTFOUND {
				status = http.StatusNotFound
			}
		default:
			h.writeError(w, r, nil, err)
			return
		}
		h.renderLink(w, r, status, v)
	}
}

func (h *Handler) renderLink(w http.ResponseWriter, r *http.Request, status int, v linkView) {
	v.CSRF = newToken()
	h.setCookie(w, signinCookie, v.CSRF, 3600)
	title := "tm_invite_title"
	if v.Kind == string(recon.UserTokenReset) {
		title = "tm_reset_title"
	}
	h.render(w, r, status, "setpassword", &pageData{Lang: h.langOf(r), Path: r.URL.Path, Title: title, Data: v})
}

// useLink serves POST /dashboard/invite and /dashboard/reset: the password
// is set through the link, once, and the person lands signed in.
func (h *Handler) useLink(kind recon.UserTokenKind) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.checkForm(r, h.cookie(r, signinCookie)); err != nil {
			h.writeError(w, r, nil, err)
			return
		}
		f := r.PostForm
		v := linkView{Kind: string(kind), Token: f.Get("t"), Usable: true}
		var users []*recon.User
		var err error
		if f.Get("password") != f.Get("confirm_password") {
			err = &recon.Error{Code: recon.EINVALID, Reason: "mismatch", Message: "the two passwords differ"}
		} else {
			users, err = h.Team.UseLink(r.Context(), kind, v.Token, f.Get("password"))
		}
		switch code := recon.ErrorCode(err); code {
		case "":
		case recon.EINVALID, recon.ENOTFOUND:
			status := teamStatus(err)
			var e *recon.Error
			if errors.As(err, &e) && (e.Reason == "link_used" || e.Reason == "link_expired" || e.Reason == "link_invalid") {
				v.Usable = false
				if code == recon.EINVALID {
					status = http.StatusGone
				}
			}
			v.Error = teamError(h.langOf(r), err)
			h.renderLink(w, r, status, v)
			return
		default:
			h.writeError(w, r, nil, err)
			return
		}
		h.setCookie(w, signinCookie, "", -1)
		h.startSession(w, r, users)
	}
}

// startSession signs the person in as the first of users whose company is
// active, able to switch to the others (the picker first when there are
// several): the end of a sign-in and of a password set through a link.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, users []*recon.User) {
	var active []*recon.User
	var inactive error
	for _, u := range users {
		t, err := h.Store.TenantOf(r.Context(), u.Company, true)
		if err == nil {
			err = t.CheckActive()
		}
		switch recon.ErrorCode(err) {
		case "":
			active = append(active, u)
		case recon.EFORBIDDEN, recon.ENOTFOUND:
			if inactive == nil {
				inactive = err
			}
		default:
			h.writeError(w, r, nil, err)
			return
		}
	}
	if len(active) == 0 {
		h.writeError(w, r, nil, inactive)
		return
	}
	u, others := active[0], make([]int64, 0, len(active)-1)
	for _, o := range active[1:] {
		others = append(others, o.ID)
	}
	token, now := newToken(), h.now()
	s := &recon.DashboardSession{UserID: u.ID, Company: u.Company, Live: true, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(h.MaxAge)}
	if err := h.Store.StartDashboardSession(r.Context(), s, tokenHash(token), others); err != nil {
		h.writeError(w, r, nil, err)
		return
	}
	h.setCookie(w, sessionCookie, token, int(h.MaxAge/time.Second))
	target := "/dashboard/"
	if len(active) > 1 {
		target = "/dashboard/companies?signin=1"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

type forgotView struct {
	CSRF, Email string
	Sent        bool
}

// forgotPage serves GET /dashboard/forgot: the address to send a reset
// link to (with SMTP; without it the page says to ask an Admin).
func (h *Handler) forgotPage(w http.ResponseWriter, r *http.Request) {
	h.renderForgot(w, r, forgotView{})
}

func (h *Handler) renderForgot(w http.ResponseWriter, r *http.Request, v forgotView) {
	v.CSRF = newToken()
	h.setCookie(w, signinCookie, v.CSRF, 3600)
	h.render(w, r, http.StatusOK, "forgot", &pageData{Lang: h.langOf(r), Path: r.URL.Path, Title: "tm_forgot_title", Data: struct {
		forgotView
		Mail bool
	}{v, h.Team.Mail != nil}})
}

// forgot serves POST /dashboard/forgot: the same answer whether or not the
// address is known (team.Service.RequestReset).
func (h *Handler) forgot(w http.ResponseWriter, r *http.Request) {
	if err := h.checkForm(r, h.cookie(r, signinCookie)); err != nil {
		h.writeError(w, r, nil, err)
		return
	}
	email := r.PostForm.Get("email")
	if err := h.Team.RequestReset(r.Context(), email); err != nil {
		h.writeError(w, r, nil, err)
		return
	}
	h.renderForgot(w, r, forgotView{Email: email, Sent: true})
}
