package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"recon"
	"recon/api"
	"recon/delivery"
	"recon/ipn"
	"recon/sqlstore"
)

func newMerchantCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "merchant", Short: "Payment-gateway merchant credentials"}
	var tenant tenantFlags
	creds := &cobra.Command{
		Use:   "credentials",
		Short: "Show a company's merchant credentials, creating them the first time",
		Long: `Show the company's payment-gateway credentials: merchant_id and secret_key, the
Basic credentials of /v1/order... (merchant_id:secret_key) and the key that signs
checkout forms. They are created the first time; --rotate replaces the secret.
The secret is stored encrypted under the server's secret key (recon keys --help).
With --test they are the test-mode credentials (merchant_id TEST-..., secret
test_...): orders, payments, IPN settings and notifications of test mode only.`,
		Example: `  recon merchant credentials --company 1 --json
  recon merchant credentials --company 1 --test --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rotate, _ := cmd.Flags().GetBool("rotate")
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				m, err := db.MerchantOf(cmd.Context(), tn)
				if recon.ErrorCode(err) == recon.ENOTFOUND || (err == nil && rotate) {
					if m == nil {
						m = recon.NewMerchant(a.rand, tn, tenant.company)
					} else {
						m.SecretKey = recon.NewMerchantSecret(a.rand, tenant.test)
					}
					err = cliAudited(cmd.Context(), db, tn, nil, recon.AuditMerchantRotate, m.MerchantID, []recon.AuditChange{{Field: "secret_key", After: recon.AuditRotated}},
						func(ctx context.Context) error { return db.SetMerchant(ctx, m) })
				}
				if err != nil {
					return err
				}
				return a.print(map[string]any{"merchant_id": m.MerchantID, "secret_key": m.SecretKey},
					"merchant_id: %s\nsecret_key:  %s", m.MerchantID, m.SecretKey)
			})
		},
	}
	tenant.add(creds, true, "company id (required)")
	creds.Flags().Bool("rotate", false, "replace the secret key")
	a.addJSONFlag(creds)
	cmd.AddCommand(creds)
	return cmd
}

func newIPNCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "ipn", Short: "A merchant's IPN settings"}
	cmd.AddCommand(newTargetSetCmd(a, targetSpec{
		what:  "IPN",
		short: "Set where a company's IPNs go",
		long: `Set the company's IPN target: the URL Recon POSTs its notifications to, which
types it receives, and how it authenticates (SECRET_KEY sends X-Secret-Key). Every
request is also signed with X-Recon-Signature under the target's own signing
secret, which Recon makes when the target is first saved and replaces with
--rotate-signing-secret; a secret is shown in full only when it is made. The
URL must be public HTTPS (http is accepted with --sandbox); internal addresses
are refused in any spelling, and again when each notification is sent.
--notification-types lists the types the target receives (` + strings.Join(recon.IPNTypes, ", ") + `;
docs/api-v2.md, Notifications); without it the target keeps the ones it had,
and a target that never chose receives ` + strings.Join(recon.DefaultIPNTypes, " and ") + `, what v1 always sent.
The rules are those of PUT /v1/ipn.`,
		example: `  recon ipn set --company 1 --url https://shop.example.vn/ipn --auth-type SECRET_KEY --json
  recon ipn set --company 1 --url https://shop.example.vn/ipn --rotate-signing-secret
  recon ipn set --company 1 --url https://shop.example.vn/ipn --notification-types ORDER_PAID,ORDER_PARTIALLY_PAID`,
		kind:  recon.DeliveryIPN,
		store: func(db *sqlstore.DB) ipn.Store { return db },
		types: true,
	}))
	return cmd
}

// targetSpec is what differs between the `set` commands of notification
// targets (recon ipn set, recon hub ipn set): their words, and the store
// that gives ipn.Service, the one implementation of the rules, its target.
type targetSpec struct {
	what, short, long, example string
	kind                       string // recon.DeliveryIPN or recon.DeliveryHubIPN: the target read before and audited
	store                      func(db *sqlstore.DB) ipn.Store
	// types: the target chooses its notification types
	// (--notification-types; the gateway's IPN, not the hub's, whose
	// balance changes have no types).
	types bool
}

