package oauth

import (
	"context"
	"crypto/subtle"
	"slices"
	"strings"
	"time"

	"recon"
)

var _ recon.HubTokenIssuer = (*Server)(nil)

// dummyClientHash is compared against when the client id is unknown, so that
// an unknown client and a wrong secret take about the same time.
var dummyClientHash = HashClientSecret("recon-hub-unknown-client")

// IssueHubToken implements recon.HubTokenIssuer for POST /v1/token: the
// client's secret is checked in constant time against its stored hash, the
// client must hold recon.ScopeHub and its company be active; the token is a
// client-credentials access token with the hub scope alone, made and stored
// like every other (IssueToken), so revocation and introspection apply.
// Every refusal is the same EUNAUTHORIZED: the endpoint tells a prober
// nothing about which part was wrong.
func (s *Server) IssueHubToken(ctx context.Context, clientID, clientSecret string) (string, time.Duration, error) {
	refused := recon.Errorf(recon.EUNAUTHORIZED, "Unauthenticated")
	rc, err := s.store.Client(ctx, clientID)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		subtle.ConstantTimeCompare([]byte(HashClientSecret(clientSecret)), []byte(dummyClientHash))
		return "", 0, refused
	} else if err != nil {
		return "", 0, err
	}
	if rc.SecretHash == "" || subtle.ConstantTimeCompare([]byte(HashClientSecret(clientSecret)), []byte(strings.ToLower(rc.SecretHash))) != 1 {
		return "", 0, refused
	}
	if !slices.Contains(rc.Scopes, recon.ScopeHub) {
		return "", 0, refused
	}
	if err := s.companyActive(ctx, rc.Company); err != nil {
		if c := recon.ErrorCode(err); c == recon.EFORBIDDEN || c == recon.ENOTFOUND {
			return "", 0, refused
		}
		return "", 0, err
	}
	t, err := s.IssueToken(ctx, rc.ID, "", []string{recon.ScopeHub}, 0)
	if err != nil {
		return "", 0, err
	}
	return t.Token, t.ExpiresIn, nil
}
