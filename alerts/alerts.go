// Package alerts is the service of alerts (docs/dashboard.md, Alerts): it
// watches each active company's live data from the server's maintenance
// loop — a target's notifications failing attempt after attempt, the
// exceptions queue past the company's threshold, and once a day the day
// before's summary — and tells the company: by e-mail to each user who
// wants that kind of alert, to the company's chat webhook (Telegram,
// Slack, or a generic JSON), and always on the dashboard. Each alert is a
// recon.AlertEvent made once per (tenant, kind, key) whichever node finds it
// and sent by the node that holds its claim. No HTTP.
package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"recon"
)

// Store is what the service needs of storage.
type Store interface {
	recon.AlertStore
	Attention(ctx context.Context, tenant recon.TenantID) (*recon.Attention, error)
	DayFlows(ctx context.Context, tenant recon.TenantID, from, to string) ([]recon.DayFlow, error)
	// TargetHealths is the health of the tenant's targets (docs/design.md, D7).
	TargetHealths(ctx context.Context, tenant recon.TenantID) ([]*recon.TargetHealth, error)
	Users(ctx context.Context, companyID int64, offset, limit int) ([]*recon.User, int64, error)
}

// Mailer sends one e-mail of plain text (the server's SMTP sender).
type Mailer interface {
	SendMail(ctx context.Context, to, subject, text string) error
}

// Service finds and sends alerts. Fill the fields; Mail and Post nil leave
// the alerts on the dashboard only.
type Service struct {
	Store Store
	// Mail sends the e-mails (nil: no SMTP configured).
	Mail Mailer
	// Post sends a chat webhook's payload to its URL through the server's
	// SSRF-checked client (nil: no chat).
	Post     func(ctx context.Context, url string, payload []byte) error
	Clock    recon.Clock
	Location *time.Location // business time zone (default UTC)
	// Node names this node in its claims; Lease is how long a claim holds
	// (default a minute).
	Node  string
	Lease time.Duration
	// Every spaces Tick's runs (default a minute).
	Every  time.Duration
	Logger *slog.Logger

	mu   sync.Mutex
	last time.Time
}

// Tick runs Run when Every has passed since the last run: the maintenance
// loop's step.
func (s *Service) Tick(ctx context.Context, now time.Time) (int, error) {
	every := s.Every
	if every <= 0 {
		every = time.Minute
	}
	s.mu.Lock()
	if !s.last.IsZero() && now.Sub(s.last) < every && now.After(s.last) {
		s.mu.Unlock()
		return 0, nil
	}
	s.last = now
	s.mu.Unlock()
	return s.Run(ctx, now)
}

