-- Whether an order's custom_data was covered by the checkout form's
-- signature (docs/api.md, Payment gateway): the IPN's custom_data_signed.
-- Before this migration custom_data was never signed, so existing orders
-- are unsigned, except those without custom data ([]), where the payer
-- wrote nothing. Keep equivalent to ../sqlite/00023_custom_data_signed.sql.

-- +goose Up
ALTER TABLE orders ADD COLUMN custom_data_signed boolean NOT NULL DEFAULT false;
UPDATE orders SET custom_data_signed = true WHERE custom_data = '[]';

-- +goose Down
ALTER TABLE orders DROP COLUMN custom_data_signed;
