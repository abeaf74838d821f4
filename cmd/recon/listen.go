package main

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon/listen"
)

func newListenCmd(a *app) *cobra.Command {
	var f listen.Config
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive the test-mode notifications of a company on this machine",
		Long: `Open one outbound, long-lived connection to a Recon server with the company's
test-mode merchant credentials (recon merchant credentials --company ID --test)
and receive every notification its test mode produces (IPNs, and hub events),
with the body and the headers a target would get, X-Recon-Signature included.
Each is POSTed to --forward-to, and the local answer (status, latency, an
excerpt of the body) is sent back to the server, which records it as an
attempt in the delivery log: a 2xx delivers the notification, anything else
leaves it pending. No public URL and no open port are needed here.

The connection is made again after a drop; notifications wait in the outbox
until answered, so none is lost meanwhile. Several listeners may attach: each
gets every notification (at most 5 connections per credential on each server
node). The signing secret to verify X-Recon-Signature with is printed when the
connection is made. The server checks the credentials and the company again
every few seconds and before it sends notifications: when they were rotated
or the company was made inactive it closes the stream, and recon listen
prints why and exits with an error. Stop with Ctrl-C.`,
		Example: `  recon listen --server http://localhost:8080 --merchant-id TEST-MC1_ab12 --merchant-secret test_... --forward-to http://localhost:3000/ipn
  recon listen --server https://recon.example.vn --merchant-id TEST-MC1_ab12 --merchant-secret test_... --forward-to http://localhost:3000/ipn --events ORDER_PAID`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fwd, err := url.Parse(f.ForwardTo)
			if err != nil || (fwd.Scheme != "http" && fwd.Scheme != "https") || fwd.Host == "" {
				return fmt.Errorf("--forward-to must be an absolute http(s) URL, such as http://localhost:3000/ipn")
			}
			if _, err := url.Parse(f.Server); err != nil || !strings.HasPrefix(f.Server, "http") {
				return fmt.Errorf("--server must be the Recon server's base URL, such as http://localhost:8080")
			}
			loc, err := a.location()
			if err != nil {
				return err
			}
			return (&listen.Listener{Config: f, Out: a.stdout, ErrOut: a.stderr, Clock: a.clock, Location: loc}).Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Server, "server", "http://localhost:8080", "base URL of the Recon server")
	fl.StringVar(&f.MerchantID, "merchant-id", "", "the company's test-mode merchant id, TEST-... (required)")
	fl.StringVar(&f.Secret, "merchant-secret", "", "its secret key, test_... (required)")
	fl.StringVar(&f.ForwardTo, "forward-to", "", "local URL each notification is POSTed to (required)")
	fl.StringVar(&f.Events, "events", "", "only these events, comma-separated (default: all)")
	fl.DurationVar(&f.Timeout, "forward-timeout", 30*time.Second, "how long the local URL has to answer")
	for _, n := range []string{"merchant-id", "merchant-secret", "forward-to"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}
