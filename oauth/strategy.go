package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/x/errorsx"
	"golang.org/x/crypto/bcrypt"

	"recon"
)

// strategy is fosite's HMAC-SHA512/256 token strategy with expiry decided
// by the injected clock: fosite's own Validate* methods read time.Now.
// Generation and signatures are fosite's, unchanged.
type strategy struct {
	*oauth2.HMACSHAStrategy
	clock                      recon.Clock
	codeTTL, accessTTL, refTTL time.Duration
}

var _ oauth2.CoreStrategy = (*strategy)(nil)

func newStrategy(fc *fosite.Config, clock recon.Clock, codeTTL, accessTTL, refreshTTL time.Duration) *strategy {
	return &strategy{
		HMACSHAStrategy: compose.NewOAuth2HMACStrategy(fc),
		clock:           clock,
		codeTTL:         codeTTL,
		accessTTL:       accessTTL,
		refTTL:          refreshTTL,
	}
}

// Token prefixes of fosite's HMACSHAStrategy.
const (
	prefixAccess  = "ory_at_"
	prefixRefresh = "ory_rt_"
	prefixCode    = "ory_ac_"
)

// The access and refresh tokens of a test client start with
// recon.TestClientPrefix before fosite's prefix (test_ory_at_...,
// test_ory_rt_...), as its id and secret do (docs/testmode.md): every
// credential shows its mode. The mark is outside the HMAC, so the strategy
// checks it against the grant's mode: a test token stripped of it, or a live
// token given it, is refused.

// markTest marks token when the request is a test client's.
func markTest(token string, r fosite.Requester) string {
	if token != "" && testGrant(r) {
		return recon.TestClientPrefix + token
	}
	return token
}

// testGrant reports whether the request is a test client's grant.
func testGrant(r fosite.Requester) bool {
	sess, ok := r.GetSession().(*session)
	return ok && sess != nil && sess.Test
}

// unmarkTest strips the test mark from token, and fails when the mark does
// not match the grant's mode.
func unmarkTest(token string, r fosite.Requester) (string, error) {
	rest, marked := strings.CutPrefix(token, recon.TestClientPrefix)
	if marked != testGrant(r) {
		return "", errorsx.WithStack(fosite.ErrTokenSignatureMismatch.WithHint("The token's test-mode mark does not match its grant."))
	}
	return rest, nil
}

// GenerateAccessToken implements oauth2.AccessTokenStrategy: fosite's, marked
// for a test client.
func (s *strategy) GenerateAccessToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	token, sig, err := s.HMACSHAStrategy.GenerateAccessToken(ctx, r)
	return markTest(token, r), sig, err
}

// GenerateRefreshToken implements oauth2.RefreshTokenStrategy: fosite's,
// marked for a test client.
func (s *strategy) GenerateRefreshToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	token, sig, err := s.HMACSHAStrategy.GenerateRefreshToken(ctx, r)
	return markTest(token, r), sig, err
}

// live fails with fosite.ErrTokenExpired when the code or token of type tt
// has expired by the clock. With no expiry in the session (fosite always
// sets one) the lifetime counts from the request time.
func (s *strategy) live(r fosite.Requester, tt fosite.TokenType, ttl time.Duration) error {
	var exp time.Time
	if sess := r.GetSession(); sess != nil {
		exp = sess.GetExpiresAt(tt)
	}
	if exp.IsZero() {
		exp = r.GetRequestedAt().Add(ttl)
	}
	if !s.clock.Now().Before(exp) {
		return errorsx.WithStack(fosite.ErrTokenExpired.WithHintf("The %s expired at '%s'.", strings.ReplaceAll(string(tt), "_", " "), exp.UTC().Format(time.RFC3339)))
	}
	return nil
}

// ValidateAccessToken implements oauth2.AccessTokenStrategy.
func (s *strategy) ValidateAccessToken(ctx context.Context, r fosite.Requester, token string) error {
	if err := s.live(r, fosite.AccessToken, s.accessTTL); err != nil {
		return err
	}
	token, err := unmarkTest(token, r)
	if err != nil {
		return err
	}
	return s.Enigma.Validate(ctx, strings.TrimPrefix(token, prefixAccess))
}