func newTargetSetCmd(a *app, spec targetSpec) *cobra.Command {
	var (
		tenant   tenantFlags
		c        ipn.Change
		secret   string
		inactive bool
		ordered  bool
		sandbox  bool
		private  bool
		types    []string
	)
	set := &cobra.Command{
		Use:     "set",
		Short:   spec.short,
		Long:    spec.long,
		Example: spec.example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.Active = !inactive
			if cmd.Flags().Changed("secret") {
				c.SecretKey = &secret
			}
			if cmd.Flags().Changed("ordered") {
				c.Ordered = &ordered
			}
			if spec.types && cmd.Flags().Changed("notification-types") {
				c.NotificationTypes = make([]string, 0, len(types))
				for _, t := range types {
					c.NotificationTypes = append(c.NotificationTypes, strings.TrimSpace(t))
				}
			}
			svc := &ipn.Service{
				CheckURL: func(raw string) error { return delivery.CheckURL(raw, sandbox, private) },
				Blocked:  delivery.IsBlocked,
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				svc.Store = spec.store(db)
				before, _ := db.DeliveryTarget(cmd.Context(), tn.ID(), spec.kind) // nil: none yet
				saved, err := svc.Save(cmd.Context(), tn, c)
				if err == nil {
					err = cliAudited(cmd.Context(), db, tn, nil, recon.AuditIPNUpdate, spec.kind, recon.AuditTargetChanges(before, saved.Target), noChange)
				}
				var re *recon.Error
				if errors.As(err, &re) { // a refused URL carries its reason around the error
					return re
				}
				if err != nil {
					return err
				}
				t := saved.Target
				shown := func(s string, full bool) string {
					if full {
						return s
					}
					return "(unchanged, not shown)"
				}
				if t.AuthType == recon.AuthNone {
					secret = "(none: auth type NONE)"
				} else {
					secret = shown(t.Secret, saved.NewSecret)
				}
				loc, err := a.location()
				if err != nil {
					return err
				}
				text := fmt.Sprintf("%s of company %d%s: %s (%s, active %v, ordered %v)\nsecret_key:     %s\nsigning_secret: %s\nsigning_secret_whsec: %s%s",
					spec.what, tenant.company, modeNote(tenant.test), t.URL, t.AuthType, t.Active, t.Ordered,
					secret, shown(t.SigningSecret, saved.NewSigningSecret), shown(recon.WhsecSecret(t.SigningSecret), saved.NewSigningSecret), previousNote(t, loc))
				if !spec.types {
					return a.print(ipn.TargetJSON(t, saved.NewSecret, saved.NewSigningSecret, loc), "%s", text)
				}
				st, err := recon.ParseIPNSettings(t.Settings)
				if err != nil {
					return err
				}
				return a.print(ipn.JSON(t, saved.NewSecret, saved.NewSigningSecret, loc), "%s\nnotification_types: %s", text, strings.Join(st.Types(), ", "))
			})
		},
	}
	f := set.Flags()
	tenant.add(set, true, "company id (required)")
	f.StringVar(&c.URL, "url", "", spec.what+" URL (required)")
	f.StringVar(&c.AuthType, "auth-type", recon.AuthSecretKey, "SECRET_KEY or NONE")
	f.StringVar(&secret, "secret", "", "the X-Secret-Key secret (default: keep the stored one, or make one with SECRET_KEY)")
	f.BoolVar(&c.RotateSigningSecret, "rotate-signing-secret", false, "replace the signing secret of X-Recon-Signature and webhook-signature (shown once); the old one signs beside it for 24 hours")
	f.BoolVar(&inactive, "inactive", false, "save the settings but send nothing")
	f.BoolVar(&ordered, "ordered", false, "deliver one notification at a time, in the order they were enqueued; a failing one holds back the rest "+
		"until delivered or dead (docs/design.md, D7; default: keep the target's, false for a new one; --ordered=false turns it off)")
	f.BoolVar(&sandbox, "sandbox", false, "accept a plain-http URL (sandbox setups)")
	f.BoolVar(&private, "allow-private-targets", false, "accept loopback and private addresses (tests, self-hosted setups)")
	if spec.types {
		f.StringSliceVar(&types, "notification-types", nil, "the notification types the target receives, comma-separated (default: keep the target's; "+
			strings.Join(recon.DefaultIPNTypes, ",")+" for a new one)")
	}
	_ = set.MarkFlagRequired("url")
	a.addJSONFlag(set)
	return set
}

func newDeliveriesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "deliveries", Short: "Inspect and replay notifications (IPN, webhooks)"}
	cmd.AddCommand(newDeliveriesListCmd(a), newDeliveriesShowCmd(a), newDeliveriesReplayCmd(a), newDeliveriesStatsCmd(a), newDeliveriesTestCmd(a),
		newDeliveriesEnableCmd(a))
	return cmd
}

