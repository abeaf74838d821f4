-- Hub events reach the receiver in the order they were enqueued (docs/hub.md
-- "Order"): a webhook delivery is not claimed while an earlier one of the
-- same tenant is due or in flight. This index finds that earlier one
-- without reading the tenant's finished deliveries. Keep equivalent to
-- ../postgres/00013_webhook_order.sql.

-- +goose Up
CREATE INDEX deliveries_webhook_pending ON deliveries (company_id, id) WHERE status = 'pending' AND kind = 'webhook';

-- +goose Down
DROP INDEX deliveries_webhook_pending;
