-- The alerts' chat webhook URL (alert_settings, migration 00035) is a
-- secret (Telegram's holds the bot token), so it is sealed like every
-- secret (sqlstore/secret.go): chat_url_sealed holds it sealed and bound to
-- its row (alert_settings.chat_url of the company), NULL when there is no
-- chat; the plain chat_url is dropped. The key is not in the database, so
-- this migration cannot seal the plain values: since alerts came out with
-- no release, it clears them (and the chat kind and chat id with them, so
-- that no row names a chat without its URL) instead of keeping them for a
-- start-up re-seal; an Admin sets the chat again on the Alerts page. Down
-- restores an empty chat_url and clears the chat the same way.
-- Keep equivalent to ../postgres/00038_alert_chat_sealed.sql.

-- +goose Up
ALTER TABLE alert_settings ADD COLUMN chat_url_sealed BLOB;
UPDATE alert_settings SET chat_kind = '', chat_id = '';
ALTER TABLE alert_settings DROP COLUMN chat_url;

-- +goose Down
ALTER TABLE alert_settings ADD COLUMN chat_url TEXT NOT NULL DEFAULT '';
UPDATE alert_settings SET chat_kind = '', chat_id = '';
ALTER TABLE alert_settings DROP COLUMN chat_url_sealed;
