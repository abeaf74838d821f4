package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"recon"
	"recon/sqlstore"
)

// tenantFlags are --company and --test: which of a company's two tenants a
// command acts on, its live data or its test-mode data (docs/design.md, D10).
type tenantFlags struct {
	company int64
	test    bool
}

func (t *tenantFlags) add(cmd *cobra.Command, required bool, usage string) {
	cmd.Flags().Int64Var(&t.company, "company", 0, usage)
	cmd.Flags().BoolVar(&t.test, "test", false, "act on the company's test-mode data instead of its live data")
	if required {
		_ = cmd.MarkFlagRequired("company")
	}
}

// tenant returns the tenant the flags name: the company's live one, or its
// test tenant (made on first use) with --test; the zero TenantID without
// --company.
func (t *tenantFlags) tenant(ctx context.Context, db recon.TenantStore) (recon.TenantID, error) {
	if t.company == 0 {
		if t.test {
			return recon.TenantID{}, errors.New("--test needs --company")
		}
		return recon.TenantID{}, nil
	}
	if t.test {
		tt, err := db.TestTenant(ctx, t.company)
		if err != nil {
			return recon.TenantID{}, err
		}
		return tt.ID, nil
	}
	tt, err := db.Tenant(ctx, t.company)
	if err != nil {
		return recon.TenantID{}, err
	}
	if !tt.Live() {
		return recon.TenantID{}, fmt.Errorf("%d is the test tenant of company %d: use --company %d --test", t.company, tt.Company, tt.Company)
	}
	return recon.LiveTenant(t.company), nil
}

// id is the id of the tenant the flags name (see tenant); 0 without
// --company.
func (t *tenantFlags) id(ctx context.Context, db recon.TenantStore) (int64, error) {
	tenant, err := t.tenant(ctx, db)
	return tenant.ID(), err
}

func newTestDataCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "test-data", Short: "Manage a company's test-mode data"}
	var companyID int64
	wipe := &cobra.Command{
		Use:   "wipe",
		Short: "Delete a company's test data, and nothing else",
		Long: `Delete the company's test-mode data in one transaction: bank accounts,
transactions and what derives from them, orders, match decisions and
notifications with their attempts. Live data is not touched, nor are the test
credentials (OAuth2 clients, merchant credentials) and the test IPN and webhook
settings, so an integration under test keeps working on an empty test mode.`,
		Example: `  recon test-data wipe --company 1 --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				res, err := db.WipeTestData(cmd.Context(), companyID)
				if err != nil {
					return err
				}
				return a.print(res, "test data of company %d deleted: %d bank accounts, %d transactions, %d orders, %d notifications",
					companyID, res.BankAccounts, res.Transactions, res.Orders, res.Deliveries)
			})
		},
	}
	wipe.Flags().Int64Var(&companyID, "company", 0, "company id (required)")
	_ = wipe.MarkFlagRequired("company")
	a.addJSONFlag(wipe)
	cmd.AddCommand(wipe)
	return cmd
}

// modeNote marks test-mode output.
func modeNote(test bool) string {
	if test {
		return " (test mode)"
	}
	return ""
}
