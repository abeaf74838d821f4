package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"recon"
	"recon/api"
	"recon/sqlstore"
)

// newStatementsCmd is `recon statements`: the statements imported into a
// bank account and the proof of their balances (docs/statements.md,
// Balance proof), as GET /api/v1/bank-accounts/{id}/statements[/{import}].
func newStatementsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "statements",
		Short: "Imported statements of a bank account and the proof of their balances",
	}
	cmd.AddCommand(newStatementsListCmd(a), newStatementsProofCmd(a))
	return cmd
}

func newStatementsListCmd(a *app) *cobra.Command {
	var (
		tenant      tenantFlags
		accountID   int64
		page, limit int
	)
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the statements imported into a bank account, the latest period first",
		Example: `  recon statements list --company 1 --bank-account 2`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if page < 1 || limit < 1 || limit > recon.MaxTransactionLimit {
				return fmt.Errorf("--page must be at least 1 and --limit from 1 to %d", recon.MaxTransactionLimit)
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				list, total, err := db.StatementImports(cmd.Context(), tn, accountID, page, limit)
				if err != nil {
					return err
				}
				if a.jsonOut {
					data := make([]any, len(list))
					for i, imp := range list {
						data[i] = api.StatementImportJSON(imp, tn.Live())
					}
					return a.print(map[string]any{"statements": data, "total": total}, "")
				}
				if len(list) == 0 {
					return a.none("statements")
				}
				var text strings.Builder
				for _, imp := range list {
					fmt.Fprintf(&text, "%d\t%s to %s\t%s\t%s\topening %s\tclosing %s\t%d entries (%d new)\n", imp.ID, imp.From, imp.To, imp.Format, imp.FileName,
						balanceText(imp.Opening), balanceText(imp.Closing), imp.Entries, imp.Imported)
				}
				fmt.Fprintf(&text, "%d of %d", len(list), total)
				return a.print(nil, "%s", text.String())
			})
		},
	}
	f := cmd.Flags()
	tenant.add(cmd, true, "company id (required)")
	f.Int64Var(&accountID, "bank-account", 0, "bank account id of the company (required)")
	f.IntVar(&page, "page", 1, "page, from 1")
	f.IntVar(&limit, "limit", recon.DefaultTransactionLimit, "statements per page")
	_ = cmd.MarkFlagRequired("bank-account")
	a.addJSONFlag(cmd)
	return cmd
}

func newStatementsProofCmd(a *app) *cobra.Command {
	var (
		tenant    tenantFlags
		accountID int64
	)
	cmd := &cobra.Command{
		Use:   "proof IMPORT",
		Short: "Prove an imported statement's balances against the rows Recon holds",
		Long: `Prove an imported statement's balances: Recon's balance over the statement's
period (its opening plus the rows Recon counts on the account in the period)
against its closing balance, the difference and the rows that explain it
(only in Recon, missing in Recon, amounts that differ), and whether its
opening joins the previous statement's closing (docs/statements.md, Balance proof).`,
		Example: `  recon statements proof --company 1 --bank-account 2 7`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("the statement import id must be a positive integer, not %q", args[0])
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				p, err := db.StatementProof(cmd.Context(), tn, accountID, id)
				if err != nil {
					return err
				}
				return a.print(api.StatementProofJSON(p, tn.Live()), "%s", proofText(p))
			})
		},
	}
	f := cmd.Flags()
	tenant.add(cmd, true, "company id (required)")
	f.Int64Var(&accountID, "bank-account", 0, "bank account id of the company (required)")
	_ = cmd.MarkFlagRequired("bank-account")
	a.addJSONFlag(cmd)
	return cmd
}

// balanceText is a balance or "-" when unknown.
func balanceText(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10) + " VND"
}

// proofText is a proof as `recon statements proof` prints it.
func proofText(p *recon.StatementProof) string {
	imp := p.Import
	var b strings.Builder
	fmt.Fprintf(&b, "statement import %d (%s, %s), %s to %s\n", imp.ID, imp.Format, imp.FileName, imp.From, imp.To)
	fmt.Fprintf(&b, "  statement: opening %s, %d entries (+%d, -%d), closing %s\n", balanceText(imp.Opening), imp.Entries, imp.In, imp.Out, balanceText(imp.Closing))
	fmt.Fprintf(&b, "  Recon:     %d rows (+%d, -%d), closing %s\n", p.ReconRows, p.ReconIn, p.ReconOut, balanceText(p.ReconClosing))
	switch {
	case p.Difference == nil:
		b.WriteString("  not proved: the statement gave no opening or closing balance")
	case p.Proved:
		b.WriteString("  proved: the closing balance equals the opening plus Recon's rows")
	default:
		fmt.Fprintf(&b, "  difference %d VND (statement minus Recon); unexplained %s", *p.Difference, balanceText(p.Unexplained))
	}
	for _, c := range p.Causes {
		fmt.Fprintf(&b, "\n  %s: %d rows, %+d VND", c.Kind, c.Count, c.Effect)
		if c.Unknown > 0 {
			fmt.Fprintf(&b, " (%d of unknown amount)", c.Unknown)
		}
		for _, r := range c.Rows {
			b.WriteString("\n    ")
			if r.TransactionID != 0 {
				fmt.Fprintf(&b, "transaction %d %s %s +%d -%d", r.TransactionID, r.TransactionDate.Format(recon.DateTimeLayout), r.ReferenceNumber, r.AmountIn, r.AmountOut)
			}
			if r.Row != 0 {
				fmt.Fprintf(&b, " statement row %d", r.Row)
				if r.Amount != nil {
					fmt.Fprintf(&b, " %+d", *r.Amount)
				}
			}
			if r.Note != "" {
				b.WriteString(" " + r.Note)
			}
		}
	}
	if d := p.Discontinuity; d != nil {
		fmt.Fprintf(&b, "\n  discontinuity: opening %d VND does not join the closing %d VND of statement import %d (to %s): gap %+d VND",
			d.Opening, d.PreviousClosing, d.PreviousImportID, d.PreviousTo, d.Gap)
	}
	return b.String()
}
