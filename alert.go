package recon

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Alerts (docs/dashboard.md, Alerts): the maintenance loop tells a live
// company's people when its notifications keep failing, when its exceptions
// queue grows past a threshold, and once a day what happened the day
// before; by e-mail to the users who want each kind, to the company's chat
// webhook, and always on the dashboard. Each alert is an AlertEvent, made
// once whichever node finds it (its key).

// Alert kinds.
const (
	AlertFailing = "failing" // a target's deliveries keep failing
	AlertQueue   = "queue"   // the exceptions queue is past the threshold
	AlertDaily   = "daily"   // the daily summary
	// AlertDisabled: Recon disabled a target that failed for 3 days
	// (docs/design.md, D7). A user's "failing" switch chooses it too.
	AlertDisabled = "endpoint_disabled"
)

// AlertKinds lists every alert kind.
var AlertKinds = []string{AlertFailing, AlertQueue, AlertDaily, AlertDisabled}

// Chat tools the alerts' chat webhook may be (the payload's shape).
const (
	ChatTelegram = "telegram" // Bot API sendMessage: {"chat_id", "text"}
	ChatSlack    = "slack"    // incoming webhook: {"text"}
	ChatGeneric  = "generic"  // {"kind", "subject", "text"}
)

// ChatKinds lists the chat tools ("" is none).
var ChatKinds = []string{ChatTelegram, ChatSlack, ChatGeneric}

// AlertSettings are a company's alert settings (its live company's, for
// both modes; alerts watch live data only).
type AlertSettings struct {
	Company int64
	// FailingAttempts is how many attempts in a row of a target's
	// deliveries must fail before the failing alert (1 to 100).
	FailingAttempts int
	// QueueThreshold is the number of open exceptions above which the
	// queue alert goes (0: never).
	QueueThreshold int64
	// DailyHour is the hour of the business day (0 to 23) the daily
	// summary goes at, -1 for none.
	DailyHour int
	// ChatKind is the chat tool ("" none), ChatURL its webhook (a
	// secret: Telegram's holds the bot token; shown masked, recorded
	// AuditRotated), ChatID Telegram's chat id.
	ChatKind, ChatURL, ChatID string
}

// DefaultAlertSettings are a company's settings until it saves its own.
func DefaultAlertSettings(company int64) *AlertSettings {
	return &AlertSettings{Company: company, FailingAttempts: 5, QueueThreshold: 50, DailyHour: 8}
}

// Validate checks the settings, with the names of the form's fields;
// checkURL is the target URL check (the SSRF rules of every target).
func (s *AlertSettings) Validate(checkURL func(string) error) error {
	s.ChatURL, s.ChatID = strings.TrimSpace(s.ChatURL), strings.TrimSpace(s.ChatID)
	switch {
	case s.FailingAttempts < 1 || s.FailingAttempts > 100:
		return FieldError("failing_attempts", "failing_attempts must be 1 to 100")
	case s.QueueThreshold < 0 || s.QueueThreshold > 1_000_000:
		return FieldError("queue_threshold", "queue_threshold must be 0 (never) to 1000000")
	case s.DailyHour < -1 || s.DailyHour > 23:
		return FieldError("daily_hour", "daily_hour must be an hour 0 to 23, or -1 for none")
	case s.ChatKind != "" && !slices.Contains(ChatKinds, s.ChatKind):
		return FieldError("chat_kind", "chat_kind must be one of %s, or empty", strings.Join(ChatKinds, ", "))
	case s.ChatKind == "" && s.ChatURL != "":
		return FieldError("chat_kind", "choose the chat tool of the webhook")
	case s.ChatKind != "" && s.ChatURL == "":
		return FieldError("chat_url", "chat_url is required with a chat tool")
	case len(s.ChatURL) > 2048:
		return FieldError("chat_url", "chat_url is at most 2048 characters")
	case s.ChatKind == ChatTelegram && (s.ChatID == "" || len(s.ChatID) > 64 || BadText(s.ChatID, false) != ""):
		return FieldError("chat_id", "chat_id (Telegram's chat id) is required with Telegram, at most 64 characters")
	}
	if s.ChatKind != ChatTelegram {
		s.ChatID = ""
	}
	if s.ChatURL != "" {
		if err := checkURL(s.ChatURL); err != nil {
			return FieldError("chat_url", "chat_url: %v", ErrorMessage(err))
		}
	}
	return nil
}

