package oauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"

	"recon"
)

var _ recon.Authenticator = (*Server)(nil)

func errInvalidToken() error {
	return &recon.Error{Code: recon.EUNAUTHORIZED, Message: "the access token is invalid, expired or revoked"}
}

// Authenticate implements recon.Authenticator: it turns an access token
// into the Caller it was issued to. A missing, malformed, unknown,
// expired or revoked token, a refresh token, and a token whose client or
// user no longer exists are EUNAUTHORIZED; a valid token of an inactive
// company is EFORBIDDEN (recon.ErrCompanyInactive), checked on every call
// so that deactivation applies at once; a database failure is EINTERNAL.
// The user is loaded fresh, so role and permission changes apply at once;
// its PasswordHash is cleared. What the lookups found is kept while the
// store's authentication epoch stays put (callerCache): every change that
// could refuse the token moves it, on any node.
func (s *Server) Authenticate(ctx context.Context, bearerToken string) (*recon.Caller, error) {
	// Refuse what is not an access token of this server (wrong prefix, bad
	// HMAC) before asking the database. A test client's token is marked
	// test_ (checked against its grant by ValidateAccessToken below).
	unmarked := strings.TrimPrefix(bearerToken, recon.TestClientPrefix)
	if !strings.HasPrefix(unmarked, prefixAccess) ||
		s.strategy.Enigma.Validate(ctx, strings.TrimPrefix(unmarked, prefixAccess)) != nil {
		return nil, errInvalidToken()
	}
	sig := s.strategy.AccessTokenSignature(ctx, bearerToken)
	// The cache is keyed by the signature and the test mark, so that a token
	// whose mark was stripped or added is checked by the lookups below.
	key := sig
	if unmarked != bearerToken {
		key = recon.TestClientPrefix + sig
	}
	// The epoch is read after the kept caller is found and before the
	// lookups, so that a caller kept under it is never older than the epoch
	// says (see callerCache). With a kept caller, the same read brings its
	// tenant's change version, which spares a listing its own read
	// (docs/design.md, "Listing pages kept encoded").
	var epoch int64
	var err error
	if c, kept, ok := s.callers.candidate(key, s.cfg.Clock.Now()); ok {
		var version int64
		if epoch, version, err = s.store.AuthEpochAndVersion(ctx, c.Tenant); err == nil && epoch == kept {
			c.SetTenantVersion(version)
			c.SetEpoch(epoch)
			return c, nil
		}
	} else {
		epoch, err = s.store.AuthEpoch(ctx)
	}
	if err != nil {
		return nil, &recon.Error{Code: recon.EINTERNAL, Message: "could not check the access token", Err: err}
	}
	sess := new(session)
	req, err := s.storage.GetAccessTokenSession(withEpoch(ctx, epoch), sig, sess)
	if errors.Is(err, fosite.ErrNotFound) || errors.Is(err, fosite.ErrInactiveToken) {
		return nil, errInvalidToken()
	} else if err != nil {
		return nil, &recon.Error{Code: recon.EINTERNAL, Message: "could not check the access token", Err: err}
	}
	if err := s.strategy.ValidateAccessToken(ctx, req, bearerToken); err != nil {
		return nil, errInvalidToken()
	}
	// The token's tenant: the company's live data, or its test tenant's for
	// a token of a test client.
	tenant, err := s.tenant(ctx, sess.Company, !sess.Test)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, errInvalidToken()
	} else if err != nil {
		return nil, err
	}
	caller := &recon.Caller{
		Tenant:   tenant.ID,
		ClientID: req.GetClient().GetID(),
		Scopes:   slices.Clone([]string(req.GetGrantedScopes())),
	}
	if sess.UserID != 0 {
		u, err := s.store.User(ctx, sess.UserID)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return nil, errInvalidToken()
		} else if err != nil {
			return nil, &recon.Error{Code: recon.EINTERNAL, Message: "could not load the token's user", Err: err}
		}
		if u.Company != sess.Company || !u.Active() { // deactivated: docs/dashboard.md, Team
			return nil, errInvalidToken()
		}
		u.PasswordHash = ""
		caller.User = u
	}
	s.callers.put(key, epoch, caller, sess.GetExpiresAt(fosite.AccessToken))
	caller.SetEpoch(epoch)
	return caller, nil
}

