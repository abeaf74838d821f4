package main

import (
	"context"
	"io"
	"time"

	"recon"
	"recon/dashboard"
	"recon/statement"
)

// What the dashboard reaches of other adapters: the API's statement import,
// as package dashboard names it. (The services it calls, ipn and linking, it
// imports itself.)

// importStatement is the dashboard's statement upload: statement.ImportFile,
// the import of POST /api/v1/bank-accounts/{id}/statements.
func importStatement(ctx context.Context, db statement.Store, tenant recon.TenantID, account int64, name string, f io.ReadSeeker, loc *time.Location, clock recon.Clock) (*dashboard.StatementResult, error) {
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