// AlertPrefs are one user's switches: which alerts they receive by e-mail.
// A user who never chose receives all three.
type AlertPrefs struct {
	UserID                int64
	Failing, Queue, Daily bool
}

// Wants reports whether the user wants alerts of kind.
func (p AlertPrefs) Wants(kind string) bool {
	switch kind {
	case AlertFailing, AlertDisabled:
		return p.Failing
	case AlertQueue:
		return p.Queue
	case AlertDaily:
		return p.Daily
	}
	return false
}

// AlertEvent is one alert: made once per (tenant, kind, key), whichever
// node finds it first, and sent by the node that holds its claim.
type AlertEvent struct {
	ID      int64
	Tenant  TenantID
	Kind    string
	Key     string // what makes it once: "ipn 2026-11-26", "2026-11-25"
	Subject string
	Text    string
	// CreatedAt is when it was found; SentAt when it was sent (zero: not
	// yet, or nowhere to send it but the dashboard).
	CreatedAt, SentAt time.Time
	Attempts          int
	LastError         string
}

// AlertStore keeps alert settings, switches and events.
type AlertStore interface {
	// AlertSettings returns the company's settings, DefaultAlertSettings
	// when it saved none.
	AlertSettings(ctx context.Context, company int64) (*AlertSettings, error)
	// SetAlertSettings stores the company's settings (validated).
	SetAlertSettings(ctx context.Context, s *AlertSettings) error
	// AlertPrefs returns the user's switches (all on when never set).
	AlertPrefs(ctx context.Context, userID int64) (*AlertPrefs, error)
	// SetAlertPrefs stores the user's switches.
	SetAlertPrefs(ctx context.Context, p *AlertPrefs) error
	// ClaimAlert records the event of (tenant, kind, key) and claims it for
	// node until lease; when it exists already, it is claimed only when it
	// is unsent, its last claim has lapsed and it has been tried fewer than
	// MaxAlertAttempts times. ok reports whether node holds the claim.
	ClaimAlert(ctx context.Context, e *AlertEvent, node string, now time.Time, lease time.Duration) (ok bool, err error)
	// FinishAlert ends node's claim of event id: sent at now, or failed
	// with sendErr (then claimable again).
	FinishAlert(ctx context.Context, id int64, node string, now time.Time, sendErr string) error
	// AlertEvents returns the tenant's newest events, up to limit.
	AlertEvents(ctx context.Context, tenant TenantID, limit int) ([]*AlertEvent, error)
	// FailingStreak counts the newest attempts of the tenant's deliveries
	// of kind that failed in a row, up to max, and the time of the newest.
	FailingStreak(ctx context.Context, tenant TenantID, kind string, max int) (int, time.Time, error)
	// AlertCompanies lists the active companies' live ids that may have an
	// alert now: a delivery tried and not delivered (a failing streak), a
	// target Recon disabled, an open exception (the queue), or the daily
	// summary of day due at the business hour and neither sent nor given
	// up. A company with none of them cannot have an alert, so the
	// minute's check costs a statement per company with something to say,
	// not per company (docs/dashboard.md, Alerts).
	AlertCompanies(ctx context.Context, day string, hour int) ([]int64, error)
}

// MaxAlertAttempts bounds how often an alert is tried.
const MaxAlertAttempts = 5

// ChatPayload is the JSON body of an alert for the chat tool kind.
func ChatPayload(kind, chatID string, e *AlertEvent) ([]byte, error) {
	text := e.Subject + "\n" + e.Text
	switch kind {
	case ChatTelegram:
		return json.Marshal(map[string]string{"chat_id": chatID, "text": text})
	case ChatSlack:
		return json.Marshal(map[string]string{"text": text})
	}
	return json.Marshal(map[string]string{"kind": e.Kind, "subject": e.Subject, "text": e.Text})
}
