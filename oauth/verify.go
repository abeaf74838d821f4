package oauth

import (
	"context"
	"errors"
	"time"

	"recon"
)

// VerifyPassword implements recon.PasswordVerifier for the other sign-in
// pages (the dashboard): the login page's password check behind the same
// throttle, whose counts it shares, logged as attempts through "dashboard".
func (s *Server) VerifyPassword(ctx context.Context, companyID int64, email, password, address string) (*recon.User, error) {
	u, err := s.throttledLogin(ctx, &recon.Client{Company: companyID, ID: "dashboard"}, email, password, address)
	var wait errThrottled
	if errors.As(err, &wait) {
		secs := int64((time.Duration(wait) + time.Second - 1) / time.Second)
		return nil, recon.Errorf(recon.ERATELIMITED, "too many failed sign-ins; try again in %d seconds", secs)
	}
	return u, err
}
