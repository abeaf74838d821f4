package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/apiv2"
	"recon/refunds"
	"recon/sqlstore"
)

// Refunds (docs/api-v2.md, Refunds) from the command line: list, show,
// approve, reject, cancel and the approval threshold, through the same
// refunds.Service as API v2 and the dashboard, acting as a user of the
// company (--user), whose role the service checks as it checks a token's.

func newRefundsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "refunds", Short: "A company's refunds: list, show, approve, reject, cancel, the approval threshold"}
	cmd.AddCommand(newRefundsListCmd(a), newRefundsShowCmd(a),
		newRefundsChangeCmd(a, "approve", "Approve a refund waiting for approval, as an Admin or SuperAdmin other than its requester"),
		newRefundsChangeCmd(a, "reject", "Reject a refund waiting for approval, as an Admin or SuperAdmin other than its requester"),
		newRefundsChangeCmd(a, "cancel", "Cancel a refund whose money has not left (pending_approval or pending)"),
		newRefundsThresholdCmd(a))
	return cmd
}

// refundsService is the service over db as a server runs it: the sandbox
// payout connector for test tenants (the server's loop sends its payouts).
func (a *app) refundsService(db *sqlstore.DB, loc *time.Location) *refunds.Service {
	sb := &refunds.Sandbox{Store: db, Clock: a.clock, Location: loc}
	return &refunds.Service{Store: db, Clock: a.clock, Location: loc, Test: sb}
}

// withRefunds runs fn with what every refunds subcommand needs: the service
// over the store (refundsService), the caller the CLI acts as
// (refundCaller: the company's user with the e-mail address, or an operator
// who reads when email is "") and the business time zone.
func (a *app) withRefunds(ctx context.Context, tenant *tenantFlags, email string, fn func(svc *refunds.Service, c *recon.Caller, loc *time.Location) error) error {
	loc, err := a.location()
	if err != nil {
		return err
	}
	return a.withStore(ctx, func(db *sqlstore.DB) error {
		tn, err := tenant.tenant(ctx, db)
		if err != nil {
			return err
		}
		c, err := refundCaller(ctx, db, tn, tenant.company, email)
		if err != nil {
			return err
		}
		return fn(a.refundsService(db, loc), c, loc)
	})
}

// refundCaller is the caller the CLI acts as: the company's user with the
// e-mail address (users belong to the company, also for its test data), or
// an operator who reads when email is "".
func refundCaller(ctx context.Context, db *sqlstore.DB, tn recon.TenantID, company int64, email string) (*recon.Caller, error) {
	c := &recon.Caller{Tenant: tn, ClientID: "cli"}
	if email == "" {
		c.User = &recon.User{Company: company, Role: recon.RoleAdmin, Email: "operator"} // reading only
		return c, nil
	}
	u, err := companyUser(ctx, db, company, email)
	if err != nil {
		return nil, err
	}
	c.User = u
	return c, nil
}

// companyUser is the user of the company with the e-mail address, whom a
// command acts as (users belong to the company itself, also for its test
// data).
func companyUser(ctx context.Context, db *sqlstore.DB, company int64, email string) (*recon.User, error) {
	u, err := db.UserByEmail(ctx, company, email)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, fmt.Errorf("no user %s in company %d", email, company)
	}
	return u, err
}

func (a *app) printRefund(res *refunds.Result, loc *time.Location) error {
	r := res.Refund
	text := fmt.Sprintf("refund %s\t%s\t%d VND\t%s\treceiver %s %s (%s)", r.ID, r.Status, r.Amount, r.Reference,
		r.Receiver.BankBIN, r.Receiver.AccountNumber, r.Receiver.AccountName)
	if r.FailureReason != "" {
		text += "\tfailed: " + r.FailureReason
	}
	if in := res.Instructions; in != nil {
		text += fmt.Sprintf("\nsend %d VND from bank account %d to %s %s (%s) with the memo %s", in.Amount, in.BankAccountID,
			in.Receiver.BankBIN, in.Receiver.AccountNumber, in.Receiver.AccountName, in.Memo)
		if in.QR != "" {
			text += "\nVietQR: " + in.QR
		}
	}
	return a.print(apiv2.RefundJSON(res, loc), "%s", text)
}

