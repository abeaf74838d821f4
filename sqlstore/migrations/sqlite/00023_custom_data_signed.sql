-- Whether an order's custom_data was covered by the checkout form's
-- signature (docs/api.md, Payment gateway): the IPN's custom_data_signed.
-- Before this migration custom_data was never signed, so existing orders
-- are unsigned, except those without custom data ([]), where the payer
-- wrote nothing. Keep equivalent to ../postgres/00023_custom_data_signed.sql.

-- +goose Up
ALTER TABLE orders ADD COLUMN custom_data_signed BOOLEAN NOT NULL DEFAULT 0 CHECK (custom_data_signed IN (0, 1));
UPDATE orders SET custom_data_signed = 1 WHERE custom_data = '[]';

-- +goose Down
ALTER TABLE orders DROP COLUMN custom_data_signed;
