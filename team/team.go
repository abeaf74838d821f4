// Package team is the service of a company's team (docs/dashboard.md,
// Team): invitations, password resets and changes, deactivation. Each
// operation is one method, called by the dashboard (and the audit log
// around it); the one-time links are random tokens of which the store keeps
// only the SHA-256, e-mailed through mail.Sender or, without SMTP, shown to
// the Admin.
package team

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"recon"
	"recon/mail"
)

// Store is the storage the team's operations need.
type Store interface {
	recon.TeamStore
	// recon.UserStore's:
	CreateUser(ctx context.Context, u *recon.User) error
	User(ctx context.Context, id int64) (*recon.User, error)
	UserByEmail(ctx context.Context, companyID int64, email string) (*recon.User, error)
	// recon.CompanyStore's:
	Company(ctx context.Context, id int64) (*recon.Company, error)
}

// Service runs the team's operations. Fill the fields.
type Service struct {
	Store Store
	Clock recon.Clock
	// Mail sends the invitations and resets; nil: none is sent, and the
	// links are for the Admin to give (Link fields of the answers).
	Mail mail.Sender
	// BaseURL is the server's external URL, which the links start with.
	BaseURL string
	// Hash hashes a password (oauth.HashPassword).
	Hash   func(password string) (string, error)
	Logger *slog.Logger
	// Location is the business time zone the e-mails' times are in
	// (default UTC).
	Location *time.Location

	mu     sync.Mutex
	resets map[string][]time.Time // per address: the reset e-mails of the last hour
}

// MaxResetsPerHour bounds the reset e-mails one address gets an hour (the
// form answers the same either way).
const MaxResetsPerHour = 3

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

func (s *Service) local(t time.Time) time.Time {
	if s.Location == nil {
		return t.UTC()
	}
	return t.In(s.Location)
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// newToken is 32 random bytes, base64url, and the hash the store keeps.
func newToken() (string, []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	return tok, TokenHash(tok)
}

// TokenHash is what the store keeps of a link's token.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte("recon user token\x00" + token))
	return h[:]
}

// InviteLink and ResetLink are the pages the links open.
func (s *Service) link(kind recon.UserTokenKind, token string) string {
	path := "/dashboard/invite?t="
	if kind == recon.UserTokenReset {
		path = "/dashboard/reset?t="
	}
	return strings.TrimRight(s.BaseURL, "/") + path + token
}

// Sent is what an operation that makes a link did with it: e-mailed it
// (Mailed), or not (no SMTP, or the e-mail failed: MailError) and then Link
// is for the Admin to give.
type Sent struct {
	User      *recon.User
	Mailed    bool
	MailError error
	Link      string // "" when mailed
}

// Invite makes a user of actor's company with the role and permissions, who
// cannot sign in until it follows the one-time link (InviteTTL) and sets a
// password. An address already in the company is ECONFLICT, unless its user
// is still invited: then the invitation is made again (its earlier link
// stops working) with the new role. lang is the e-mails' language ("" vi).
func (s *Service) Invite(ctx context.Context, actor *recon.User, email string, role recon.Role, perms []string, lang string) (*Sent, error) {
	if err := recon.CheckGrant(actor, nil, role); err != nil {
		return nil, err
	}
	u := &recon.User{Company: actor.Company, Email: email, Role: role, Permissions: perms, Lang: lang}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	old, err := s.Store.UserByEmail(ctx, actor.Company, u.Email)
	switch {
	case recon.ErrorCode(err) == recon.ENOTFOUND:
		if err := s.Store.CreateUser(ctx, u); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case !old.Invited():
		if !old.Active() {
			return nil, &recon.Error{Code: recon.ECONFLICT, Reason: "deactivated", Message: old.Email + " was deactivated: reactivate the user instead"}
		}
		return nil, &recon.Error{Code: recon.ECONFLICT, Reason: "member", Message: old.Email + " is already a member of the company"}
	default:
		if err := recon.CheckGrant(actor, old, role); err != nil {
			return nil, err
		}
		u = old
	}
	return s.sendInvite(ctx, actor, u)
}

// ResendInvite makes the invitation of a still invited user of actor's
// company again: a new link (the earlier one stops working), e-mailed or
// for the Admin to give.
func (s *Service) ResendInvite(ctx context.Context, actor *recon.User, userID int64) (*Sent, error) {
	u, err := s.companyUser(ctx, actor, userID)
	if err != nil {
		return nil, err
	}
	if !u.Invited() {
		return nil, &recon.Error{Code: recon.ECONFLICT, Reason: "accepted", Message: u.Email + " has already accepted the invitation"}
	}
	return s.sendInvite(ctx, actor, u)
}

func (s *Service) sendInvite(ctx context.Context, actor, u *recon.User) (*Sent, error) {
	now := s.now()
	tok, hash := newToken()
	t := &recon.UserToken{Kind: recon.UserTokenInvite, Email: u.Email, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(recon.InviteTTL)}
	if err := s.Store.CreateUserToken(ctx, t, hash); err != nil {
		return nil, err
	}
	co, err := s.Store.Company(ctx, u.Company)
	if err != nil {
		return nil, err
	}
	link := s.link(recon.UserTokenInvite, tok)
	return s.deliver(ctx, u, inviteMessage(u.Lang, co.FullName, actor.Email, link, s.local(t.ExpiresAt)), link), nil
}