// Run checks the active companies that may have an alert at now
// (AlertCompanies) and sends the alerts it finds (and those whose sending
// failed before), each once; it returns how many it sent. A company's
// failure does not stop the others'.
func (s *Service) Run(ctx context.Context, now time.Time) (int, error) {
	local := now.In(s.loc())
	ids, err := s.Store.AlertCompanies(ctx, summaryDay(local), local.Hour())
	if err != nil {
		return 0, err
	}
	var sent int
	var errs []error
	for _, id := range ids {
		n, err := s.runCompany(ctx, id, now)
		sent += n
		if err != nil {
			errs = append(errs, fmt.Errorf("company %d: %w", id, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return sent, errors.Join(errs...)
}

// summaryDay is the day the daily summary sent at local tells of: the
// day before.
func summaryDay(local time.Time) string { return local.AddDate(0, 0, -1).Format(time.DateOnly) }

func (s *Service) loc() *time.Location {
	if s.Location == nil {
		return time.UTC
	}
	return s.Location
}

// Facts of an event, kept as its text (JSON) and rendered in each
// language by Message.
type facts map[string]string

func (s *Service) runCompany(ctx context.Context, company int64, now time.Time) (int, error) {
	settings, err := s.Store.AlertSettings(ctx, company)
	if err != nil {
		return 0, err
	}
	tenant := recon.LiveTenant(company)
	local := now.In(s.loc())
	today := local.Format(time.DateOnly)
	var events []*recon.AlertEvent
	add := func(kind, key string, f facts) {
		text, _ := json.Marshal(f)
		e := &recon.AlertEvent{Tenant: tenant, Kind: kind, Key: key, Text: string(text)}
		e.Subject, _ = Message("vi", e)
		events = append(events, e)
	}
	for _, kind := range []string{recon.DeliveryIPN, recon.DeliveryWebhook} {
		n, newest, err := s.Store.FailingStreak(ctx, tenant, kind, settings.FailingAttempts)
		if err != nil {
			return 0, err
		}
		if n >= settings.FailingAttempts {
			add(recon.AlertFailing, kind+" "+today, facts{"target": kind, "attempts": strconv.Itoa(n), "at": newest.In(s.loc()).Format("2006-01-02 15:04")})
		}
	}
	// A target Recon disabled (docs/design.md, D7): once per disable.
	healths, err := s.Store.TargetHealths(ctx, tenant)
	if err != nil {
		return 0, err
	}
	for _, h := range healths {
		if h.DisabledByRecon() {
			add(recon.AlertDisabled, h.Kind+" "+h.DisabledAt.UTC().Format(time.RFC3339), facts{"target": h.Kind, "url": recon.TargetHost(h.URL),
				"since": h.FailingSince.In(s.loc()).Format("2006-01-02 15:04"), "at": h.DisabledAt.In(s.loc()).Format("2006-01-02 15:04"),
				"held": strconv.FormatInt(h.Held, 10)})
		}
	}
	var att *recon.Attention
	if settings.QueueThreshold > 0 || settings.DailyHour >= 0 {
		if att, err = s.Store.Attention(ctx, tenant); err != nil {
			return 0, err
		}
	}
	if settings.QueueThreshold > 0 && att.OpenExceptions > settings.QueueThreshold {
		add(recon.AlertQueue, today, facts{"open": strconv.FormatInt(att.OpenExceptions, 10), "threshold": strconv.FormatInt(settings.QueueThreshold, 10)})
	}
	if settings.DailyHour >= 0 && local.Hour() >= settings.DailyHour {
		day := summaryDay(local)
		flows, err := s.Store.DayFlows(ctx, tenant, day, day)
		if err != nil {
			return 0, err
		}
		var f recon.DayFlow
		if len(flows) > 0 {
			f = flows[0]
		}
		add(recon.AlertDaily, day, facts{"day": day, "in": strconv.FormatInt(f.In, 10), "in_count": strconv.FormatInt(f.InCount, 10),
			"matched": strconv.FormatInt(f.Matched, 10), "matched_count": strconv.FormatInt(f.MatchedCount, 10),
			"open": strconv.FormatInt(att.OpenExceptions, 10), "failing": strconv.FormatInt(att.FailingDeliveries+att.DeadDeliveries, 10)})
	}
	var sent int
	for _, e := range events {
		ok, err := s.Store.ClaimAlert(ctx, e, s.node(), now, s.lease())
		if err != nil {
			return sent, err
		}
		if !ok {
			continue // sent, or another node's
		}
		sendErr := s.send(ctx, settings, e)
		msg := ""
		if sendErr != nil {
			msg = sendErr.Error()
			s.logger().Warn("alerts: sending an alert", "company", company, "kind", e.Kind, "key", e.Key, "err", sendErr)
		}
		if err := s.Store.FinishAlert(ctx, e.ID, s.node(), now, msg); err != nil {
			return sent, err
		}
		if sendErr == nil {
			sent++
		}
	}
	return sent, nil
}

func (s *Service) node() string {
	if s.Node == "" {
		return "node"
	}
	return s.Node
}

func (s *Service) lease() time.Duration {
	if s.Lease <= 0 {
		return time.Minute
	}
	return s.Lease
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// send tells the users who want e's kind by e-mail and the chat webhook.
func (s *Service) send(ctx context.Context, settings *recon.AlertSettings, e *recon.AlertEvent) error {
	var errs []error
	if s.Mail != nil {
		to, err := s.recipients(ctx, settings.Company, e.Kind)
		if err != nil {
			return err
		}
		viSubject, viText := Message("vi", e)
		_, enText := Message("en", e)
		body := viText + "\n\n— English —\n" + enText + "\n"
		for _, addr := range to {
			if err := s.Mail.SendMail(ctx, addr, "[Recon] "+viSubject, body); err != nil {
				errs = append(errs, fmt.Errorf("e-mail to %s: %w", addr, err))
			}
		}
	}
	if s.Post != nil && settings.ChatKind != "" && settings.ChatURL != "" {
		subject, text := Message("vi", e)
		payload, err := recon.ChatPayload(settings.ChatKind, settings.ChatID, &recon.AlertEvent{Kind: e.Kind, Subject: subject, Text: text})
		if err == nil {
			err = s.Post(ctx, settings.ChatURL, payload)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("chat webhook: %w", err))
		}
	}
	return errors.Join(errs...)
}

// recipients are the e-mail addresses of the company's users who may read
// its money and want alerts of kind.
func (s *Service) recipients(ctx context.Context, company int64, kind string) ([]string, error) {
	var out []string
	for offset := 0; ; offset += 200 {
		users, total, err := s.Store.Users(ctx, company, offset, 200)
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			if !u.May(recon.ActionReadMoney) {
				continue
			}
			p, err := s.Store.AlertPrefs(ctx, u.ID)
			if err != nil {
				return nil, err
			}
			if p.Wants(kind) {
				out = append(out, u.Email)
			}
		}
		if int64(offset+200) >= total {
			return out, nil
		}
	}
}

// Message is the subject and text of an alert in lang ("vi" or "en").
func Message(lang string, e *recon.AlertEvent) (subject, text string) {
	var f facts
	_ = json.Unmarshal([]byte(e.Text), &f)
	vi := lang == "vi"
	num := func(k string) int64 { n, _ := strconv.ParseInt(f[k], 10, 64); return n }
	switch e.Kind {
	case recon.AlertFailing:
		target := "IPN"
		if f["target"] == recon.DeliveryWebhook {
			target = "webhook"
		}
		if vi {
			return "Thông báo " + target + " gửi lỗi liên tiếp",
				fmt.Sprintf("%s lần gửi gần nhất tới địa chỉ nhận %s đều lỗi (lần cuối lúc %s). Hãy kiểm tra máy chủ nhận, sau đó gửi lại trên trang Thông báo.", count(lang, num("attempts")), target, f["at"])
		}
		return target + " notifications keep failing",
			fmt.Sprintf("The last %s attempts to the %s target failed (the newest at %s). Check the receiving server, then replay them on the Notifications page.", count(lang, num("attempts")), target, f["at"])
	case recon.AlertDisabled:
		target := map[string]string{recon.DeliveryIPN: "IPN", recon.DeliveryWebhook: "webhook", recon.DeliveryHubIPN: "hub IPN"}[f["target"]]
		if vi {
			return "Địa chỉ nhận " + target + " đã bị Recon tắt",
				fmt.Sprintf("Mọi lần gửi tới %s (%s) đều lỗi từ %s, nên Recon đã tắt địa chỉ này lúc %s. Các thông báo mới được giữ lại, không gửi. Hãy sửa máy chủ nhận, rồi bật lại địa chỉ trong Cài đặt và gửi lại những thông báo đã lỡ.", target, f["url"], f["since"], f["at"])
		}
		return "Recon disabled the " + target + " target",
			fmt.Sprintf("Every attempt to %s (%s) failed since %s, so Recon disabled it at %s. New notifications are held, not sent. Fix the receiving server, then re-enable the target in Settings and replay what it missed.", target, f["url"], f["since"], f["at"])
	case recon.AlertQueue:
		if vi {
			return "Hàng đợi ngoại lệ vượt ngưỡng", fmt.Sprintf("Có %s ngoại lệ đang chờ xử lý (ngưỡng cảnh báo: %s).", count(lang, num("open")), count(lang, num("threshold")))
		}
		return "The exceptions queue is past its threshold", fmt.Sprintf("%s exceptions are open (the alert's threshold: %s).", count(lang, num("open")), count(lang, num("threshold")))
	case recon.AlertDaily:
		if vi {
			return "Tóm tắt ngày " + f["day"], strings.Join([]string{
				fmt.Sprintf("Tiền vào: %s (%s giao dịch)", money(lang, num("in")), count(lang, num("in_count"))),
				fmt.Sprintf("Đã khớp đơn hàng: %s (%s giao dịch)", money(lang, num("matched")), count(lang, num("matched_count"))),
				fmt.Sprintf("Ngoại lệ đang mở: %s", count(lang, num("open"))),
				fmt.Sprintf("Thông báo gửi lỗi: %s", count(lang, num("failing")))}, "\n")
		}
		return "Summary of " + f["day"], strings.Join([]string{
			fmt.Sprintf("Money in: %s (%s transfers)", money(lang, num("in")), count(lang, num("in_count"))),
			fmt.Sprintf("Matched to orders: %s (%s transfers)", money(lang, num("matched")), count(lang, num("matched_count"))),
			fmt.Sprintf("Exceptions open: %s", count(lang, num("open"))),
			fmt.Sprintf("Notifications failing: %s", count(lang, num("failing")))}, "\n")
	}
	return e.Subject, e.Text
}

// money is whole VND as the language writes it (the dashboard's
// formatting: 1.234.567 ₫, 1,234,567 VND).
func money(lang string, vnd int64) string {
	if lang == "vi" {
		return count(lang, vnd) + " ₫"
	}
	return count(lang, vnd) + " VND"
}

func count(lang string, n int64) string {
	sep := ","
	if lang == "vi" {
		sep = "."
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
