package oauth

import (
	"context"
	"errors"
	"strings"
	"time"

	"recon"
)

// VerifyPassword implements recon.PasswordVerifier for the other sign-in
// pages (the dashboard): the login page's password check behind the same
// throttle, whose counts it shares, logged as attempts through "dashboard".
func (s *Server) VerifyPassword(ctx context.Context, companyID int64, email, password, address string) (*recon.User, error) {
	u, err := s.throttledLogin(ctx, &recon.Client{Company: companyID, ID: "dashboard"}, email, password, address)
	return u, throttledError(err)
}

// VerifyEmailPassword implements recon.PasswordVerifier: the dashboard's
// sign-in by e-mail alone (docs/dashboard.md, Team). Every active user of
// the address, in any company, whose password it is, behind the login
// throttle (its account key is the address across companies, "company 0").
// None is EUNAUTHORIZED, as for an unknown address: each user's hash is
// compared (a dummy one when there is none), so the answer and its time
// say nothing about which addresses exist.
func (s *Server) VerifyEmailPassword(ctx context.Context, email, password, address string) ([]*recon.User, error) {
	var matched []*recon.User
	_, err := s.throttled(ctx, &recon.Client{ID: "dashboard"}, email, address, func() (*recon.User, error) {
		email = strings.ToLower(strings.TrimSpace(email))
		if email == "" || password == "" {
			return nil, errLogin()
		}
		users, err := s.store.UsersByEmail(ctx, email)
		if err != nil {
			return nil, err
		}
		if len(users) == 0 {
			checkPassword("", password)
		}
		for _, u := range users {
			if checkPassword(u.PasswordHash, password) && u.Active() {
				matched = append(matched, u)
			}
		}
		if len(matched) == 0 {
			return nil, errLogin()
		}
		return matched[0], nil
	})
	if err != nil {
		return nil, throttledError(err)
	}
	return matched, nil
}

// throttledError is a throttled attempt's error for the other sign-in pages.
func throttledError(err error) error {
	var wait errThrottled
	if errors.As(err, &wait) {
		secs := int64((time.Duration(wait) + time.Second - 1) / time.Second)
		return recon.Errorf(recon.ERATELIMITED, "too many failed sign-ins; try again in %d seconds", secs)
	}
	return err
}