// deliver e-mails m to u, or says why not and hands the link back.
func (s *Service) deliver(ctx context.Context, u *recon.User, m mail.Message, link string) *Sent {
	sent := &Sent{User: u, Link: link}
	if s.Mail == nil {
		return sent
	}
	m.To = u.Email
	if err := s.Mail.Send(ctx, m); err != nil {
		s.log().WarnContext(ctx, "team: e-mail not sent", "user_id", u.ID, "err", err)
		sent.MailError = err
		return sent
	}
	sent.Mailed, sent.Link = true, ""
	return sent
}

// companyUser is the user of actor's company (ENOTFOUND for another's).
func (s *Service) companyUser(ctx context.Context, actor *recon.User, userID int64) (*recon.User, error) {
	u, err := s.Store.User(ctx, userID)
	if err != nil || u.Company != actor.Company {
		return nil, recon.Errorf(recon.ENOTFOUND, "user %d not found", userID)
	}
	return u, nil
}

// Link is a one-time link as its page shows it: whose, for which company.
type Link struct {
	Token   *recon.UserToken
	Email   string
	Company string // the company's name ("" for a reset of every company of the address)
}

// CheckLink reads the link of the kind with the token, refusing one used,
// expired (EINVALID, saying which) or unknown (ENOTFOUND).
func (s *Service) CheckLink(ctx context.Context, kind recon.UserTokenKind, token string) (*Link, error) {
	if token == "" {
		return nil, errNoLink
	}
	t, err := s.Store.UserToken(ctx, kind, TokenHash(token))
	if err != nil {
		return nil, err
	}
	if err := t.Usable(s.now()); err != nil {
		return nil, err
	}
	l := &Link{Token: t, Email: t.Email}
	if t.UserID != 0 {
		u, err := s.Store.User(ctx, t.UserID)
		if err != nil {
			return nil, err
		}
		if co, err := s.Store.Company(ctx, u.Company); err == nil {
			l.Company = co.FullName
		}
	}
	return l, nil
}

// UseLink sets the password through the link of the kind with the token,
// once (an invitation accepted, a password reset), ends the users' other
// sessions, and returns the users whose password it set: the invited one,
// or every active user of the address for a reset asked for by e-mail.
func (s *Service) UseLink(ctx context.Context, kind recon.UserTokenKind, token, password string) ([]*recon.User, error) {
	if err := recon.CheckNewPassword(password); err != nil {
		return nil, err
	}
	if token == "" {
		return nil, errNoLink
	}
	hash, err := s.Hash(password)
	if err != nil {
		return nil, err
	}
	return s.Store.RedeemUserToken(ctx, kind, TokenHash(token), s.now(), hash)
}

// RequestReset e-mails a reset link (ResetTTL) for every active user of the
// address, when there is one and SMTP is configured, in the background: the
// answer, nil, and its time are the same for an unknown address. At most
// MaxResetsPerHour e-mails an hour go to one address.
func (s *Service) RequestReset(ctx context.Context, email string) error {
	email = strings.ToLower(strings.TrimSpace(email))
	if s.Mail == nil || email == "" {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := s.sendReset(ctx, email); err != nil {
			s.log().WarnContext(ctx, "team: reset e-mail not sent", "err", err)
		}
	}()
	return nil
}

func (s *Service) sendReset(ctx context.Context, email string) error {
	users, err := s.Store.UsersByEmail(ctx, email)
	if err != nil {
		return err
	}
	users = slices.DeleteFunc(users, func(u *recon.User) bool { return !u.Active() })
	if len(users) == 0 || !s.allowReset(email) {
		return nil
	}
	now := s.now()
	tok, hash := newToken()
	t := &recon.UserToken{Kind: recon.UserTokenReset, Email: email, CreatedAt: now, ExpiresAt: now.Add(recon.ResetTTL)}
	if err := s.Store.CreateUserToken(ctx, t, hash); err != nil {
		return err
	}
	sent := s.deliver(ctx, users[0], resetMessage(users[0].Lang, "", s.link(recon.UserTokenReset, tok), s.local(t.ExpiresAt)), "")
	return sent.MailError
}

func (s *Service) allowReset(email string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resets == nil {
		s.resets = map[string][]time.Time{}
	}
	now := s.now()
	recent := slices.DeleteFunc(s.resets[email], func(t time.Time) bool { return now.Sub(t) >= time.Hour })
	if len(recent) >= MaxResetsPerHour {
		s.resets[email] = recent
		return false
	}
	s.resets[email] = append(recent, now)
	if len(s.resets) > 10_000 { // forget the oldest addresses rather than grow
		for k, v := range s.resets {
			if len(v) == 0 || now.Sub(v[len(v)-1]) >= time.Hour {
				delete(s.resets, k)
			}
		}
	}
	return true
}