func newRefundsListCmd(a *app) *cobra.Command {
	var (
		tenant tenantFlags
		f      recon.RefundFilter
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List a company's refunds, newest first",
		Example: `  recon refunds list --company 1 --status pending_approval
  recon refunds list --company 1 --test --order 42 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withRefunds(ctx, &tenant, "", func(svc *refunds.Service, c *recon.Caller, loc *time.Location) error {
				list, total, err := svc.List(ctx, c, f)
				if err != nil {
					return err
				}
				if a.jsonOut {
					out := make([]any, len(list))
					for i, res := range list {
						out[i] = apiv2.RefundJSON(res, loc)
					}
					return a.print(map[string]any{"refunds": out, "total": total, "page": f.Page, "per_page": f.PerPage}, "")
				}
				if len(list) == 0 && total == 0 {
					return a.none("refunds")
				}
				for _, res := range list {
					r := res.Refund
					fmt.Fprintf(a.stdout, "%s\t%s\t%s\t%d VND\t%s\torder %d\ttransaction %d\n", r.ID, r.CreatedAt.In(loc).Format(time.DateTime),
						r.Status, r.Amount, r.Reference, r.OrderID, r.TransactionID)
				}
				fmt.Fprintf(a.stdout, "%d of %d\n", len(list), total)
				return nil
			})
		},
	}
	tenant.add(list, true, "company id (required)")
	lf := list.Flags()
	lf.Int64Var(&f.OrderID, "order", 0, "only the refunds of this order (its id)")
	lf.Int64Var(&f.TransactionID, "transaction", 0, "only the refunds requested for or drawing on this transaction")
	lf.StringVar(&f.Status, "status", "", "only this status: pending_approval, pending, processing, succeeded, failed, rejected or cancelled")
	lf.StringVar(&f.From, "from", "", "first day created, YYYY-MM-DD")
	lf.StringVar(&f.To, "to", "", "last day created, YYYY-MM-DD (inclusive)")
	lf.IntVar(&f.Page, "page", 1, "page, from 1")
	lf.IntVar(&f.PerPage, "per-page", 20, "refunds per page, 1 to 100")
	list.PreRunE = func(*cobra.Command, []string) error {
		if f.Page < 1 || f.PerPage < 1 || f.PerPage > 100 {
			return errors.New("--page must be from 1 and --per-page from 1 to 100")
		}
		return nil
	}
	a.addJSONFlag(list)
	return list
}

func newRefundsShowCmd(a *app) *cobra.Command {
	var tenant tenantFlags
	show := &cobra.Command{
		Use:     "show <refund-id>",
		Short:   "Show a refund, and what to send while nobody sends it",
		Example: `  recon refunds show 0b6f3c1e-8d2a-4c55-9a1e-2f4d6b8c0a11 --company 1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withRefunds(ctx, &tenant, "", func(svc *refunds.Service, c *recon.Caller, loc *time.Location) error {
				res, err := svc.Get(ctx, c, args[0])
				if err != nil {
					return err
				}
				return a.printRefund(res, loc)
			})
		},
	}
	tenant.add(show, true, "company id (required)")
	a.addJSONFlag(show)
	return show
}

func newRefundsChangeCmd(a *app, action, short string) *cobra.Command {
	var (
		tenant tenantFlags
		email  string
	)
	change := &cobra.Command{
		Use:     action + " <refund-id>",
		Short:   short,
		Example: fmt.Sprintf(`  recon refunds %s 0b6f3c1e-8d2a-4c55-9a1e-2f4d6b8c0a11 --company 1 --user ketoan@abc.vn`, action),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withRefunds(ctx, &tenant, email, func(svc *refunds.Service, c *recon.Caller, loc *time.Location) error {
				fn := map[string]func(context.Context, *recon.Caller, string) (*refunds.Result, error){
					"approve": svc.Approve, "reject": svc.Reject, "cancel": svc.Cancel}[action]
				res, err := fn(ctx, c, args[0])
				if db, ok := svc.Store.(recon.AuditAppender); ok && err == nil {
					audited := map[string]string{"approve": recon.AuditRefundApprove, "reject": recon.AuditRefundReject, "cancel": recon.AuditRefundCancel}[action]
					err = cliAudited(ctx, db, c.Tenant, c.User, audited, "refund "+res.Refund.ID, []recon.AuditChange{{Field: "status", After: res.Refund.Status}}, noChange)
				}
				if err != nil {
					return err
				}
				return a.printRefund(res, loc)
			})
		},
	}
	tenant.add(change, true, "company id (required)")
	change.Flags().StringVar(&email, "user", "", "e-mail of the user of the company who acts (required)")
	_ = change.MarkFlagRequired("user")
	a.addJSONFlag(change)
	return change
}

