package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"recon"
)

// The OAuth clients of the settings screen (Admin and SuperAdmin): the
// company's clients of the mode shown (a test client in test mode, as
// `recon client create --test`), registered by the code of `recon client
// create` (Handler.RegisterClient: oauth.RegisterClient, the secret stored
// only as its hash and shown once) and revoked by deleting them, which
// takes their tokens along (recon.ClientStore.DeleteClient).

const clientPerPage = 20

// clientForm is the new-client form as typed, shown again when refused.
type clientForm struct {
	Name, RedirectURIs string
	Scopes             []string
	Public             bool
}

// Has reports whether the form checks the scope.
func (f clientForm) Has(scope string) bool {
	return slices.Contains(f.Scopes, scope)
}

// listClients fills the clients part of the settings view.
func (h *Handler) listClients(r *http.Request, q *request, v *settingsView) error {
	if h.RegisterClient == nil {
		return nil
	}
	v.HasClients, v.Scopes = true, recon.Scopes
	if v.ClientForm.Scopes == nil && v.ClientErr == "" {
		v.ClientForm.Scopes = []string{recon.ScopeTransactionRead}
	}
	page, err := pageParam(r.URL.Query(), "clients_page")
	if err != nil {
		page = 1
	}
	var total int64
	v.Clients, total, err = h.Store.Clients(r.Context(), q.session.Company, !q.caller.Livemode(), (page-1)*clientPerPage, clientPerPage)
	if err != nil {
		return err
	}
	v.ClientsPager = newPager("/dashboard/settings", url.Values{}, "clients_page", page, clientPerPage, total)
	return nil
}

// createClient serves POST /dashboard/settings/clients: a new client of
// the company in the mode shown. Its secret is on the answer only.
func (h *Handler) createClient(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.RegisterClient == nil {
		return errNotFound()
	}
	f := clientForm{Name: r.PostForm.Get("name"), RedirectURIs: r.PostForm.Get("redirect_uris"), Scopes: r.PostForm["scope"],
		Public: r.PostForm.Get("public") == "1"}
	c := &recon.Client{Company: q.session.Company, Name: strings.TrimSpace(f.Name), Scopes: f.Scopes, Test: !q.caller.Livemode()}
	for _, u := range strings.Split(f.RedirectURIs, "\n") {
		if u = strings.TrimSpace(u); u != "" {
			c.RedirectURIs = append(c.RedirectURIs, u)
		}
	}
	secret, err := h.RegisterClient(r.Context(), c, f.Public)
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditClientCreate, c.ID, []recon.AuditChange{{Field: "name", After: c.Name}, {Field: "scopes", After: strings.Join(c.Scopes, " ")}})
	}
	if recon.ErrorCode(err) == recon.EINVALID {
		return h.renderSettings(w, r, q, http.StatusBadRequest, &settingsView{ClientForm: f, ClientErr: recon.ErrorMessage(err)})
	} else if err != nil {
		return err
	}
	return h.renderSettings(w, r, q, http.StatusOK, &settingsView{NewClientID: c.ID, NewSecret: secret, SecretWhat: "client_secret"})
}

// revokeClient serves POST /dashboard/settings/clients/revoke: the client
// of the company and mode is deleted with its tokens, which stop working at
// the next request on every node (the deletion moves the authentication
// epoch). Another company's client, or the other mode's, is 404.
func (h *Handler) revokeClient(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.RegisterClient == nil {
		return errNotFound()
	}
	id := r.PostForm.Get("client")
	err := h.audit(r, q, recon.AuditClientDelete, id, nil, func(ctx context.Context) error {
		return h.Store.DeleteClient(ctx, q.session.Company, !q.caller.Livemode(), id)
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/settings?revoked=1#clients", http.StatusSeeOther)
	return nil
}
