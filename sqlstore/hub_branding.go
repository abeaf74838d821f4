package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// HubBranding implements recon.HubStore: the empty branding when none is set.
func (db *DB) HubBranding(ctx context.Context, tenant recon.TenantID) (*recon.HubBranding, error) {
	companyID := tenant.ID()
	var b recon.HubBranding
	var updated anyTime
	err := db.db.QueryRowContext(ctx, `SELECT display_name, primary_color, secondary_color, logo_url, updated_at
		FROM hub_merchant_configs WHERE company_id = $1`, companyID).
		Scan(&b.DisplayName, &b.PrimaryColor, &b.SecondaryColor, &b.LogoURL, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return &recon.HubBranding{}, nil
	}
	if err != nil {
		return nil, internal(err, "read merchant config")
	}
	b.UpdatedAt = updated.t
	return &b, nil
}

// SetHubBranding implements recon.HubStore.
func (db *DB) SetHubBranding(ctx context.Context, tenant recon.TenantID, b *recon.HubBranding) error {
	companyID := tenant.ID()
	if err := b.Validate(); err != nil {
		return err
	}
	now := db.now()
	_, err := db.execWrite(ctx, `
		INSERT INTO hub_merchant_configs (company_id, display_name, primary_color, secondary_color, logo_url, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (company_id) DO UPDATE SET display_name = excluded.display_name, primary_color = excluded.primary_color,
			secondary_color = excluded.secondary_color, logo_url = excluded.logo_url, updated_at = excluded.updated_at`,
		companyID, b.DisplayName, b.PrimaryColor, b.SecondaryColor, b.LogoURL, now)
	if db.d.violation(err) == foreignKeyViolation {
		return notFound(err, "company %d not found", companyID)
	}
	if err != nil {
		return internal(err, "save merchant config")
	}
	b.UpdatedAt = now
	return nil
}