func newDeliveriesListCmd(a *app) *cobra.Command {
	var (
		tenant tenantFlags
		f      recon.DeliveryFilter
	)
	list := &cobra.Command{
		Use:     "list",
		Short:   "List deliveries, newest first",
		Example: `  recon deliveries list --status dead --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				ds, err := db.Deliveries(cmd.Context(), tn, f)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.print(api.DeliveriesJSON(ds), "")
				}
				if len(ds) == 0 {
					return a.none("notifications")
				}
				for _, d := range ds {
					fmt.Fprintf(a.stdout, "%d\tcompany %d\t%s %s\t%s\tattempts %d\t%s\n", d.ID, d.CompanyID, d.Kind, d.Event, d.Status, d.Attempts, d.LastError)
				}
				return nil
			})
		},
	}
	tenant.add(list, false, "only this company's (default: all, both modes)")
	list.Flags().StringVar(&f.Status, "status", "", "pending, delivered or dead")
	list.Flags().StringVar(&f.Kind, "kind", "", "ipn, webhook or hub_ipn")
	list.Flags().IntVar(&f.Limit, "limit", 50, "how many (at most 500)")
	a.addJSONFlag(list)
	return list
}

func newDeliveriesShowCmd(a *app) *cobra.Command {
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a delivery, its payload and every attempt",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("ID must be a number")
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				d, err := db.Delivery(cmd.Context(), recon.TenantID{}, id)
				if err != nil {
					return err
				}
				attempts, err := db.DeliveryAttempts(cmd.Context(), id)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.print(api.DeliveryJSON(d, attempts), "")
				}
				loc, err := a.location()
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "delivery %d: company %d, %s %s, %s, %d attempts\npayload: %s\n", d.ID, d.CompanyID, d.Kind, d.Event, d.Status, d.Attempts, d.Payload)
				for _, at := range attempts {
					fmt.Fprintf(a.stdout, "  %s  %s  status %d  %s  %s %s\n", at.At.In(loc).Format(recon.DateTimeLayout), at.URL, at.StatusCode, at.Latency.Round(time.Millisecond), at.Error, strings.TrimSpace(at.Response))
				}
				return nil
			})
		},
	}
	a.addJSONFlag(show)
	return show
}

func newDeliveriesReplayCmd(a *app) *cobra.Command {
	var (
		tenant                  tenantFlags
		all, missed             bool
		failedSince, failedKind string
	)
	replay := &cobra.Command{
		Use:     "replay [ID...]",
		Short:   "Send deliveries again now (by id, or every dead one with --dead)",
		Example: `  recon deliveries replay 42 43\n  recon deliveries replay --dead --company 1\n  recon deliveries replay --failed-since "2026-11-24 00:00:00" --company 1\n  recon deliveries replay --missed --company 1 --kind ipn`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if missed {
				if len(args) > 0 || all || failedSince != "" || failedKind == "" {
					return fmt.Errorf("--missed takes --company and --kind only")
				}
				return a.replayMissed(cmd.Context(), &tenant, failedKind)
			}
			if len(args) == 0 && !all && failedSince == "" {
				return fmt.Errorf("name delivery ids, or --dead for every dead one, or --failed-since TIME --company N")
			}
			if failedSince != "" {
				since, err := a.parseLocalTime(failedSince)
				if err != nil {
					return fmt.Errorf("--failed-since: %w", err)
				}
				return a.replayFailed(cmd.Context(), &tenant, since, failedKind)
			}
			return a.replayDeliveries(cmd.Context(), &tenant, args, all)
		},
	}
	replay.Flags().BoolVar(&all, "dead", false, "replay every dead delivery (at most 500)")
	tenant.add(replay, false, "with --dead: only this company's; with --failed-since: required")
	replay.Flags().StringVar(&failedSince, "failed-since", "", `replay every failed delivery (dead, or waiting for a retry) of --company created since this time ("YYYY-MM-DD HH:MM:SS", business time zone), in one statement`)
	replay.Flags().StringVar(&failedKind, "kind", "", "with --failed-since: only this kind (ipn, webhook or hub_ipn); with --missed: the target")
	replay.Flags().BoolVar(&missed, "missed", false, "replay, in their order, what the target of --kind of --company missed while Recon had disabled it (docs/api.md, Endpoint health)")
	a.addJSONFlag(replay)
	return replay
}

// replayFailed is `deliveries replay --failed-since`: every failed delivery
// of the company (of a kind, when given) created since then, in one statement.
func (a *app) replayFailed(ctx context.Context, tenant *tenantFlags, since time.Time, kind string) error {
	return a.withStore(ctx, func(db *sqlstore.DB) error {
		tn, err := tenant.tenant(ctx, db)
		if err != nil {
			return err
		}
		if tn.ID() == 0 {
			return fmt.Errorf("--failed-since needs --company")
		}
		n, err := db.ReplayFailed(ctx, tn, recon.FailedFilter{Kind: kind, Since: since}, a.clock.Now())
		if err != nil {
			return err
		}
		return a.print(map[string]any{"replayed": n}, "%d failed deliveries queued again", n)
	})
}

// replayDeliveries is `deliveries replay [ID...] [--dead]`: the deliveries
// named, and with all every dead one (of the company, when given).
func (a *app) replayDeliveries(ctx context.Context, tenant *tenantFlags, args []string, all bool) error {
	return a.withStore(ctx, func(db *sqlstore.DB) error {
		var ids []int64
		for _, s := range args {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a delivery id", s)
			}
			ids = append(ids, id)
		}
		if all {
			tn, err := tenant.tenant(ctx, db)
			if err != nil {
				return err
			}
			ds, err := db.Deliveries(ctx, tn, recon.DeliveryFilter{Status: recon.DeliveryDead, Limit: 500})
			if err != nil {
				return err
			}
			for _, d := range ds {
				ids = append(ids, d.ID)
			}
		}
		for _, id := range ids {
			if err := db.ReplayDelivery(ctx, recon.TenantID{}, id, a.clock.Now()); err != nil {
				return err
			}
		}
		return a.print(map[string]any{"replayed": ids}, "%d deliveries queued again", len(ids))
	})
}

func newDeliveriesStatsCmd(a *app) *cobra.Command {
	var (
		statsSince  string
		statsTenant tenantFlags
	)
	stats := &cobra.Command{
		Use:     "stats",
		Short:   "Per kind of notification: counts by state, attempts, success rate, latency p50/p95",
		Example: `  recon deliveries stats --company 1 --since "2026-11-01 00:00:00"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := statsTenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				since := a.clock.Now().Add(-7 * 24 * time.Hour)
				if statsSince != "" {
					if since, err = a.parseLocalTime(statsSince); err != nil {
						return fmt.Errorf("--since: %w", err)
					}
				}
				list, err := db.DeliveryTargetStats(cmd.Context(), tn, since, recon.MaxStatsDeliveries)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.print(api.TargetStatsJSON(list), "")
				}
				w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "KIND\tDELIVERED\tPENDING\tFAILING\tDEAD\tATTEMPTS\tSUCCESS\tP50\tP95")
				for _, s := range list {
					fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%s\t%s\n", s.Kind, s.Delivered, s.Pending, s.Failing, s.Dead, s.Attempts,
						100*s.SuccessRate(), s.LatencyP50.Round(time.Millisecond), s.LatencyP95.Round(time.Millisecond))
				}
				return w.Flush()
			})
		},
	}
	stats.Flags().StringVar(&statsSince, "since", "", `deliveries created since ("YYYY-MM-DD HH:MM:SS"; default: the last 7 days)`)
	statsTenant.add(stats, true, "company id (required)")
	a.addJSONFlag(stats)
	return stats
}

