package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one Recon server. It is safe for concurrent use. Make it
// with New; its zero value is not usable.
type Client struct {
	base, gatewayBase *url.URL
	hc                *http.Client
	tokens            TokenSource
	merchantID        string
	merchantSecret    string
	retry             RetryPolicy
	sleep             func(ctx context.Context, d time.Duration) error
	now               func() time.Time
	userAgent         string
}

// RetryPolicy bounds the retries of a request the server answered with 429
// or 5xx, or that failed on the network. Only requests that are safe to
// send again are retried: GET, PUT and DELETE, the transaction push (the
// server is idempotent on bank account and reference number) and statement
// uploads whose body can be rewound (all or nothing, deduplicated the same
// way). Any request is retried after a 429, which the server answers before
// acting. Cancel, void, replay and checkout are never retried otherwise:
// the server does not guarantee that sending them twice is harmless.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt; 1 turns retries off (default 4).
	MaxAttempts int
	// BaseDelay is the first backoff (default 250ms); it doubles per retry,
	// up to MaxDelay, and each wait is drawn at random below it (full jitter).
	BaseDelay time.Duration
	// MaxDelay caps a wait (default 30s). A Retry-After longer than it is not
	// waited for: the error is returned with its RetryAfter.
	MaxDelay time.Duration
}

// DefaultRetryPolicy is the policy of a client made without WithRetry.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, BaseDelay: 250 * time.Millisecond, MaxDelay: 30 * time.Second}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends the requests through hc (default: a client with a
// 60-second timeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithTokenSource authenticates /api/v1 requests with the source's bearer
// tokens (see ClientCredentials, RefreshTokenSource, StaticToken).
func WithTokenSource(ts TokenSource) Option { return func(c *Client) { c.tokens = ts } }

// WithMerchant authenticates the gateway's /v1/order… and /v1/ipn requests
// with Basic merchant_id:secret_key (recon merchant credentials).
func WithMerchant(merchantID, secretKey string) Option {
	return func(c *Client) { c.merchantID, c.merchantSecret = merchantID, secretKey }
}

// WithGatewayURL sends gateway requests to another base URL, for servers
// that give the gateway its own listener (default: the client's base URL).
func WithGatewayURL(raw string) Option {
	return func(c *Client) {
		if u, err := parseBase(raw); err == nil {
			c.gatewayBase = u
		}
	}
}

// WithRetry replaces DefaultRetryPolicy; zero fields take its values.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithSleep replaces the wait between retries (tests: record the delays
// instead of waiting). sleep must return ctx.Err() when ctx ends first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = sleep }
}

// WithClock replaces time.Now for token expiry and Retry-After dates.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithUserAgent sets the User-Agent header (default "recon-go-client/1").
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the server at baseURL (scheme and host, e.g.
// "https://recon.example.vn").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := parseBase(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{base: u, hc: &http.Client{Timeout: 60 * time.Second}, retry: DefaultRetryPolicy,
		sleep: sleepCtx, now: time.Now, userAgent: "recon-go-client/1"}
	for _, o := range opts {
		o(c)
	}
	if c.gatewayBase == nil {
		c.gatewayBase = c.base
	}
	d := DefaultRetryPolicy
	if c.retry.MaxAttempts <= 0 {
		c.retry.MaxAttempts = d.MaxAttempts
	}
	if c.retry.BaseDelay <= 0 {
		c.retry.BaseDelay = d.BaseDelay
	}
	if c.retry.MaxDelay <= 0 {
		c.retry.MaxDelay = d.MaxDelay
	}
	return c, nil
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("recon: base URL %q must be an absolute http or https URL", raw)
	}
	return u, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// auth says how a request authenticates.
type auth int

const (
	authNone     auth = iota
	authBearer        // /api/v1: a token of the client's TokenSource
	authMerchant      // gateway: Basic merchant_id:secret_key
	authBasic         // /oauth: Basic client_id:client_secret (request.user, request.pass)
)

// request is one call to the server.
type request struct {
	method  string
	path    string // with its leading slash
	query   url.Values
	gateway bool // on the gateway's base URL
	auth    auth
	user    string // authBasic
	pass    string
	// body: JSON (json), a form (form), or a raw body (raw, rewindable when it is an io.Seeker).
	json        any
	form        url.Values
	raw         io.Reader
	contentType string
	// idempotent lets 5xx and network failures be retried.
	idempotent bool
	// noRedirect returns a 3xx as it is (checkout).
	noRedirect bool
	// header holds extra request headers (X-Idempotency-Key: see V2CallOption).
	header http.Header
	// inUseRetry retries a 409 idempotency_key_in_use (API v2: the first
	// request with the key still runs; a retry gets its answer).
	inUseRetry bool
	// replayed, when set, is told whether the answer was replayed for an
	// idempotency key.
	replayed *bool
	// rawOut, when set, gets a 2xx answer's body as it is (a file: an
	// invoice's XML or PDF) instead of decoding it.
	rawOut *[]byte
}

// response is what do keeps of a successful answer.
type response struct {
	status int
	header http.Header
}

