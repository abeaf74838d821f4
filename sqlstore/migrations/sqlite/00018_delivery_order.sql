-- The dashboard's operations screens (docs/dashboard.md): an IPN names its
-- order in a column, so an order's notifications are an index range instead
-- of a scan of the tenant's payloads; the notifications log's status and
-- kind filters and its "failing" filter (pending after a failed attempt), and
-- the count and replay of failed ones, read an index range of the tenant's
-- rows in that state or of that kind. Keep equivalent to
-- ../postgres/00018_delivery_order.sql.

-- +goose Up
ALTER TABLE deliveries ADD COLUMN order_id INTEGER;
-- The IPNs written before this column name their order in the payload
-- ("order": {"id": "N"}); only an order of the same tenant is taken.
UPDATE deliveries SET order_id = (
    SELECT o.id FROM orders o
    WHERE o.company_id = deliveries.company_id
      AND o.id = CAST(json_extract(CAST(deliveries.payload AS TEXT), '$.order.id') AS INTEGER))
WHERE kind = 'ipn' AND event IN ('ORDER_PAID', 'TRANSACTION_VOID') AND json_valid(CAST(payload AS TEXT));
CREATE INDEX deliveries_order ON deliveries (company_id, order_id, id) WHERE order_id IS NOT NULL;
CREATE INDEX deliveries_company_status ON deliveries (company_id, status, id DESC);
CREATE INDEX deliveries_company_kind ON deliveries (company_id, kind, id DESC);
CREATE INDEX deliveries_failing ON deliveries (company_id, id DESC) WHERE status = 'pending' AND attempts > 0;

-- +goose Down
DROP INDEX deliveries_failing;
DROP INDEX deliveries_company_kind;
DROP INDEX deliveries_company_status;
DROP INDEX deliveries_order;
ALTER TABLE deliveries DROP COLUMN order_id;
