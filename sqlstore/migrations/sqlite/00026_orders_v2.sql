-- API v2 orders and their virtual accounts (docs/api-v2.md, Orders and
-- Virtual accounts). One order store with the gateway: a v2 order is an
-- orders row, with
--   public_id  its v2 id, an xid in UUID form, unique per tenant. Orders
--              made from now on get a random one (sqlstore.CreateOrder, the
--              store's injected randomness); the orders made before are
--              given one derived from their id here,
--              00000000-0000-4000-8000-<id in 12 digits>, a version-4 UUID
--              form no random draw is likely to meet, the same on both
--              engines and stable, so a v1 checkout order is readable
--              through v2 at once;
--   buyer      the buyer as JSON ("{}": none);
--   expires_at when a pending order expires (NULL: never, as v1 orders);
--   expired_at when the maintenance loop expired it (status CANCELLED).
-- virtual_accounts holds the accounts (bank numbers from a connector, memo
-- codes), number unique per tenant; expiry reads the active ones by
-- expires_at and the pending orders by theirs, each through a partial index.
-- Keep equivalent to ../postgres/00026_orders_v2.sql.

-- +goose Up
ALTER TABLE orders ADD COLUMN public_id TEXT NOT NULL DEFAULT '';
UPDATE orders SET public_id = '00000000-0000-4000-8000-' || printf('%012d', id);
CREATE UNIQUE INDEX orders_public_id ON orders (company_id, public_id);
ALTER TABLE orders ADD COLUMN buyer TEXT NOT NULL DEFAULT '{}';
ALTER TABLE orders ADD COLUMN expires_at TIMESTAMP;
ALTER TABLE orders ADD COLUMN expired_at TIMESTAMP;
CREATE INDEX orders_expiry ON orders (expires_at) WHERE status = 'AUTHENTICATION_NOT_NEEDED';

CREATE TABLE virtual_accounts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    order_id        INTEGER NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    number          TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    amount_mode     TEXT    NOT NULL,
    -- what the QR asks for; NULL for an open account
    amount          INTEGER,
    status          TEXT    NOT NULL,
    holder_name     TEXT    NOT NULL DEFAULT '',
    bank_account_id INTEGER NOT NULL,
    expires_at      TIMESTAMP NOT NULL CHECK (typeof(expires_at) = 'integer'),
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    updated_at      TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    UNIQUE (company_id, number)
);
CREATE INDEX virtual_accounts_order ON virtual_accounts (order_id, id);
CREATE INDEX virtual_accounts_list ON virtual_accounts (company_id, created_at DESC, id DESC);
CREATE INDEX virtual_accounts_expiry ON virtual_accounts (expires_at) WHERE status = 'active';

-- +goose Down
DROP TABLE virtual_accounts;
DROP INDEX orders_expiry;
DROP INDEX orders_public_id;
ALTER TABLE orders DROP COLUMN expired_at;
ALTER TABLE orders DROP COLUMN expires_at;
ALTER TABLE orders DROP COLUMN buyer;
ALTER TABLE orders DROP COLUMN public_id;
