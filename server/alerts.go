package server

import (
	"context"
	"fmt"

	"recon"
	"recon/alerts"
	"recon/delivery"
	"recon/mail"
)

// alertMailer is the alerts' e-mail through the server's SMTP sender; nil
// without one (the alerts show on the dashboard, docs/dashboard.md, Alerts).
func alertMailer(m mail.Sender) alerts.Mailer {
	if m == nil {
		return nil
	}
	return mailer{m}
}

type mailer struct{ mail.Sender }

func (m mailer) SendMail(ctx context.Context, to, subject, text string) error {
	return m.Send(ctx, mail.Message{To: to, Subject: subject, Text: text})
}

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
