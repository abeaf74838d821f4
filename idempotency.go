package recon

import (
	"context"
	"time"
)

// Idempotency keys of API v2 (docs/api-v2.md, Idempotency): a POST carrying
// X-Idempotency-Key runs once per tenant and key; a repeat with the same
// route and canonical body gets the first answer again.
const (
	// MaxIdempotencyKeyLen is the longest key accepted.
	MaxIdempotencyKeyLen = 255
	// IdempotencyKeyTTL is how long a key is remembered after its request
	// (unless its answer keeps it as long as the resource it made).
	IdempotencyKeyTTL = 24 * time.Hour
	// IdempotencyLease is how long a claim of a key stays the claimer's
	// while its request runs. A node that crashed mid-request leaves a
	// running claim behind; once its lease has passed, the next request with
	// the key takes it over and runs. A live request is far shorter than the
	// lease (the server's write timeout is a minute).
	IdempotencyLease = 5 * time.Minute
)

// CheckIdempotencyKey checks a key: 1 to MaxIdempotencyKeyLen visible ASCII
// characters (0x21 to 0x7E). The error names the header.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return FieldError("X-Idempotency-Key", "the X-Idempotency-Key header must hold 1 to %d visible ASCII characters, not %d", MaxIdempotencyKeyLen, len(key))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7E {
			return FieldError("X-Idempotency-Key", "the X-Idempotency-Key header must hold visible ASCII characters only (0x21 to 0x7E); byte %d is 0x%02X", i, c)
		}
	}
	return nil
}

// IdempotencyClaim is a request's claim of a key: which route and body
// (a hash of its canonical JSON) it was made for.
type IdempotencyClaim struct {
	Key   string
	Route string
	// BodyHash is the hex SHA-256 of the request's canonical JSON body.
	BodyHash string
	// Token identifies the claimer: Finish and Release act only on the
	// claim that still carries it (a claim taken over after its lease is
	// another claimer's).
	Token string
}

// IdempotentAnswer is the answer recorded for a key: what a replay sends.
type IdempotentAnswer struct {
	Status int
	Body   []byte
}

// IdempotencyState is what ClaimIdempotencyKey found.
type IdempotencyState int

const (
	// IdempotencyClaimed: the key was free (or its claim's lease had
	// passed, or it had expired): the caller runs the request.
	IdempotencyClaimed IdempotencyState = iota
	// IdempotencyDone: the key's request ran with the same route and body;
	// the answer is recorded.
	IdempotencyDone
	// IdempotencyRunning: the key's first request still runs.
	IdempotencyRunning
	// IdempotencyMismatch: the key was used with another route or body.
	IdempotencyMismatch
)

// IdempotencyStore keeps the keys (sqlstore, migration 00024). The claim is
// a row insert under the unique (tenant, key), so it holds across nodes and
// restarts.
type IdempotencyStore interface {
	// ClaimIdempotencyKey claims c.Key for c at now, with a lease until
	// now+lease, and returns IdempotencyClaimed; or what it found: the
	// recorded answer (IdempotencyDone), IdempotencyRunning or
	// IdempotencyMismatch. A key expired at now counts as free.
	ClaimIdempotencyKey(ctx context.Context, tenant TenantID, c IdempotencyClaim, now time.Time, lease time.Duration) (IdempotencyState, *IdempotentAnswer, error)
	// FinishIdempotencyKey records the answer of c's request; the key then
	// expires at expires (nil: never, as long as the resource it made).
	// ECONFLICT when c no longer holds the claim.
	FinishIdempotencyKey(ctx context.Context, tenant TenantID, c IdempotencyClaim, a IdempotentAnswer, expires *time.Time) error
	// ReleaseIdempotencyKey forgets c's claim (its request failed without
	// an answer worth replaying), if c still holds it.
	ReleaseIdempotencyKey(ctx context.Context, tenant TenantID, c IdempotencyClaim) error
	// DeleteExpiredIdempotencyKeys deletes the keys expired at now (the
	// maintenance loop) and returns how many.
	DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error)
}
