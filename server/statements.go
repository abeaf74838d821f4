package server

import (
	"context"
	"io"
	"time"

	"recon"
	"recon/dashboard"
	"recon/statement"
)

// StatementStore is what the dashboard's statement functions need: the
// import's store, the company (for the preview's payment codes) and the
// bank accounts' column mappings (sqlstore.DB).
type StatementStore interface {
	statement.Store
	Company(ctx context.Context, id int64) (*recon.Company, error)
	StatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64) (*recon.StatementMapping, error)
	SetStatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64, m *recon.StatementMapping) error
}

// WireStatements gives the dashboard the statement upload, its preview and
// the column mappings (dashboard.Handler.ImportStatement, PreviewStatement,
// StatementMapping, SaveStatementMapping): the statement package's, as the
// API's upload runs them (docs/statements.md).
func WireStatements(h *dashboard.Handler, db StatementStore, loc *time.Location, clock recon.Clock, tempDir string) {
	h.ImportStatement = ImportStatement(db, loc, clock)
	h.PreviewStatement = func(ctx context.Context, tenant recon.TenantID, account int64, name string, f io.Reader) (*dashboard.StatementPreview, error) {
		pv, err := statement.PreviewFile(ctx, db, tenant, account, name, f, "auto", statement.Options{Location: loc, Clock: clock, TempDir: tempDir}, statement.PreviewRows)
		if err != nil {
			return nil, err
		}
		out := &dashboard.StatementPreview{Format: string(pv.Format), Count: pv.Rows, BadRows: pv.BadCount, Mapped: pv.Mapped}
		for i, l := range pv.Lines {
			out.Rows = append(out.Rows, dashboard.PreviewRow{Row: l.Row, Date: l.Tx.TransactionDate, In: l.Tx.AmountIn, Out: l.Tx.AmountOut,
				Content: l.Tx.Content, Reference: l.Tx.ReferenceNumber, Code: pv.Codes[i], Balance: l.Tx.Accumulated})
		}
		for _, e := range pv.Bad {
			out.RowErrors = append(out.RowErrors, e.Error())
		}
		return out, nil
	}
	h.StatementMapping = db.StatementMapping
	h.SaveStatementMapping = func(ctx context.Context, tenant recon.TenantID, account int64, m *recon.StatementMapping) error {
		if m != nil {
			if err := statement.ValidateMapping(m); err != nil {
				return err
			}
		}
		return db.SetStatementMapping(ctx, tenant, account, m)
	}
	h.TempDir = tempDir
}