// do sends req, retrying as the policy allows, and decodes a 2xx JSON body
// into out (when out is not nil). Other answers are an *Error.
func (c *Client) do(ctx context.Context, req *request, out any) (*response, error) {
	var payload []byte
	if req.json != nil {
		var err error
		if payload, err = json.Marshal(req.json); err != nil {
			return nil, fmt.Errorf("recon: encoding the request: %w", err)
		}
		req.contentType = "application/json"
	} else if req.form != nil {
		payload = []byte(req.form.Encode())
		req.contentType = "application/x-www-form-urlencoded"
	}
	seeker, rewindable := req.raw.(io.Seeker)
	var start int64
	if rewindable {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			rewindable = false
		}
	}
	for attempt := 1; ; attempt++ {
		var body io.Reader
		switch {
		case payload != nil:
			body = bytes.NewReader(payload)
		case req.raw != nil:
			if attempt > 1 {
				if _, err := seeker.Seek(start, io.SeekStart); err != nil {
					return nil, fmt.Errorf("recon: rewinding the body: %w", err)
				}
			}
			body = req.raw
		}
		resp, raw, network, err := c.send(ctx, req, body)
		var wait time.Duration
		switch {
		case err != nil:
			if !network || ctx.Err() != nil || !req.idempotent || (req.raw != nil && !rewindable) || attempt >= c.retry.MaxAttempts {
				return nil, err
			}
		case resp.StatusCode/100 == 2 || (req.noRedirect && resp.StatusCode/100 == 3):
			if req.replayed != nil {
				*req.replayed = resp.Header.Get("Idempotent-Replayed") == "true"
			}
			if req.rawOut != nil {
				*req.rawOut = raw
			} else if out != nil && len(raw) > 0 {
				if err := json.Unmarshal(raw, out); err != nil {
					return nil, fmt.Errorf("recon: %s %s: decoding the answer: %w", req.method, req.path, err)
				}
			}
			return &response{resp.StatusCode, resp.Header}, nil
		default:
			e := decodeError(resp.StatusCode, resp.Header, raw, c.now())
			retryable := (req.raw == nil || rewindable) && (resp.StatusCode == http.StatusTooManyRequests ||
				(resp.StatusCode >= 500 && req.idempotent) || (req.inUseRetry && e.Code == CodeIdempotencyKeyInUse))
			if !retryable || attempt >= c.retry.MaxAttempts {
				return nil, e
			}
			if e.RetryAfter > c.retry.MaxDelay {
				return nil, e
			}
			wait = e.RetryAfter
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// backoff is the wait before retry number attempt (1-based): a random
// duration below BaseDelay·2^(attempt-1), capped at MaxDelay.
func (c *Client) backoff(attempt int) time.Duration {
	ceiling := c.retry.BaseDelay << min(attempt-1, 20)
	if ceiling <= 0 || ceiling > c.retry.MaxDelay {
		ceiling = c.retry.MaxDelay
	}
	return time.Duration(rand.Int64N(int64(ceiling))) + 1
}

// send makes one attempt and reads the whole answer. network reports
// whether an error happened on the way (worth another attempt), rather than
// before sending.
func (c *Client) send(ctx context.Context, req *request, body io.Reader) (resp *http.Response, raw []byte, network bool, err error) {
	base := c.base
	if req.gateway {
		base = c.gatewayBase
	}
	// req.path is escaped already (segments through url.PathEscape).
	target := base.Scheme + "://" + base.Host + strings.TrimRight(base.EscapedPath(), "/") + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return nil, nil, false, fmt.Errorf("recon: %w", err)
	}
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	for k, v := range req.header {
		hr.Header[k] = v
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", c.userAgent)
	switch req.auth {
	case authBearer:
		if c.tokens == nil {
			return nil, nil, false, errors.New("recon: no token source: make the client WithTokenSource or WithClientCredentials")
		}
		tok, err := c.tokens.Token(ctx)
		if err != nil {
			return nil, nil, false, err
		}
		hr.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	case authMerchant:
		if c.merchantID == "" {
			return nil, nil, false, errors.New("recon: no merchant credentials: make the client WithMerchant")
		}
		hr.SetBasicAuth(c.merchantID, c.merchantSecret)
	case authBasic:
		// RFC 6749 §2.3.1: the client id and secret are form-encoded first.
		hr.SetBasicAuth(url.QueryEscape(req.user), url.QueryEscape(req.pass))
	}
	hc := c.hc
	if req.noRedirect {
		cp := *c.hc
		cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		hc = &cp
	}
	if resp, err = hc.Do(hr); err != nil {
		return nil, nil, true, fmt.Errorf("recon: %s %s: %w", req.method, req.path, err)
	}
	defer resp.Body.Close()
	if raw, err = io.ReadAll(io.LimitReader(resp.Body, 32<<20)); err != nil {
		return nil, nil, true, fmt.Errorf("recon: %s %s: reading the answer: %w", req.method, req.path, err)
	}
	return resp, raw, false, nil
}

// envelope is the success body of /api/v1: {"status":"success","data":...}.
type envelope[T any] struct {
	Data T `json:"data"`
}