// AdminReset makes a reset link (ResetTTL) for one user of actor's company
// (that user row only, not the person's other companies), e-mailed or for
// the Admin to give. Only a SuperAdmin resets a SuperAdmin.
func (s *Service) AdminReset(ctx context.Context, actor *recon.User, userID int64) (*Sent, error) {
	u, err := s.companyUser(ctx, actor, userID)
	if err != nil {
		return nil, err
	}
	if u.Role == recon.RoleSuperAdmin && actor.Role != recon.RoleSuperAdmin {
		return nil, errSuperAdmin
	}
	if !u.Active() {
		return nil, &recon.Error{Code: recon.ECONFLICT, Reason: "deactivated", Message: u.Email + " is deactivated"}
	}
	if u.Invited() {
		return nil, &recon.Error{Code: recon.ECONFLICT, Reason: "invited", Message: u.Email + " has not accepted the invitation yet: send it again"}
	}
	now := s.now()
	tok, hash := newToken()
	t := &recon.UserToken{Kind: recon.UserTokenReset, Email: u.Email, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(recon.ResetTTL)}
	if err := s.Store.CreateUserToken(ctx, t, hash); err != nil {
		return nil, err
	}
	co, err := s.Store.Company(ctx, u.Company)
	if err != nil {
		return nil, err
	}
	link := s.link(recon.UserTokenReset, tok)
	return s.deliver(ctx, u, resetMessage(u.Lang, co.FullName, link, s.local(t.ExpiresAt)), link), nil
}

// ErrWrongPassword is ChangePassword's refusal of a wrong current password.
var ErrWrongPassword = &recon.Error{Code: recon.EINVALID, Reason: "wrong_password", Message: "the current password is wrong"}

var (
	errNoLink     = &recon.Error{Code: recon.ENOTFOUND, Reason: "link_invalid", Message: "this link is not valid: ask for a new one"}
	errSuperAdmin = &recon.Error{Code: recon.EFORBIDDEN, Reason: "superadmin", Message: "only a SuperAdmin may change a SuperAdmin"}
)

// ChangePassword sets the signed-in person's password: current must be
// the user's; the new one is set on the user and on the person's other user
// rows of the session (others) that had the same password, and their other
// sessions end (keepSession is the current one's hash).
func (s *Service) ChangePassword(ctx context.Context, u *recon.User, others []*recon.User, current, next string, keepSession []byte) error {
	fresh, err := s.Store.User(ctx, u.ID)
	if err != nil {
		return err
	}
	if bcrypt.CompareHashAndPassword([]byte(fresh.PasswordHash), []byte(current)) != nil {
		return ErrWrongPassword
	}
	if err := recon.CheckNewPassword(next); err != nil {
		return err
	}
	hash, err := s.Hash(next)
	if err != nil {
		return err
	}
	if err := s.Store.SetUserPassword(ctx, fresh.Company, fresh.ID, hash, keepSession); err != nil {
		return err
	}
	for _, o := range others {
		if o.ID == fresh.ID || o.Email != fresh.Email || !o.Active() ||
			bcrypt.CompareHashAndPassword([]byte(o.PasswordHash), []byte(current)) != nil {
			continue
		}
		if err := s.Store.SetUserPassword(ctx, o.Company, o.ID, hash, keepSession); err != nil {
			return err
		}
	}
	return nil
}

// SetLang sets the language of the user's own e-mails.
func (s *Service) SetLang(ctx context.Context, u *recon.User, lang string) error {
	return s.Store.SetUserLang(ctx, u.Company, u.ID, lang)
}

// Deactivate deactivates a user of actor's company (recon.CheckDeactivate):
// it cannot sign in, and its sessions, OAuth tokens and unused links are
// revoked at once; the company's last active Admin is ECONFLICT.
func (s *Service) Deactivate(ctx context.Context, actor *recon.User, userID int64) (*recon.User, error) {
	u, err := s.companyUser(ctx, actor, userID)
	if err != nil {
		return nil, err
	}
	if err := recon.CheckDeactivate(actor, u); err != nil {
		return nil, err
	}
	if err := s.Store.DeactivateUser(ctx, u.Company, u.ID, s.now()); err != nil {
		return nil, err
	}
	return u, nil
}

// Reactivate lets a deactivated user of actor's company sign in again
// (with its old password; an Admin may make it a reset link).
func (s *Service) Reactivate(ctx context.Context, actor *recon.User, userID int64) (*recon.User, error) {
	u, err := s.companyUser(ctx, actor, userID)
	if err != nil {
		return nil, err
	}
	if !actor.Role.Administers() {
		return nil, &recon.Error{Code: recon.EFORBIDDEN, Reason: "admin_only", Message: "only an Admin reactivates users"}
	}
	if u.Role == recon.RoleSuperAdmin && actor.Role != recon.RoleSuperAdmin {
		return nil, errSuperAdmin
	}
	if u.Active() {
		return nil, &recon.Error{Code: recon.ECONFLICT, Reason: "active", Message: u.Email + " is active"}
	}
	return u, s.Store.ReactivateUser(ctx, u.Company, u.ID)
}
