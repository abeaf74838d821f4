package server

import (
	"context"
	"fmt"

	"recon"
	"recon/delivery"
)

// chatPoster sends an alert's chat payload through the delivery client:
// the same SSRF check on the resolved address, no proxy, no redirects, as
// every notification (docs/dashboard.md, Alerts). It signs with a key of
// its own that no one checks: chat tools read no signature.
func chatPoster(c *delivery.Client, clock recon.Clock) func(ctx context.Context, url string, payload []byte) error {
	key := recon.NewSecret()
	return func(ctx context.Context, url string, payload []byte) error {
		t := &recon.Target{URL: url, AuthType: recon.AuthNone, SigningSecret: key, Active: true}
		res := c.Send(ctx, t, &recon.Delivery{Kind: "alert", Event: "ALERT", Payload: payload}, clock.Now())
		if !res.OK() {
			return fmt.Errorf("%s", res.Error(c.Timeout()))
		}
		return nil
	}
}
