package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/sqlstore"
)

func newBankAccountCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "bank-account", Short: "Manage a company's bank accounts"}
	cmd.AddCommand(newBankAccountCreateCmd(a), newBankAccountListCmd(a))
	return cmd
}

func newBankAccountCreateCmd(a *app) *cobra.Command {
	var (
		b      recon.BankAccount
		tenant tenantFlags
	)
	create := &cobra.Command{
		Use:     "create",
		Short:   "Add a bank account to a company",
		Example: `  recon bank-account create --company 1 --bank Vietcombank --number 0071000123456 --holder "CONG TY TNHH HOA SEN" --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := b.Validate(); err != nil {
				return describe(err)
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				var err error
				if b.CompanyID, err = tenant.id(cmd.Context(), db); err != nil {
					return err
				}
				if err := db.CreateBankAccount(cmd.Context(), &b); err != nil {
					return err
				}
				return a.print(map[string]any{"id": b.ID}, "created bank account %d (%s %s) in company %d%s", b.ID, b.BankName, b.AccountNumber, tenant.company, modeNote(tenant.test))
			})
		},
	}
	f := create.Flags()
	tenant.add(create, true, "company id (required)")
	f.StringVar(&b.BankName, "bank", "", "bank brand name: Vietcombank, MBBank, Techcombank, ... (required)")
	f.StringVar(&b.AccountNumber, "number", "", "account number (required)")
	f.StringVar(&b.HolderName, "holder", "", "account holder name")
	f.StringSliceVar(&b.SubAccounts, "sub-account", nil, "a virtual account number routed to this account; repeat for more")
	for _, n := range []string{"bank", "number"} {
		_ = create.MarkFlagRequired(n)
	}
	a.addJSONFlag(create)
	return create
}

func newBankAccountListCmd(a *app) *cobra.Command {
	var tenant tenantFlags
	list := &cobra.Command{
		Use:   "list",
		Short: "List a company's bank accounts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				accounts, err := db.BankAccounts(cmd.Context(), tn)
				if err != nil {
					return err
				}
				if a.jsonOut {
					out := make([]map[string]any, len(accounts))
					for i, b := range accounts {
						out[i] = map[string]any{"id": b.ID, "bank": b.BankName, "number": b.AccountNumber, "holder": b.HolderName, "sub_accounts": b.SubAccounts}
					}
					return a.print(out, "")
				}
				if len(accounts) == 0 {
					return a.none("bank accounts")
				}
				for _, b := range accounts {
					fmt.Fprintf(a.stdout, "%d\t%s\t%s\t%s\t%s\n", b.ID, b.BankName, b.AccountNumber, b.HolderName, strings.Join(b.SubAccounts, " "))
				}
				return nil
			})
		},
	}
	tenant.add(list, true, "company id (required)")
	a.addJSONFlag(list)
	return list
}

func newSimulateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "simulate", Short: "Play a payer in sandbox and test setups"}
	var (
		accountID int64
		amount    int64
		content   string
		ref       string
		sub       string
		va        string
	)
	transfer := &cobra.Command{
		Use:   "transfer",
		Short: "Simulate an incoming bank transfer",
		Long: `Simulate an incoming bank transfer to a bank account, as a payer would make it:
the transaction goes through the same pipeline as a bank feed (payment-code
extraction, duplicate check, running balance). Meant for sandbox and test setups.

With --va, the transfer pays a virtual account of API v2 (docs/api-v2.md,
Virtual accounts): to a bank one's number (the sub-account), or with a memo
one's code in the memo, into the account's bank account; the amount defaults
to the account's.`,
		Example: `  recon simulate transfer --bank-account 1 --amount 150000 --content "NGUYEN VAN A chuyen tien DH1709" --json
  recon simulate transfer --va SBR1234567890123 --amount 50000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc, err := a.location()
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				if va != "" {
					v, err := simulatedVA(cmd.Context(), db, va, accountID)
					if err != nil {
						return err
					}
					accountID = v.BankAccountID
					if v.Kind == recon.VAKindBank {
						sub = v.Number
					} else {
						content = strings.TrimSpace(content + " " + v.Number)
					}
					if amount == 0 {
						amount = v.Amount
					}
				}
				switch {
				case accountID == 0:
					return recon.FieldError("bank-account", "--bank-account (or --va) is required")
				case amount == 0:
					return recon.FieldError("amount", "--amount is required (an open virtual account asks for none)")
				}
				acct, err := db.BankAccountByID(cmd.Context(), accountID)
				if err != nil {
					return err
				}
				if ref == "" {
					ref = recon.SimulatedReferenceFrom(a.rand)
				}
				now := a.clock.Now()
				in := []recon.TransactionInput{{
					BankAccountID: acct.ID, TransactionDate: now.In(loc), AmountIn: amount,
					Content: content, ReferenceNumber: ref, SubAccount: sub,
				}}
				tenant, err := db.Tenant(cmd.Context(), acct.CompanyID)
				if err != nil {
					return err
				}
				res, err := recon.Ingest(cmd.Context(), db, tenant.ID, now, in)
				if err != nil {
					return err
				}
				r := res[0]
				return a.print(map[string]any{"id": r.ID, "code": nullable(r.Code), "duplicate": r.Duplicate, "reference_number": ref},
					"transaction %d (reference %s) code %q duplicate %v", r.ID, ref, r.Code, r.Duplicate)
			})
		},
	}
	f := transfer.Flags()
	f.Int64Var(&accountID, "bank-account", 0, "receiving bank account id (required)")
	f.Int64Var(&amount, "amount", 0, "amount in VND (required)")
	f.StringVar(&content, "content", "", "transfer memo, e.g. the order's payment code")
	f.StringVar(&ref, "reference", "", "bank reference (default: a new random one); reuse one to test duplicates")
	f.StringVar(&sub, "sub-account", "", "receiving virtual account number")
	f.StringVar(&va, "va", "", "pay this virtual account of API v2 (a bank number or a memo code): sets the bank account, the sub-account or the memo, and by default the amount")
	transfer.MarkFlagsMutuallyExclusive("va", "sub-account")
	a.addJSONFlag(transfer)
	cmd.AddCommand(transfer, newSimulateRefundSettlementCmd(a))
	return cmd
}

// simulatedVA finds the virtual account --va names: the one of the tenant of
// --bank-account when given, else the only one with the number.
func simulatedVA(ctx context.Context, db *sqlstore.DB, number string, accountID int64) (*recon.VirtualAccount, error) {
	vas, err := db.VirtualAccountsNumbered(ctx, number)
	if err != nil {
		return nil, err
	}
	var found []*recon.VirtualAccount
	for _, v := range vas {
		if accountID == 0 || v.BankAccountID == accountID {
			found = append(found, v)
		}
	}
	switch len(found) {
	case 0:
		return nil, recon.Errorf(recon.ENOTFOUND, "no virtual account %s", number)
	case 1:
		return found[0], nil
	}
	return nil, recon.FieldError("bank-account", "%d companies have a virtual account %s: name its bank account with --bank-account", len(found), number)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func newTransactionsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "transactions", Short: "Maintain stored bank transactions"}
	var (
		tenant tenantFlags
		from   string
	)
	recode := &cobra.Command{
		Use:   "recode",
		Short: "Re-extract payment codes of stored transactions with the current formats",
		Long: `Changing a company's payment-code formats affects new transactions only. recode
re-extracts the code of the company's stored transactions (from a date, or all)
with the formats and paycode setting in force now.`,
		Example: `  recon transactions recode --company 1 --from 2026-01-01 --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var fromDate time.Time
			if from != "" {
				d, err := time.Parse(recon.DateLayout, from)
				if err != nil {
					return fmt.Errorf("--from must be a date in the form YYYY-MM-DD")
				}
				fromDate = d
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				co, err := db.Company(cmd.Context(), tn.ID())
				if err != nil {
					return err
				}
				ext := recon.CompanyExtractor(&co.Config)
				n, err := db.RecodeTransactions(cmd.Context(), tn, fromDate, ext.Extract)
				if err != nil {
					return err
				}
				return a.print(map[string]any{"changed": n}, "%d transaction codes changed", n)
			})
		},
	}
	tenant.add(recode, true, "company id (required)")
	recode.Flags().StringVar(&from, "from", "", "first transaction date to recode, YYYY-MM-DD (default: all)")
	a.addJSONFlag(recode)
	cmd.AddCommand(recode)
	return cmd
}