func newDeliveriesTestCmd(a *app) *cobra.Command {
	var testKind string
	var testTenant tenantFlags
	test := &cobra.Command{
		Use:   "test",
		Short: "Send a test notification (TEST_NOTIFICATION) to the company's active target of a kind",
		Long: `Enqueue a test notification to the company's active target of the kind, whatever its
event filter, signed like every notification: a merchant checks its endpoint, secret
and signature check with it. In test mode without a target it waits for recon listen.`,
		Example: `  recon deliveries test --company 1 --kind ipn`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := testTenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				d, err := db.SendTestNotification(cmd.Context(), tn, testKind)
				if err != nil {
					return err
				}
				return a.print(api.DeliveriesJSON([]*recon.Delivery{d})[0], "test notification %d enqueued (%s)", d.ID, d.Kind)
			})
		},
	}
	testTenant.add(test, true, "company id (required)")
	test.Flags().StringVar(&testKind, "kind", recon.DeliveryIPN, "ipn, webhook or hub_ipn")
	a.addJSONFlag(test)
	return test
}

func newReportCmd(a *app) *cobra.Command {
	var (
		tenant    tenantFlags
		from, to  string
		accountID int64
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Reconciliation report: matched, unmatched, underpaid, overpaid, duplicate",
		Long: `Count a company's incoming transactions by match outcome over a date range
(inclusive days, default the last 30, at most 366), and list the unmatched and
underpaid ones; then the refunds requested in the range (API v2), by status; then,
for each bank account (or the one of --bank-account) and day, the bank's balance
(the closing of a statement ending that day), Recon's balance at the end of the
day and the difference with its causes (docs/dashboard.md, Report).`,
		Example: `  recon report --company 1 --from 2026-11-01 --to 2026-11-21 --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc, err := a.location()
			if err != nil {
				return err
			}
			if to == "" {
				to = a.clock.Now().In(loc).Format(recon.DateLayout)
			}
			if from == "" {
				t, err := time.Parse(recon.DateLayout, to)
				if err != nil {
					return fmt.Errorf("--to must be a date in the form YYYY-MM-DD")
				}
				from = t.AddDate(0, 0, -29).Format(recon.DateLayout)
			}
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(cmd.Context(), db)
				if err != nil {
					return err
				}
				rep, err := db.Reconciliation(cmd.Context(), tn, from, to)
				if err != nil {
					return err
				}
				refunds, err := db.RefundTotals(cmd.Context(), tn, from, to, loc)
				if err != nil {
					return err
				}
				balances, err := db.DayBalances(cmd.Context(), tn, accountID, from, to)
				if err != nil {
					return err
				}
				if a.jsonOut {
					out := api.ReportJSON(rep, !tenant.test)
					out["refunds"] = api.RefundTotalsJSON(refunds) // as GET /api/v1/reconciliation
					out["balances"] = api.DayBalancesJSON(balances)
					return a.print(out, "")
				}
				fmt.Fprintf(a.stdout, "Reconciliation of company %d%s, %s to %s\n", tenant.company, modeNote(tenant.test), from, to)
				for _, o := range []string{recon.MatchCaptured, recon.MatchUnderpaid, recon.MatchOverpaid, recon.MatchDuplicate, recon.MatchNone} {
					fmt.Fprintf(a.stdout, "  %-10s %6d  %16d VND\n", o, rep.Counts[o], rep.Amounts[o])
				}
				// API v2's outcomes (virtual accounts), when there are any.
				for _, o := range []string{recon.MatchPartial, recon.MatchVAInactive} {
					if rep.Counts[o] > 0 {
						fmt.Fprintf(a.stdout, "  %-10s %6d  %16d VND\n", o, rep.Counts[o], rep.Amounts[o])
					}
				}
				// The refunds requested in the range (docs/dashboard.md, Report).
				n, held, _ := refunds.Held()
				fmt.Fprintf(a.stdout, "  %-10s %6d  %16d VND  (refunded or being refunded)\n", "refunds", n, held)
				for _, st := range recon.RefundStatuses {
					if refunds.Counts[st] > 0 {
						fmt.Fprintf(a.stdout, "    %-16s %6d  %16d VND\n", st, refunds.Counts[st], refunds.Amounts[st])
					}
				}
				for _, t := range rep.Unmatched {
					fmt.Fprintf(a.stdout, "unmatched  %d  %s  %d VND  %s\n", t.ID, t.TransactionDate.Format(recon.DateTimeLayout), t.AmountIn, t.Content)
				}
				for _, d := range rep.Underpaid {
					fmt.Fprintf(a.stdout, "underpaid  transaction %d  %s\n", d.TransactionID, d.Reason)
				}
				// The balances: the accountant's question, day by day.
				for _, l := range balances {
					if l.BankBalance == nil && l.ReconBalance == nil {
						continue
					}
					fmt.Fprintf(a.stdout, "balance  account %d %s  %s  bank %s  Recon %s", l.BankAccountID, l.AccountNumber, l.Date, balanceText(l.BankBalance), balanceText(l.ReconBalance))
					if l.Difference != nil {
						fmt.Fprintf(a.stdout, "  difference %+d VND (statement import %d)", *l.Difference, l.ImportID)
					}
					for _, c := range l.Causes {
						fmt.Fprintf(a.stdout, "  %s %d rows %+d VND", c.Kind, c.Count, c.Effect)
					}
					fmt.Fprintln(a.stdout)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenant.add(cmd, true, "company id (required)")
	f.StringVar(&from, "from", "", "first day, YYYY-MM-DD (default 29 days before --to)")
	f.StringVar(&to, "to", "", "last day, YYYY-MM-DD (default today)")
	f.Int64Var(&accountID, "bank-account", 0, "the balances of this bank account only (default every account)")
	a.addJSONFlag(cmd)
	return cmd
}

// previousNote says, on a line of its own, until when the signing secret a
// rotation replaced still signs (docs/design.md, D7, "Standard Webhooks."),
// or nothing when none does.
func previousNote(t *recon.Target, loc *time.Location) string {
	until := t.PreviousUntilText(loc)
	if until == "" {
		return ""
	}
	return fmt.Sprintf("\nprevious signing secret: still signs beside the new one until %s (%s); verify with either until then", until, loc)
}
