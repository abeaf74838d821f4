package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/api"
	"recon/orders"
	"recon/sqlstore"
)

func newExceptionsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "exceptions", Short: "The exceptions queue: transfers matching could not settle"}
	cmd.AddCommand(newExceptionsListCmd(a), newExceptionsResolveCmd(a))
	return cmd
}

func newExceptionsListCmd(a *app) *cobra.Command {
	var (
		tenant tenantFlags
		f      recon.ExceptionFilter
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List a company's open (or resolved) exceptions with suggested orders",
		Long: `List the incoming transfers matching could not settle: unmatched (a code or
virtual account naming no order, or no code on an account that receives order
payments), underpaid, overpaid and duplicate; newest first, each with the open
orders it may have been meant for. --after continues from the last id of the
previous page.`,
		Example: `  recon exceptions list --company 1 --kind unmatched --from 2026-03-01 --json
  recon exceptions list --company 1 --test --resolved`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			loc, err := a.location()
			if err != nil {
				return err
			}
			return a.withStore(ctx, func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(ctx, db)
				if err != nil {
					return err
				}
				list, more, err := db.Exceptions(ctx, tn, f)
				if err != nil {
					return err
				}
				suggestions, err := recon.Suggest(ctx, db, tn, list)
				if err != nil {
					return err
				}
				return a.printExceptions(list, more, suggestions, loc, !tenant.test)
			})
		},
	}
	tenant.add(list, true, "company id (required)")
	lf := list.Flags()
	lf.StringVar(&f.Kind, "kind", "", "only this kind: unmatched, underpaid, overpaid or duplicate")
	lf.Int64Var(&f.BankAccountID, "account", 0, "only transfers to this bank account id")
	lf.StringVar(&f.FromDate, "from", "", "first transaction day, YYYY-MM-DD")
	lf.StringVar(&f.ToDate, "to", "", "last transaction day, YYYY-MM-DD (inclusive)")
	lf.BoolVar(&f.Resolved, "resolved", false, "list resolved exceptions instead of open ones")
	lf.IntVar(&f.Limit, "limit", 20, "exceptions per page, 1 to 100")
	lf.Int64Var(&f.After, "after", 0, "the last transaction id of the previous page")
	list.PreRunE = func(*cobra.Command, []string) error {
		if f.Limit < 1 || f.Limit > 100 {
			return errors.New("--limit must be from 1 to 100")
		}
		return nil
	}
	a.addJSONFlag(list)
	return list
}

// printExceptions prints a page of `exceptions list`: each exception with its
// resolution or its suggested orders, and where the next page starts.
func (a *app) printExceptions(list []*recon.Exception, more bool, suggestions [][]*recon.Suggestion, loc *time.Location, live bool) error {
	if a.jsonOut {
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = api.ExceptionJSON(e, suggestions[i], loc, live)
		}
		return a.print(map[string]any{"exceptions": out, "has_more": more}, "")
	}
	if len(list) == 0 {
		return a.none("exceptions")
	}
	for i, e := range list {
		t := e.Transaction
		var sug []string
		for _, s := range suggestions[i] {
			sug = append(sug, fmt.Sprintf("order %d %s (%s)", s.Order.ID, s.Order.InvoiceNumber, strings.Join(s.Reasons, ", ")))
		}
		line := fmt.Sprintf("%d\t%s\t%s\t%d VND\t%s\t%s", t.ID, t.TransactionDate.Format(recon.DateTimeLayout), e.Kind, t.AmountIn, t.Code, e.Reason)
		if r := e.Resolution; r != nil {
			line += fmt.Sprintf("\tresolved: %s by %s at %s: %s", r.Action, r.UserEmail, r.CreatedAt.In(loc).Format(recon.DateTimeLayout), r.Note)
		} else if len(sug) > 0 {
			line += "\tsuggested: " + strings.Join(sug, "; ")
		}
		fmt.Fprintln(a.stdout, line)
	}
	if more {
		fmt.Fprintf(a.stdout, "more: --after %d\n", list[len(list)-1].Transaction.ID)
	}
	return nil
}

