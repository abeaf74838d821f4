-- The order list's keyword search (q, GET /v1/order and the dashboard's
-- orders screen): the four fields it searches (invoice number, order id,
-- description, customer id), lowered and joined by a newline (q cannot hold
-- one) in one column, written when the order is made (sqlstore.orderSearchText,
-- which lowers with Unicode's rules), so a search is one LIKE per row instead
-- of four LOWER() and four LIKE; and an index holding it beside the
-- listing's order, so the search reads the index only, not the wide order
-- rows. Existing rows are filled here with SQLite's lower() (ASCII, as the
-- search's LOWER() was). Keep equivalent to ../postgres/00019_order_search.sql.

-- +goose Up
ALTER TABLE orders ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
UPDATE orders SET search_text = lower(invoice_number) || char(10) || lower(order_ref) || char(10) || lower(description) || char(10) || lower(customer_id);
CREATE INDEX orders_search ON orders (company_id, created_at DESC, id DESC, search_text);

-- +goose Down
DROP INDEX orders_search;
ALTER TABLE orders DROP COLUMN search_text;