// IssueToken issues an access token without the authorization flow, for
// operators (`recon token issue`). The token is made by the same fosite
// HMAC strategy and stored the same way as one the token endpoint issues,
// so Authenticate and introspection treat both alike; no refresh token is
// issued.
//
// The client's company must be active (EFORBIDDEN otherwise).
//
// userEmail names a user of the client's company, as if that user had
// consented; "" issues a token with no user, like client credentials.
// scopes must be among the client's allowed scopes (EINVALID otherwise);
// none means all of them. For a user, the token gets only the scopes the
// user's role and permissions allow (docs/design.md, D9); scopes it was
// refused are returned, and a request allowed none of them is EFORBIDDEN. ttl 0 means Config.AccessTTL; otherwise it must
// be positive and at most MaxIssuedTokenTTL (24h).
func (s *Server) IssueToken(ctx context.Context, clientID, userEmail string, scopes []string, ttl time.Duration) (*IssuedToken, error) {
	if ttl == 0 {
		ttl = s.cfg.AccessTTL
	}
	if ttl < 0 || ttl > MaxIssuedTokenTTL {
		return nil, recon.FieldError("ttl", "ttl must be positive and at most %s", MaxIssuedTokenTTL)
	}
	rc, err := s.store.Client(ctx, clientID)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, recon.FieldError("client_id", "no OAuth2 client %q", clientID)
	} else if err != nil {
		return nil, err
	}
	if err := s.companyActive(ctx, rc.Company); err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		scopes = rc.Scopes
	}
	for _, scope := range scopes {
		if !slices.Contains(rc.Scopes, scope) {
			return nil, recon.FieldError("scope", "scope %q is not allowed for client %s (allowed: %s)", scope, rc.ID, strings.Join(rc.Scopes, " "))
		}
	}
	sess := clientSession(rc)
	var refused []string
	if userEmail != "" {
		email := strings.ToLower(strings.TrimSpace(userEmail))
		u, err := s.store.UserByEmail(ctx, rc.Company, email)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return nil, recon.FieldError("email", "no user %q in the company of client %s", email, rc.ID)
		} else if err != nil {
			return nil, err
		}
		if !u.Active() {
			return nil, recon.Errorf(recon.EFORBIDDEN, "user %s was deactivated", u.Email)
		}
		sess = userSession(rc, u.ID)
		granted := u.GrantableScopes(scopes)
		if granted == nil {
			return nil, recon.Errorf(recon.EFORBIDDEN, "user %s (role %s, permissions [%s]) may use none of the scopes %q",
				u.Email, u.Role, strings.Join(u.Permissions, " "), strings.Join(scopes, " "))
		}
		for _, scope := range scopes {
			if !slices.Contains(granted, scope) {
				refused = append(refused, scope)
			}
		}
		scopes = granted
	}

	now := s.cfg.Clock.Now().UTC()
	req := fosite.NewRequest()
	req.RequestedAt = now
	req.Client = client{rc}
	for _, scope := range scopes {
		req.AppendRequestedScope(scope)
		req.GrantScope(scope)
	}
	sess.SetExpiresAt(fosite.AccessToken, now.Add(ttl))
	req.SetSession(sess)
	req.Form.Set("grant_type", "urn:recon:operator")

	token, sig, err := s.strategy.GenerateAccessToken(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("oauth: generate access token: %w", err)
	}
	if err := s.storage.CreateAccessTokenSession(ctx, sig, req.Sanitize(nil)); err != nil {
		return nil, err
	}
	return &IssuedToken{Token: token, ExpiresIn: ttl, Scopes: scopes, Refused: refused}, nil
}

// IssuedToken is what IssueToken made: the token, how long it lives, the
// scopes it grants and the requested scopes the user's role refused.
type IssuedToken struct {
	Token     string
	ExpiresIn time.Duration
	Scopes    []string
	Refused   []string
}

// companyActive returns nil when the company is active,
// recon.ErrCompanyInactive when it is not, ENOTFOUND when it does not exist,
// and EINTERNAL when the database fails.
func (s *Server) companyActive(ctx context.Context, companyID int64) error {
	_, err := s.tenant(ctx, companyID, true)
	return err
}

// tenant returns the company's live or test tenant when the company is
// active, with the errors of companyActive.
func (s *Server) tenant(ctx context.Context, companyID int64, live bool) (*recon.Tenant, error) {
	t, err := s.store.TenantOf(ctx, companyID, live)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, err
	} else if err != nil {
		return nil, &recon.Error{Code: recon.EINTERNAL, Message: "could not check the company's status", Err: err}
	}
	return t, t.CheckActive()
}

// errCompanyInactive is the OAuth2 error of the authorization and token
// endpoints for a client whose company is inactive, or err itself when the
// check failed for another reason (a server error).
func errCompanyInactive(err error) error {
	if recon.ErrorCode(err) == recon.EFORBIDDEN {
		return fosite.ErrAccessDenied.WithHint(recon.ErrorMessage(err))
	}
	return fosite.ErrServerError.WithWrap(err).WithDebug(err.Error())
}
