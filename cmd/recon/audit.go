package main

import (
	"context"

	"recon"
)

// cliAudited runs change as an audited action of the operator at the
// command line (docs/dashboard.md, Audit log): recon.Audited, the entry in
// the change's transaction; by is the company's user who acts, when the
// command names one (--user).
func cliAudited(ctx context.Context, db recon.AuditAppender, tenant recon.TenantID, by *recon.User, action, object string, changes []recon.AuditChange,
	change func(ctx context.Context) error) error {
	e := &recon.AuditEntry{Tenant: tenant, Action: action, Object: object, Changes: changes, Actor: recon.AuditActor{Via: recon.AuditViaCLI, UserAgent: "recon CLI"}}
	if by != nil {
		e.Actor.UserID, e.Actor.Email = by.ID, by.Email
	}
	return recon.Audited(ctx, db, e, change)
}

// noChange is the change of an entry recorded right after what it records.
func noChange(context.Context) error { return nil }