func newExceptionsResolveCmd(a *app) *cobra.Command {
	var (
		tenant                           tenantFlags
		order                            int64
		refund, ignore, writeOff, askFor bool
		dup, distinct                    bool
		note, email                      string
		amount                           int64
		receiver                         recon.RefundReceiver
	)
	resolve := &cobra.Command{
		Use:   "resolve <transaction-id>",
		Short: "Resolve an exception by hand, as a user of the company",
		Long: `Resolve an exception: --match applies the transfer to an open order as an
automatic match would (the order is paid and its ORDER_PAID notification is
queued), --refund with --receiver-bin, --receiver-account and --receiver-name
creates a refund of the transfer to that account (--amount, or everything
refundable; docs/api-v2.md, Refunds), --refund alone records that the money
went back outside Recon, --ignore closes it. For an underpaid transfer,
--write-off makes its order paid with what it received and records the
shortfall as written off (ORDER_PAID is queued), and --ask-remainder adds a
virtual account of the order asking for exactly what it lacks (its number is
printed, to send to the payer; the exception stays open: docs/api.md,
Exceptions queue). --note says why; --user names the user of the company who decides
(role Admin, SuperAdmin or Accountant), recorded with the time and the
exception's state before.`,
		Example: `  recon exceptions resolve 1234 --company 1 --match 56 --note "DH10010 is a typo of DH10001" --user ketoan@abc.vn
  recon exceptions resolve 1235 --company 1 --ignore --note "bank interest" --user ketoan@abc.vn --json
  recon exceptions resolve 1236 --company 1 --write-off --note "bank fee taken by the payer's bank" --user ketoan@abc.vn`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			txID, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || txID <= 0 {
				return fmt.Errorf("the transaction id must be a positive integer, not %q", args[0])
			}
			in, err := resolveInput(cmd.Flags().Changed("match"), order, refund, ignore, writeOff, askFor, note, amount, receiver, dup, distinct)
			if err != nil {
				return err
			}
			loc, err := a.location()
			if err != nil {
				return err
			}
			return a.withStore(ctx, func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(ctx, db)
				if err != nil {
					return err
				}
				u, err := companyUser(ctx, db, tenant.company, email)
				if err != nil {
					return err
				}
				if !u.May(recon.ActionResolveExceptions) {
					return fmt.Errorf("user %s (role %s) may not resolve exceptions: it takes role Admin, SuperAdmin or Accountant", u.Email, u.Role)
				}
				var r *recon.ExceptionResolution
				err = cliAudited(ctx, db, tn, u, recon.AuditExceptionDecision, fmt.Sprint("exception ", txID), recon.AuditResolution(in, nil), func(ctx context.Context) (err error) {
					if in.Action == recon.ResolveAskRemainder {
						vas := &orders.Service{Store: db, Clock: a.clock, Rand: a.rand}
						r, err = recon.AskRemainder(ctx, db, vas, tn, txID, in, u, a.clock.Now())
						return err
					}
					r, err = db.ResolveException(ctx, tn, txID, in, u, a.clock.Now())
					return err
				})
				if err != nil {
					return err
				}
				text := fmt.Sprintf("transaction %d resolved: %s by %s at %s", txID, r.Action, r.UserEmail, r.CreatedAt.In(loc).Format(time.DateTime))
				if r.Decision != nil {
					text += fmt.Sprintf("; %s (%s)", r.Decision.Outcome, r.Decision.Reason)
				}
				if r.Action == recon.ResolveWriteOff {
					text += fmt.Sprintf("; %d VND written off, the order is paid", r.Amount)
				}
				if r.VANumber != "" {
					text += fmt.Sprintf("; virtual account %s asks for %d VND (the exception stays open)", r.VANumber, r.Amount)
				}
				if r.RefundID != "" {
					text += "; refund " + r.RefundID + " (recon refunds show " + r.RefundID + ")"
				}
				return a.print(api.ResolutionJSON(r, loc, !tenant.test), "%s", text)
			})
		},
	}
	tenant.add(resolve, true, "company id (required)")
	rf := resolve.Flags()
	rf.Int64Var(&order, "match", 0, "apply the transfer to this open order (its id)")
	rf.BoolVar(&refund, "refund", false, "send the money back: with --receiver-*, a refund; alone, a record that it went back outside Recon")
	rf.Int64Var(&amount, "amount", 0, "--refund with a receiver: how much (default: everything refundable of the transfer)")
	rf.StringVar(&receiver.BankBIN, "receiver-bin", "", "--refund: the payer's bank, its 6-digit NAPAS BIN")
	rf.StringVar(&receiver.AccountNumber, "receiver-account", "", "--refund: the payer's account number")
	rf.StringVar(&receiver.AccountName, "receiver-name", "", "--refund: the payer's account name")
	rf.BoolVar(&ignore, "ignore", false, "close the exception with the note alone")
	rf.BoolVar(&writeOff, "write-off", false, "an underpaid transfer: write off what its order lacks (the order is paid)")
	rf.BoolVar(&askFor, "ask-remainder", false, "an underpaid transfer: a new virtual account of its order for what it lacks")
	rf.BoolVar(&dup, "duplicate", false, "a possible duplicate: the same transfer as its first row (it stays out of totals for good)")
	rf.BoolVar(&distinct, "distinct", false, "a possible duplicate: a transfer of its own (it enters totals and matching now)")
	rf.StringVar(&note, "note", "", fmt.Sprintf("why (required, at most %d bytes)", recon.MaxResolutionNote))
	rf.StringVar(&email, "user", "", "e-mail of the user of the company who decides (required)")
	for _, n := range []string{"note", "user"} {
		_ = resolve.MarkFlagRequired(n)
	}
	a.addJSONFlag(resolve)
	return resolve
}

// resolveInput is the resolution the flags of `exceptions resolve` ask for:
// exactly one of --match (given, with its order), --refund, --ignore,
// --write-off, --ask-remainder, --duplicate and --distinct.
func resolveInput(match bool, order int64, refund, ignore, writeOff, askFor bool, note string, amount int64, receiver recon.RefundReceiver, dup, distinct bool) (recon.ResolveInput, error) {
	in := recon.ResolveInput{Note: note, Amount: amount, Receiver: receiver}
	n := 0
	for _, c := range []struct {
		given  bool
		action string
	}{{match, recon.ResolveMatch}, {refund, recon.ResolveRefund}, {ignore, recon.ResolveIgnore}, {writeOff, recon.ResolveWriteOff}, {askFor, recon.ResolveAskRemainder},
		{dup, recon.ResolveDuplicate}, {distinct, recon.ResolveDistinct}} {
		if c.given {
			n++
			in.Action = c.action
		}
	}
	if n != 1 {
		return in, errors.New("give exactly one of --match ORDER_ID, --refund, --ignore, --write-off, --ask-remainder, --duplicate and --distinct")
	}
	if match {
		in.OrderID = order
	}
	check := in
	if in.Action == recon.ResolveAskRemainder {
		check.VA = &recon.VirtualAccount{} // recon.AskRemainder makes it
	}
	if err := check.Validate(); err != nil {
		return in, describe(err)
	}
	return in, nil
}
