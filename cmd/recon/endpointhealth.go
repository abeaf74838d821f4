package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"recon"
	"recon/sqlstore"
)

// Endpoint health at the command line (docs/design.md, D7; docs/api.md,
// Endpoint health): `recon deliveries enable` re-enables a target Recon
// disabled (with --replay, and what it missed), `recon deliveries replay
// --missed` replays what it missed.

func newDeliveriesEnableCmd(a *app) *cobra.Command {
	var (
		tenant tenantFlags
		kind   string
		replay bool
	)
	cmd := &cobra.Command{
		Use:     "enable",
		Short:   "Re-enable a notification target (one Recon disabled after 3 days of failures, or any inactive one)",
		Example: "  recon deliveries enable --company 1 --kind ipn --replay",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withStore(ctx, func(db *sqlstore.DB) error {
				tn, err := tenant.tenant(ctx, db)
				if err != nil {
					return err
				}
				before, err := db.TargetHealth(ctx, tn, kind)
				if err != nil {
					return err
				}
				changes := []recon.AuditChange{{Field: "active", Before: fmt.Sprint(before.Active), After: "true"}}
				if replay {
					changes = append(changes, recon.AuditChange{Field: "replay", After: fmt.Sprint(before.Held)})
				}
				var n int64
				err = cliAudited(ctx, db, tn, nil, recon.AuditTargetEnabled, kind+" "+recon.TargetHost(before.URL), changes, func(ctx context.Context) error {
					n, err = db.EnableTarget(ctx, tn, kind, replay, a.clock.Now())
					return err
				})
				if err != nil {
					return err
				}
				return a.print(map[string]any{"kind": kind, "active": true, "replayed": n}, "the %s target is active; %d missed notifications queued again", kind, n)
			})
		},
	}
	tenant.add(cmd, true, "the company")
	cmd.Flags().StringVar(&kind, "kind", "", "ipn, webhook or hub_ipn")
	_ = cmd.MarkFlagRequired("kind")
	cmd.Flags().BoolVar(&replay, "replay", false, "also send again, in their order, the notifications held while it was disabled")
	a.addJSONFlag(cmd)
	return cmd
}

// replayMissed is `deliveries replay --missed`.
func (a *app) replayMissed(ctx context.Context, tenant *tenantFlags, kind string) error {
	return a.withStore(ctx, func(db *sqlstore.DB) error {
		tn, err := tenant.tenant(ctx, db)
		if err != nil {
			return err
		}
		if tn.ID() == 0 {
			return fmt.Errorf("--missed needs --company and --kind")
		}
		n, err := db.ReplayMissed(ctx, tn, kind, a.clock.Now())
		if err != nil {
			return err
		}
		return a.print(map[string]any{"replayed": n}, "%d missed notifications queued again", n)
	})
}
