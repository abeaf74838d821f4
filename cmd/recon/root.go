package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
	_ "time/tzdata" // the business time zone works on machines without zoneinfo

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"recon"
	"recon/sqlstore"
)

// app carries what every subcommand needs: the process's environment and
// standard streams, and the global flags. There is no package-level state.
type app struct {
	getenv         func(string) string
	clock          recon.Clock // business time: dates of new data, report ranges
	rand           io.Reader   // randomness of generated credentials and references (crypto/rand)
	stdin          io.Reader
	stdout, stderr io.Writer

	databaseURL   string
	secretKeyFile string
	logFormat     string
	logLevel      string
	timezone      string
	jsonOut       bool
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "recon",
		Short: "Recon: bank-transfer reconciliation for merchants",
		Long: `Recon links business bank accounts, reads the payment code in each transfer
memo, matches the transfer to the merchant's open order and notifies the merchant.

Start the server with demo data:   recon serve --demo
Run it on PostgreSQL:              recon serve --database-url postgres://user@host/db

Every flag can also be set with an environment variable: RECON_ followed by the
flag name in upper case with dashes as underscores (--database-url is
RECON_DATABASE_URL). A flag given on the command line wins.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.applyEnv(cmd)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.databaseURL, "database-url", "", `database: "sqlite:PATH" or "postgres://..." (default: SQLite file recon.db in the working directory)`)
	pf.StringVar(&a.secretKeyFile, "secret-key-file", "", `file of the key that seals merchant, IPN and signing secrets; created when absent on a new database (default with SQLite: the database file's name + ".key"; PostgreSQL needs it or RECON_SECRET_KEY, see recon keys --help)`)
	pf.StringVar(&a.logFormat, "log-format", "", `log format: "text" or "json" (default: text on a terminal, json otherwise)`)
	pf.StringVar(&a.logLevel, "log-level", "info", `log level: debug, info, warn or error`)
	pf.StringVar(&a.timezone, "timezone", "Asia/Ho_Chi_Minh", "business time zone of transaction dates (IANA name)")
	root.AddCommand(
		newServeCmd(a), newMigrateCmd(a),
		newCompanyCmd(a), newUserCmd(a), newClientCmd(a), newTokenCmd(a),
		newBankAccountCmd(a), newSimulateCmd(a), newTransactionsCmd(a), newImportCmd(a), newStatementMappingCmd(a), newStatementsCmd(a),
		newMerchantCmd(a), newIPNCmd(a), newDeliveriesCmd(a), newReportCmd(a), newKeysCmd(a), newListenCmd(a),
		newTestDataCmd(a), newTriggerCmd(a), newHubCmd(a), newExceptionsCmd(a), newRefundsCmd(a),
		newInvoicesCmd(a),
	)
	root.InitDefaultCompletionCmd()
	annotateEnv(root)
	return root
}

func envName(flag string) string {
	return "RECON_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// annotateEnv appends "[env RECON_X]" to every flag's help text.
func annotateEnv(cmd *cobra.Command) {
	add := func(f *pflag.Flag) {
		if f.Name != "help" && !strings.Contains(f.Usage, "[env ") {
			f.Usage += " [env " + envName(f.Name) + "]"
		}
	}
	cmd.LocalNonPersistentFlags().VisitAll(add)
	cmd.PersistentFlags().VisitAll(add)
	for _, c := range cmd.Commands() {
		annotateEnv(c)
	}
}

// applyEnv sets every flag not given on the command line from its RECON_*
// variable, if that is set.
func (a *app) applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		if v := a.getenv(envName(f.Name)); v != "" {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%q: %v", envName(f.Name), v, e)
			}
		}
	})
	return err
}

func (a *app) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", a.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	format := a.logFormat
	if format == "" {
		format = "json"
		if f, ok := a.stderr.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(a.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(a.stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", a.logFormat)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// location returns the business time zone.
func (a *app) location() (*time.Location, error) {
	loc, err := time.LoadLocation(a.timezone)
	if err != nil {
		return nil, fmt.Errorf("--timezone %q: not an IANA time zone name", a.timezone)
	}
	return loc, nil
}

// openStore opens the configured database, brings its schema up to date
// and loads the key that seals its secrets (secretKeySource).
func (a *app) openStore(ctx context.Context, opts ...sqlstore.Option) (*sqlstore.DB, error) {
	db, err := sqlstore.Open(ctx, a.databaseURL, append([]sqlstore.Option{sqlstore.WithRand(a.rand)}, opts...)...)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating the database: %w", err)
	}
	if err := a.useSecretKey(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// withStore opens the configured database (migrated), runs fn and closes it.
// A domain error fn returns becomes a one-line CLI message.
func (a *app) withStore(ctx context.Context, fn func(db *sqlstore.DB) error) error {
	db, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	return describe(fn(db))
}

// parseLocalTime reads "YYYY-MM-DD HH:MM:SS" in the business time zone.
func (a *app) parseLocalTime(s string) (time.Time, error) {
	loc, err := a.location()
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.ParseInLocation(recon.DateTimeLayout, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time of the form YYYY-MM-DD HH:MM:SS", s)
	}
	return t, nil
}

// print writes v as indented JSON with --json, else the text line.
func (a *app) print(v any, text string, args ...any) error {
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(a.stdout, text+"\n", args...)
	return err
}

// addJSONFlag adds --json to an admin command.
func (a *app) addJSONFlag(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print the result as JSON, for scripts")
}

// describe turns a domain error into a one-line CLI message.
func describe(err error) error {
	if re, ok := err.(*recon.Error); ok && re.Code != recon.EINTERNAL {
		return fmt.Errorf("%s", re.Message)
	}
	return err
}
