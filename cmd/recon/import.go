package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"recon/sqlstore"
	"recon/statement"
)

func newImportCmd(a *app) *cobra.Command {
	var (
		tenant      tenantFlags
		accountID   int64
		format      string
		skipInvalid bool
	)
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import a bank statement file (CSV, ISO 20022 camt.053, MT940)",
		Long: `Import a bank statement into one of a company's bank accounts. The format is
detected from the content (or set with --format): CSV with the documented
columns, ISO 20022 camt.053 (versions 001.02 to 001.08) or SWIFT MT940.

All or nothing: a bad row is reported with its line number and nothing is
imported. With --skip-invalid, bad rows are skipped and every one is reported.
Rows already stored (same bank account and reference) count as duplicates,
so importing a file twice is safe. A progress bar is drawn on a terminal.`,
		Example: `  recon import --company 1 --bank-account 2 statement-2026-03.xml
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
			opts := statement.Options{Location: loc, Clock: a.clock}
			if term, ok := a.stderr.(*os.File); ok && isTerminal(term) && info.Size() > 1<<20 {
				opts.Progress = progressBar(a.stderr, info.Size())
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
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
				fmt.Fprintf(&text, "%s: %d imported, %d duplicates, %d skipped", rep.Format, rep.Imported, rep.Duplicates, rep.SkippedCount)
				for i, s := range rep.Skipped {
					skipped[i] = map[string]any{"row": s.Row, "error": s.Error()}
					fmt.Fprintf(&text, "\n  %s", s.Error())
				}
				return a.print(map[string]any{"format": rep.Format, "imported": rep.Imported, "duplicates": rep.Duplicates, "skipped": skipped}, "%s", text.String())
			})
		},
	}
	f := cmd.Flags()
	tenant.add(cmd, true, "company id (required)")
	f.Int64Var(&accountID, "bank-account", 0, "bank account id of the company (required)")
	f.StringVar(&format, "format", "auto", "auto, csv, camt053 or mt940")
	f.BoolVar(&skipInvalid, "skip-invalid", false, "skip bad rows and report each, instead of importing nothing")
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
