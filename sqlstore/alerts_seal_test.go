package sqlstore_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func alertChatCell(company int64) cell {
	return cell{"alert_settings", "chat_url_sealed", fmt.Sprintf("company_id = %d", company)}
}

// TestAlertChatURLSealed: a company's chat webhook URL (Telegram's holds the
// bot token) is stored sealed and bound to its row (migration 00038): it
// reads back whole, the column does not hold it in the clear, no URL stays
// empty (NULL, nothing sealed), A's sealed URL copied into B's row is
// refused, and a rotation re-seals it readable.
func TestAlertChatURLSealed(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := openNoKey(t, dbtest.NewURL(t, engine))
		keyFile := filepath.Join(t.TempDir(), "recon.key")
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		a, b := sealSome(t, db, 1), sealSome(t, db, 2)
		const token = "123456:AAF-bot-token-of-a"
		settingsOf := func(company int64, url string) *recon.AlertSettings {
			s := recon.DefaultAlertSettings(company)
			if url != "" {
				s.ChatKind, s.ChatURL, s.ChatID = recon.ChatTelegram, url, "-1001"
			}
			return s
		}
		want := func(company int64, url string) {
			t.Helper()
			got, err := db.AlertSettings(ctx, company)
			if err != nil {
				t.Fatal(err)
			}
			if w := settingsOf(company, url); *got != *w {
				t.Fatalf("read %+v, want %+v", got, w)
			}
		}
		urlA := "https://api.telegram.org/bot" + token + "/sendMessage"
		urlB := "https://hooks.slack.example/services/B"
		if err := db.SetAlertSettings(ctx, settingsOf(a.company, urlA)); err != nil {
			t.Fatal(err)
		}
		if err := db.SetAlertSettings(ctx, settingsOf(b.company, urlB)); err != nil {
			t.Fatal(err)
		}
		want(a.company, urlA)
		want(b.company, urlB)
		// Sealed, not stored as text.
		raw := readCell(t, db, alertChatCell(a.company))
		if len(raw) == 0 || bytes.Contains(raw, []byte(token)) || bytes.Contains(raw, []byte("telegram")) {
			t.Fatalf("chat_url_sealed = %q: not sealed", raw)
		}
		// A's sealed URL copied into B's row does not open there.
		saved := readCell(t, db, alertChatCell(b.company))
		writeCell(t, db, alertChatCell(b.company), raw)
		_, err := db.AlertSettings(ctx, b.company)
		wantRefused(t, "chat webhook URL, A's into B's row", err, "sealed for another row, tenant or column")
		writeCell(t, db, alertChatCell(b.company), saved)
		want(b.company, urlB)
		// A rotation re-seals it under the new key.
		rot, err := db.RotateSecretKey(ctx, sqlstore.KeySource{File: keyFile})
		if err != nil {
			t.Fatal(err)
		}
		if after := readCell(t, db, alertChatCell(a.company)); bytes.Equal(raw, after) {
			t.Error("the rotation did not re-seal the chat webhook URL")
		}
		if rot.Resealed < 2 {
			t.Errorf("rotation re-sealed %d values", rot.Resealed)
		}
		want(a.company, urlA)
		want(b.company, urlB)
		// No chat: nothing sealed, and it reads back empty.
		if err := db.SetAlertSettings(ctx, settingsOf(a.company, "")); err != nil {
			t.Fatal(err)
		}
		var null bool
		if err := db.SQL().QueryRowContext(ctx, `SELECT chat_url_sealed IS NULL FROM alert_settings WHERE company_id = $1`, a.company).Scan(&null); err != nil || !null {
			t.Fatalf("no chat: chat_url_sealed IS NULL = %v, %v", null, err)
		}
		want(a.company, "")
		if _, err := db.RotateSecretKey(ctx, sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		want(a.company, "")
		want(b.company, urlB)
	})
}

// TestAlertChatURLMigration: migration 00038 does not seal the plain URLs of
// before (the key is not in the database): it clears the chat (kind, URL,
// id) and keeps the other settings, so no plain URL is left behind.
func TestAlertChatURLMigration(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := openNoKey(t, dbtest.NewURL(t, engine))
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: filepath.Join(t.TempDir(), "recon.key")}); err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		a := sealSome(t, db, 1)
		if err := db.MigrateTo(ctx, 37); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(ctx, `INSERT INTO alert_settings (company_id, failing_attempts, queue_threshold, daily_hour, chat_kind, chat_url, chat_id)
			VALUES ($1, 7, 9, 10, 'telegram', 'https://api.telegram.org/bot1:plain/sendMessage', '-1001')`, a.company); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := db.AlertSettings(ctx, a.company)
		if err != nil {
			t.Fatal(err)
		}
		if w := (recon.AlertSettings{Company: a.company, FailingAttempts: 7, QueueThreshold: 9, DailyHour: 10}); *got != w {
			t.Fatalf("after 00038: %+v, want %+v", got, w)
		}
	})
}
