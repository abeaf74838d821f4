-- The orders search (q) finds an order by its payment code too, the code the
-- payer writes in the memo (docs/dashboard.md, "Links between pages"): the
-- code is added, lowered, as a fifth line of search_text (migration 00019),
-- so the search stays one LIKE on the covering index orders_search. New
-- orders get it from sqlstore.orderSearchText. Keep equivalent to
-- ../sqlite/00037_order_search_code.sql.

-- +goose Up
UPDATE orders SET search_text = search_text || chr(10) || lower(payment_code) WHERE payment_code <> '';

-- +goose Down
UPDATE orders SET search_text = lower(invoice_number) || chr(10) || lower(order_ref) || chr(10) || lower(description) || chr(10) || lower(customer_id);