func newRefundsThresholdCmd(a *app) *cobra.Command {
	var (
		tenant tenantFlags
		set    int64
		email  string
	)
	th := &cobra.Command{
		Use:   "threshold",
		Short: "Show or set (--set VND, 0 for none) the refund approval threshold: a refund of that amount or more waits for a second person",
		Example: `  recon refunds threshold --company 1
  recon refunds threshold --company 1 --set 5000000 --user admin@abc.vn`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			setting := cmd.Flags().Changed("set")
			if setting && email == "" {
				return errors.New("--set needs --user: an Admin or SuperAdmin of the company")
			}
			return a.withRefunds(ctx, &tenant, email, func(svc *refunds.Service, c *recon.Caller, _ *time.Location) error {
				if setting {
					db, _ := svc.Store.(recon.AuditAppender)
					err := cliAudited(ctx, db, c.Tenant, c.User, recon.AuditRefundThreshold, "", []recon.AuditChange{{Field: "refund_approval_threshold", After: strconv.FormatInt(set, 10)}},
						func(ctx context.Context) error { return svc.SetThreshold(ctx, c, set) })
					if err != nil {
						return err
					}
				}
				v, err := svc.Threshold(ctx, c)
				if err != nil {
					return err
				}
				var out any = v
				text := fmt.Sprintf("refund approval threshold: %d VND", v)
				if v == 0 {
					out, text = nil, "refund approval threshold: none"
				}
				return a.print(map[string]any{"refund_approval_threshold": out}, "%s", text)
			})
		},
	}
	tenant.add(th, true, "company id (required)")
	th.Flags().Int64Var(&set, "set", 0, "the new threshold in VND (0: none)")
	th.Flags().StringVar(&email, "user", "", "e-mail of the Admin or SuperAdmin who sets it")
	a.addJSONFlag(th)
	return th
}

// newSimulateRefundSettlementCmd plays the bank for a refund: its outgoing
// transfer through the ingestion pipeline (refunds.Service.SimulateSettlement).
func newSimulateRefundSettlementCmd(a *app) *cobra.Command {
	var tenant tenantFlags
	sim := &cobra.Command{
		Use:   "refund-settlement <refund-id>",
		Short: "Simulate a refund's outgoing transfer, which settles it",
		Long: `Simulate the outgoing transfer of a refund, as the bank feed would report it:
from the refund's bank account, of its amount, with its reference in the memo
and the bank reference RF<reference> (so simulating twice stores it once).
It goes through the same ingestion pipeline as every way in: a pending or
processing refund succeeds; any other is queued as a refund_transfer exception
(docs/api-v2.md, How a refund settles).`,
		Example: `  recon simulate refund-settlement 0b6f3c1e-8d2a-4c55-9a1e-2f4d6b8c0a11 --company 1 --test --json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withRefunds(ctx, &tenant, "", func(svc *refunds.Service, c *recon.Caller, loc *time.Location) error {
				r, tx, err := svc.SimulateSettlement(ctx, c.Tenant, args[0])
				if err != nil {
					return err
				}
				return a.print(map[string]any{"refund": apiv2.RefundJSON(&refunds.Result{Refund: r, Instructions: recon.InstructionsOf(r)}, loc),
					"transaction": map[string]any{"id": tx.ID, "duplicate": tx.Duplicate}},
					"transaction %d (duplicate %v): refund %s is %s", tx.ID, tx.Duplicate, r.ID, r.Status)
			})
		},
	}
	tenant.add(sim, true, "company id (required)")
	a.addJSONFlag(sim)
	return sim
}
