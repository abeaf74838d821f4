package main

import (
	"context"
	"io"
	"time"

	"recon"
	"recon/dashboard"
	"recon/linking"
	"recon/statement"
)

// What the dashboard reaches of other adapters: the API's statement import
// and the hub, as package dashboard names them.

// importStatement is the dashboard's statement upload: statement.ImportFile,
// the import of POST /api/v1/bank-accounts/{id}/statements.
func importStatement(ctx context.Context, db statement.Store, tenant, account int64, name string, f io.ReadSeeker, loc *time.Location, clock recon.Clock) (*dashboard.StatementResult, error) {
	rep, err := statement.ImportFile(ctx, db, tenant, account, name, f, "auto", statement.Options{Location: loc, Clock: clock}, false)
	if rep == nil {
		return nil, err
	}
	res := &dashboard.StatementResult{Format: string(rep.Format), Imported: rep.Imported, Duplicates: rep.Duplicates, BadRows: rep.SkippedCount}
	for _, e := range rep.Skipped {
		res.RowErrors = append(res.RowErrors, e.Error())
	}
	return res, err
}

// dashboardHub is the hub as the dashboard uses it: the linking service.
type dashboardHub struct{ links *linking.Service }

func (d dashboardHub) CreateLinkToken(ctx context.Context, t *recon.LinkToken) (string, error) {
	return d.links.CreateLinkToken(ctx, t)
}

func (d dashboardHub) Simulate(ctx context.Context, tenant int64, sandbox bool, event string) error {
	_, err := d.links.Simulate(ctx, tenant, sandbox, event)
	return err
}

func (d dashboardHub) SaveWebhook(ctx context.Context, tenant int64, ch recon.HubWebhookChange) (*recon.HubWebhook, bool, error) {
	return d.links.SaveWebhook(ctx, tenant, ch)
}

func (d dashboardHub) Identities() []dashboard.HubIdentity {
	var out []dashboard.HubIdentity
	for _, i := range linking.SandboxIdentities() {
		out = append(out, dashboard.HubIdentity{Bank: i.BankCode, AccountType: i.AccountType, Holder: i.HolderName, Account: i.AccountNumber,
			NationalID: i.NationalID, Phone: i.Phone, OTP: i.OTP, Fails: i.Fail})
	}
	return out
}
