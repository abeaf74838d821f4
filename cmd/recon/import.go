package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/sqlstore"
	"recon/statement"
)

func newImportCmd(a *app) *cobra.Command {
	var (
		tenant      tenantFlags
		accountID   int64
		format      string
		skipInvalid bool
		preview     bool
	)
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import a bank statement file (bank's Excel or CSV export, ISO 20022 camt.053, MT940)",
		Long: `Import a bank statement into one of a company's bank accounts. The format is
detected from the content (or set with --format): an Excel workbook (.xlsx)
or CSV as the Vietnamese banks export them (their Vietnamese headers are
recognised; another layout reads with the account's saved column mapping,
see recon statement-mapping), CSV with Recon's documented columns, ISO 20022
camt.053 (versions 001.02 to 001.08) or SWIFT MT940 (docs/statements.md).
With --preview, the first rows are shown as they would be stored and nothing
is stored.

All or nothing: a bad row is reported with its line number and nothing is
imported. With --skip-invalid, bad rows are skipped and every one is reported.
Rows already stored (same bank account and reference) count as duplicates,
so importing a file twice is safe. A progress bar is drawn on a terminal.`,
		Example: `  recon import --company 1 --bank-account 2 statement-2026-03.xml
  recon import --company 1 --bank-account 2 --preview SaoKe_VCB_112026.xlsx
  recon import --company 1 --bank-account 2 --skip-invalid --json export.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			loc, err := a.location()
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			br := bufio.NewReaderSize(f, 64<<10)
			head, _ := br.Peek(4096)
			fmtName := statement.Format(format)
			if format == "" || format == "auto" {
				if fmtName, err = statement.DetectFormat(filepath.Base(args[0]), head); err != nil {
					return describe(err)
				}
			}
			opts := statement.Options{Location: loc, Clock: a.clock, FileName: filepath.Base(args[0])}
			if term, ok := a.stderr.(*os.File); ok && isTerminal(term) && info.Size() > 1<<20 {
				opts.Progress = progressBar(a.stderr, info.Size())
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				if preview {
					pv, err := statement.PreviewFile(cmd.Context(), db, tn, accountID, filepath.Base(args[0]), br, fmtName, opts, statement.PreviewRows)
					if opts.Progress != nil {
						fmt.Fprintln(a.stderr)
					}
					if err != nil {
						return err
					}
					return a.print(previewJSON(pv), "%s", previewText(pv, loc))
				}
				rep, err := statement.Import(cmd.Context(), db, tn, accountID, br, fmtName, opts, skipInvalid)
				if opts.Progress != nil {
					fmt.Fprintln(a.stderr)
				}
				if err != nil {
					return err
				}
				skipped := make([]map[string]any, len(rep.Skipped))
				var text strings.Builder
				fmt.Fprintf(&text, "%s: %d imported, %d duplicates, %d skipped; %d orders paid, %d exceptions opened; statement import %d", rep.Format, rep.Imported, rep.Duplicates, rep.SkippedCount, rep.OrdersPaid, rep.ExceptionsOpened, rep.ImportID)
				if rep.Repeated {
					text.WriteString(" (imported before: nothing new recorded)")
				}
				for i, s := range rep.Skipped {
					skipped[i] = map[string]any{"row": s.Row, "error": s.Error()}
					fmt.Fprintf(&text, "\n  %s", s.Error())
				}
				return a.print(map[string]any{"format": rep.Format, "imported": rep.Imported, "duplicates": rep.Duplicates, "skipped": skipped,
					"orders_paid": rep.OrdersPaid, "exceptions_opened": rep.ExceptionsOpened, "import_id": rep.ImportID, "repeated": rep.Repeated}, "%s", text.String())
			})
		},
	}
	f := cmd.Flags()
	tenant.add(cmd, true, "company id (required)")
	f.Int64Var(&accountID, "bank-account", 0, "bank account id of the company (required)")
	f.StringVar(&format, "format", "auto", "auto, csv, xlsx, camt053 or mt940")
	f.BoolVar(&skipInvalid, "skip-invalid", false, "skip bad rows and report each, instead of importing nothing")
	f.BoolVar(&preview, "preview", false, "show the first rows as they would be stored, and the bad rows; store nothing")
	_ = cmd.MarkFlagRequired("bank-account")
	a.addJSONFlag(cmd)
	return cmd
}

// progressBar returns a Progress hook that redraws a one-line bar on w.
func progressBar(w io.Writer, total int64) func(int64) {
	return func(n int64) {
		const width = 40
		frac := min(1, float64(n)/float64(total))
		filled := int(frac * width)
		fmt.Fprintf(w, "\r[%s%s] %3.0f%% %d/%d MiB", strings.Repeat("#", filled), strings.Repeat(".", width-filled), frac*100, n>>20, total>>20)
	}
}

// previewJSON is a preview as --json prints it (the API's preview answer).
func previewJSON(pv *statement.Preview) map[string]any {
	rows := make([]map[string]any, len(pv.Lines))
	for i, l := range pv.Lines {
		rows[i] = map[string]any{"row": l.Row, "transaction_date": l.Tx.TransactionDate.Format(recon.DateTimeLayout), "amount_in": l.Tx.AmountIn,
			"amount_out": l.Tx.AmountOut, "transaction_content": l.Tx.Content, "reference_number": l.Tx.ReferenceNumber, "accumulated": l.Tx.Accumulated, "code": pv.Codes[i]}
	}
	bad := make([]map[string]any, len(pv.Bad))
	for i, e := range pv.Bad {
		bad[i] = map[string]any{"row": e.Row, "error": e.Error()}
	}
	return map[string]any{"format": pv.Format, "preview": true, "rows": rows, "row_count": pv.Rows, "invalid": bad, "invalid_count": pv.BadCount}
}

// previewText is a preview as a table.
func previewText(pv *statement.Preview, loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows would be imported, %d bad; nothing stored. First rows:\n", pv.Format, pv.Rows, pv.BadCount)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tDATE\tIN\tOUT\tREFERENCE\tCODE\tCONTENT")
	for i, l := range pv.Lines {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\n", l.Row, l.Tx.TransactionDate.In(loc).Format(recon.DateTimeLayout), l.Tx.AmountIn, l.Tx.AmountOut, l.Tx.ReferenceNumber, pv.Codes[i], l.Tx.Content)
	}
	tw.Flush()
	for _, e := range pv.Bad {
		fmt.Fprintf(&b, "  %s\n", e.Error())
	}
	return strings.TrimRight(b.String(), "\n")
}

func newStatementMappingCmd(a *app) *cobra.Command {
	var (
		tenant    tenantFlags
		accountID int64
		m         recon.StatementMapping
		clear     bool
	)
	cmd := &cobra.Command{
		Use:   "statement-mapping",
		Short: "Show, save or clear a bank account's column mapping for statement exports",
		Long: `A bank account's column mapping tells the import which column of an Excel or
CSV export holds what, for a layout Recon does not recognise by itself (the
usual Vietnamese bank exports need none): give the header of each column as
the file writes it (docs/statements.md, Column mappings). Without a column
flag the saved mapping is shown; --clear removes it.`,
		Example: `  recon statement-mapping --company 1 --bank-account 2 --date "Thời điểm" --amount-in "Tiền về" --amount-out "Tiền đi" --content "Lời nhắn" --reference "Mã"
  recon statement-mapping --company 1 --bank-account 2
  recon statement-mapping --company 1 --bank-account 2 --clear`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set := !reflect.DeepEqual(m, recon.StatementMapping{})
			if set && clear {
				return fmt.Errorf("--clear takes no column flags")
			}
			if set {
				if err := statement.ValidateMapping(&m); err != nil {
					return err
				}
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				switch {
				case clear:
					if err := db.SetStatementMapping(cmd.Context(), tn, accountID, nil); err != nil {
						return err
					}
					return a.print(map[string]any{"bank_account_id": accountID, "mapping": nil}, "bank account %d: no column mapping", accountID)
				case set:
					if err := db.SetStatementMapping(cmd.Context(), tn, accountID, &m); err != nil {
						return err
					}
				}
				saved, err := db.StatementMapping(cmd.Context(), tn, accountID)
				if err != nil {
					return err
				}
				if saved == nil {
					return a.print(map[string]any{"bank_account_id": accountID, "mapping": nil}, "bank account %d: no column mapping (the usual bank exports need none)", accountID)
				}
				text := fmt.Sprintf("bank account %d: date=%q amount_in=%q amount_out=%q amount=%q content=%q reference=%q balance=%q sub_account=%q", accountID,
					saved.Date, saved.AmountIn, saved.AmountOut, saved.Amount, saved.Content, saved.Reference, saved.Balance, saved.SubAccount)
				return a.print(map[string]any{"bank_account_id": accountID, "mapping": saved}, "%s", text)
			})
		},
	}
	f := cmd.Flags()
	tenant.add(cmd, true, "company id (required)")
	f.Int64Var(&accountID, "bank-account", 0, "bank account id of the company (required)")
	f.StringVar(&m.Date, "date", "", "header of the transaction date column")
	f.StringVar(&m.AmountIn, "amount-in", "", "header of the money in (credit) column")
	f.StringVar(&m.AmountOut, "amount-out", "", "header of the money out (debit) column")
	f.StringVar(&m.Amount, "amount", "", "header of a signed amount column (instead of --amount-in/--amount-out)")
	f.StringVar(&m.Content, "content", "", "header of the memo column")
	f.StringVar(&m.Reference, "reference", "", "header of the bank reference column (without it, a row's reference is its hash)")
	f.StringVar(&m.Balance, "balance", "", "header of the balance column")
	f.StringSliceVar(&m.OtherReferences, "other-reference", nil, "header of a column of other references of the transfer (repeatable)")
	f.StringVar(&m.SubAccount, "sub-account", "", "header of the virtual account column")
	f.BoolVar(&clear, "clear", false, "remove the saved mapping")
	_ = cmd.MarkFlagRequired("bank-account")
	a.addJSONFlag(cmd)
	return cmd
}