// ValidateRefreshToken implements oauth2.RefreshTokenStrategy.
func (s *strategy) ValidateRefreshToken(ctx context.Context, r fosite.Requester, token string) error {
	if err := s.live(r, fosite.RefreshToken, s.refTTL); err != nil {
		return err
	}
	token, err := unmarkTest(token, r)
	if err != nil {
		return err
	}
	return s.Enigma.Validate(ctx, strings.TrimPrefix(token, prefixRefresh))
}

// ValidateAuthorizeCode implements oauth2.AuthorizeCodeStrategy.
func (s *strategy) ValidateAuthorizeCode(ctx context.Context, r fosite.Requester, token string) error {
	if err := s.live(r, fosite.AuthorizeCode, s.codeTTL); err != nil {
		return err
	}
	return s.Enigma.Validate(ctx, strings.TrimPrefix(token, prefixCode))
}

// secretHasher is fosite's client secret hasher: recon.Client.SecretHash is
// the hex SHA-256 of the secret (secrets are 256-bit random values, so a
// fast hash is enough), compared in constant time. An empty hash (a public
// client) matches nothing.
type secretHasher struct{}

var errSecretMismatch = errors.New("oauth: client secret does not match")

func (secretHasher) Compare(_ context.Context, hash, data []byte) error {
	if len(hash) == 0 {
		return errSecretMismatch
	}
	want := HashClientSecret(string(data))
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(string(hash)))) != 1 {
		return errSecretMismatch
	}
	return nil
}

func (secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	return []byte(HashClientSecret(string(data))), nil
}

// NewClientSecret returns a new client secret (32 random bytes,
// base64url without padding) and its hash for recon.Client.SecretHash.
func NewClientSecret() (secret, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, HashClientSecret(secret), nil
}

// HashClientSecret returns the hex SHA-256 of a client secret.
func HashClientSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// PasswordCost is the bcrypt cost HashPassword uses.
const PasswordCost = 12

// HashPassword returns the bcrypt hash of a user's password, for
// recon.User.PasswordHash. Passwords are 1 to 72 bytes (bcrypt's limit).
func HashPassword(pw string) (string, error) {
	return hashPassword(pw, PasswordCost)
}

func hashPassword(pw string, cost int) (string, error) {
	if pw == "" {
		return "", recon.FieldError("password", "password must not be empty")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if errors.Is(err, bcrypt.ErrPasswordTooLong) {
		return "", recon.FieldError("password", "password must be at most 72 bytes")
	} else if err != nil {
		return "", err
	}
	return string(h), nil
}

// checkPassword reports whether pw matches the bcrypt hash. An empty hash
// (a user who cannot log in) never matches; a comparison with a dummy hash
// keeps the time about the same, so that timing does not tell which users
// exist or have a password.
func checkPassword(hash, pw string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// dummyHash is a bcrypt hash (cost 12) of 32 random bytes nobody kept.
const dummyHash = "$2a$12$c2GsMZdOwgwD4WBN4VXQy.2ryAq6ovXAm.of2RmaOlyQKgQ1JsOHK"

// RegisterClient stores a new OAuth2 client: it checks c, gives it an id
// (rc_ and 96 random bits) when it has none and, unless public, a secret,
// which it returns: the secret is stored only as its hash and shown once.
// A test client's id and secret start with recon.TestClientPrefix, and only
// a test client's may.
// The CLI and the demo register clients through it.
func RegisterClient(ctx context.Context, store recon.ClientStore, c *recon.Client, public bool) (secret string, err error) {
	if err := c.Validate(); err != nil {
		return "", err
	}
	if c.ID == "" {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		c.ID = "rc_" + hex.EncodeToString(b[:])
		if c.Test {
			c.ID = recon.TestClientPrefix + c.ID
		}
	}
	if c.Test && !strings.HasPrefix(c.ID, recon.TestClientPrefix) {
		return "", recon.FieldError("client_id", "a test client's id must start with %q", recon.TestClientPrefix)
	}
	if !c.Test && strings.HasPrefix(c.ID, recon.TestClientPrefix) {
		return "", recon.FieldError("client_id", "only a test client's id may start with %q", recon.TestClientPrefix)
	}
	if !public {
		if secret, c.SecretHash, err = NewClientSecret(); err != nil {
			return "", err
		}
		if c.Test {
			secret = recon.TestClientPrefix + secret
			c.SecretHash = HashClientSecret(secret)
		}
	}
	if err := store.CreateClient(ctx, c); err != nil {
		return "", err
	}
	return secret, nil
}
