package api

import (
	"context"
	"net/http"

	"recon"
	"recon/web"
)

// audited runs change as the caller's audited action on object (the audit
// log, docs/dashboard.md: recon.Audited, in the change's transaction), with
// the request's address and user agent.
func (h *Handler) audited(r *http.Request, c *recon.Caller, action, object string, changes []recon.AuditChange, change func(ctx context.Context) error) error {
	e := &recon.AuditEntry{Tenant: c.Tenant, At: h.now(), Action: action, Object: object, Changes: changes,
		Actor: recon.AuditActorOf(c, recon.AuditViaAPI, web.RemoteIP(r), r.UserAgent())}
	return recon.Audited(r.Context(), h.Store, e, change)
}
