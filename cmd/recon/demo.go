package main

import (
	"context"
	"time"

	"recon"
	"recon/demo"
	"recon/oauth"
	"recon/sqlstore"
)

// seedDemo seeds the demo of `serve --demo` into db and prints its banner
// (the demo package).
func seedDemo(ctx context.Context, a *app, db *sqlstore.DB, auth *oauth.Server, baseURL string, loc *time.Location) error {
	return demo.Seed(ctx, db, demoAuth{db, auth}, demo.Options{
		BaseURL: baseURL, Location: loc, Clock: a.clock, Rand: a.rand, Out: a.stdout,
	})
}

// demoAuth is the authorization server as the demo asks for it (demo.Auth).
type demoAuth struct {
	db   *sqlstore.DB
	auth *oauth.Server
}

func (d demoAuth) RegisterClient(ctx context.Context, c *recon.Client) (string, error) {
	return oauth.RegisterClient(ctx, d.db, c, false)
}

func (demoAuth) HashPassword(password string) (string, error) { return oauth.HashPassword(password) }

func (d demoAuth) IssueToken(ctx context.Context, clientID, userEmail string, scopes []string, ttl time.Duration) (string, error) {
	t, err := d.auth.IssueToken(ctx, clientID, userEmail, scopes, ttl)
	if err != nil {
		return "", err
	}
	return t.Token, nil
}
