package gateway

import (
	"cmp"
	"context"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"recon"
	"recon/web"
)

// `recon listen` (docs/design.md, D10): a developer's machine opens one
// outbound, long-lived stream, GET /v1/listen, with the company's test-mode
// merchant credentials, and receives every pending notification of the test
// tenant as server-sent events: the body and the headers a target would get,
// signed under the tenant's listen secret (ListenStore.ListenSecret). It forwards each to a local URL and reports the answer
// with POST /v1/listen/answers, which the server records as an attempt: a 2xx
// delivers the notification, anything else leaves it pending. A notification
// stays in the outbox until answered, so a listener that drops and comes
// back gets what it missed; every attached listener gets every one.

// ListenEvents are the events a listener may filter on: the IPN's and the hub's.
var ListenEvents = append([]string{recon.IPNOrderPaid, recon.IPNTransactionVoid, recon.BalanceChangeEvent}, recon.HubEvents...)

// Listen stream tuning.
const (
	listenPoll      = time.Second      // look for new notifications at least this often
	listenHeartbeat = 15 * time.Second // a comment line keeps idle streams open through proxies
	listenHorizon   = 10 * time.Second // see listenCursor
	listenBatch     = 500
	maxExcerpt      = 1024

	// DefaultListenRecheck is how often an open stream checks its
	// credential and company again (docs/api.md, Test mode and recon listen).
	DefaultListenRecheck = 3 * time.Second
	// DefaultMaxListenStreams is how many streams one merchant credential
	// may hold open at once on one node.
	DefaultMaxListenStreams = 5
)

// openListen counts a stream of the merchant open on this node, unless it
// has max open already; release uncounts it.
func (h *Handler) openListen(merchantID string) (release func(), ok bool) {
	limit := cmp.Or(h.MaxListenStreams, DefaultMaxListenStreams)
	h.listenMu.Lock()
	defer h.listenMu.Unlock()
	if h.listenOpen[merchantID] >= limit {
		return nil, false
	}
	if h.listenOpen == nil {
		h.listenOpen = map[string]int{}
	}
	h.listenOpen[merchantID]++
	return func() {
		h.listenMu.Lock()
		defer h.listenMu.Unlock()
		if h.listenOpen[merchantID]--; h.listenOpen[merchantID] <= 0 {
			delete(h.listenOpen, merchantID)
		}
	}, true
}

// listenTicker returns the channel of the stream's re-checks and what stops it.
func (h *Handler) listenTicker() (<-chan time.Time, func()) {
	if h.ListenTick != nil {
		return h.ListenTick()
	}
	t := time.NewTicker(cmp.Or(h.ListenRecheck, DefaultListenRecheck))
	return t.C, t.Stop
}

// stillAuthorized checks again what authenticated the stream: the merchant
// credential (rotated or removed: EUNAUTHORIZED) and the company's status
// (inactive: EFORBIDDEN). m is what the stream was opened with.
func (h *Handler) stillAuthorized(ctx context.Context, m *recon.Merchant) error {
	fresh, err := h.Store.MerchantByID(ctx, m.MerchantID)
	if recon.ErrorCode(err) == recon.ENOTFOUND ||
		err == nil && (fresh.Tenant != m.Tenant || !hmac.Equal([]byte(fresh.SecretKey), []byte(m.SecretKey))) {
		return recon.Errorf(recon.EUNAUTHORIZED, "the merchant credentials of this stream were changed or removed: start recon listen again with the current test-mode credentials")
	}
	if err != nil {
		return err
	}
	return h.companyActive(ctx, m.Tenant)
}

// Listeners wakes the listen streams of this node when notifications are
// enqueued (streams of other nodes find them at their next poll), and ends
// them when the server stops. The zero value is not usable: NewListeners.
type Listeners struct {
	mu   sync.Mutex
	wake chan struct{}
	stop chan struct{}
	once sync.Once
}

// NewListeners returns a Listeners.
func NewListeners() *Listeners {
	return &Listeners{wake: make(chan struct{}), stop: make(chan struct{})}
}

// Notify wakes every stream waiting now.
func (l *Listeners) Notify() {
	l.mu.Lock()
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

// Stop ends every stream, now and later (a server that shuts down).
func (l *Listeners) Stop() { l.once.Do(func() { close(l.stop) }) }

func (l *Listeners) waiter() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wake
}

// listenCursor is how far a stream has looked. Ids are handed out before
// their transactions commit, so a notification may become visible after one
// with a higher id: the stream keeps looking below the highest id it has
// seen for listenHorizon (far longer than any state change's transaction),
// and skips the ones it has sent by their ids. A pending notification below
// the floor that it sent and was not answered with a 2xx is sent again when
// the listener reconnects.
type listenCursor struct {
	floor int64 // every pending notification at or below it has been sent
	marks []mark
	sent  map[int64]bool
}

type mark struct {
	at  time.Time
	max int64
}

// seen records the highest id seen by the look made at now, and moves the
// floor up to the highest id seen listenHorizon before now.
func (c *listenCursor) seen(now time.Time, highest int64) {
	c.marks = append(c.marks, mark{now, highest})
	i := 0
	for ; i < len(c.marks) && now.Sub(c.marks[i].at) >= listenHorizon; i++ {
		c.floor = c.marks[i].max
	}
	c.marks = c.marks[i:]
	for id := range c.sent {
		if id <= c.floor {
			delete(c.sent, id)
		}
	}
}

// listenEvent is one notification on the stream.
type listenEvent struct {
	DeliveryID int64             `json:"delivery_id"`
	Kind       string            `json:"kind"`
	Event      string            `json:"event"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

// listen serves GET /v1/listen[?events=A,B]: the stream.
func (h *Handler) listen(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	if m.Tenant.Live() {
		return recon.Errorf(recon.EFORBIDDEN, "recon listen works in test mode only: use the test-mode merchant credentials (recon merchant credentials --company ID --test)")
	}
	if h.Listeners == nil || h.Headers == nil {
		return recon.Errorf(recon.ENOTFOUND, "this server does not serve recon listen")
	}
	var events []string
	for name, vals := range r.URL.Query() {
		if name != "events" || len(vals) > 1 {
			return recon.FieldError(name, "unknown or repeated query parameter %q (known: events)", name)
		}
		for e := range strings.SplitSeq(vals[0], ",") {
			if e = strings.TrimSpace(e); !slices.Contains(ListenEvents, e) {
				return recon.FieldError("events", "unknown event %q (known: %s)", e, strings.Join(ListenEvents, ", "))
			}
			events = append(events, e)
		}
	}
	release, ok := h.openListen(m.MerchantID)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(listenHeartbeat/time.Second)))
		return recon.Errorf(recon.ERATELIMITED, "merchant %s has %d recon listen streams open on this server already: close one, or retry after %d s",
			m.MerchantID, cmp.Or(h.MaxListenStreams, DefaultMaxListenStreams), int(listenHeartbeat/time.Second))
	}
	defer release()
	ctx := r.Context()
	tenant, err := h.Store.Tenant(ctx, m.Tenant.ID())
	if err != nil {
		return err
	}
	secret, err := h.Store.ListenSecret(ctx, m.Tenant)
	if err != nil {
		return err
	}
	var id [8]byte
	_, _ = io.ReadFull(h.random(), id[:])
	listener := "l_" + hex.EncodeToString(id[:])

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream, not a request: no write timeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, id int64, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if id > 0 {
			fmt.Fprintf(w, "id: %d\n", id)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	err = send("ready", 0, map[string]any{
		"listener_id": listener, "company_id": tenant.Company, "livemode": false, "events": events,
		"signing_secret": secret, "signing_secret_whsec": recon.WhsecSecret(secret),
	})
	if err != nil {
		return nil // the client is gone: nothing to answer
	}
	h.logger().Info("listen: attached", "listener", listener, "company", tenant.Company)
	defer h.logger().Info("listen: detached", "listener", listener, "company", tenant.Company)

	// The stream goes on only while what authenticated it holds: checked
	// again before each look's notifications are written and at every tick,
	// so a rotated credential or an inactive company ends it with a final
	// `bye` naming why (retry false: reconnecting with the same credential
	// will not help).
	tick, stopTick := h.listenTicker()
	defer stopTick()
	recheck := cmp.Or(h.ListenRecheck, DefaultListenRecheck)
	var lastCheck time.Time // wall clock: only to measure how long since
	authorized := func() bool {
		err := h.stillAuthorized(ctx, m)
		if err == nil {
			lastCheck = time.Now()
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		status, name := web.ErrorStatus(err)
		bye := map[string]any{"code": name, "reason": recon.ErrorMessage(err), "retry": false}
		if status >= http.StatusInternalServerError { // 503: the database is away for a moment
			h.logger().Error("listen: check the credential again", "listener", listener, "err", err)
			bye["reason"], bye["retry"] = "the server could not check the credentials again: reconnect", true
		} else {
			h.logger().Info("listen: closed", "listener", listener, "company", tenant.Company, "reason", bye["reason"])
		}
		_ = send("bye", 0, bye)
		return false
	}

	// Every notification pending now or made from now on, whoever answers it.
	since := h.now()
	cur := listenCursor{sent: map[int64]bool{}}
	lastWrite := h.now()
	for {
		wake := h.Listeners.waiter() // before the look: a notification enqueued during it wakes the next wait
		list, err := h.Store.ListenDeliveries(ctx, m.Tenant, cur.floor, since, listenBatch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			h.logger().Error("listen: read outbox", "listener", listener, "err", err)
		}
		now := h.now()
		var highest int64
		targets := map[string]*recon.Target{} // read at each look: a changed X-Secret-Key applies at once
		checked := false
		for _, d := range list {
			highest = d.ID
			if cur.sent[d.ID] || (events != nil && !slices.Contains(events, d.Event)) {
				continue
			}
			// Before the look's first notification, and again within a
			// long batch (a slow reader) once recheck has passed.
			if !checked || time.Since(lastCheck) >= recheck {
				if !authorized() {
					return nil
				}
				checked = true
			}
			t := targets[d.Kind]
			if t == nil {
				if t, err = h.listenTarget(ctx, m.Tenant, d.Kind, secret); err != nil {
					h.logger().Error("listen: read target", "listener", listener, "err", err)
					break // sent at the next look; the cursor stays
				}
				targets[d.Kind] = t
			}
			ev := listenEvent{DeliveryID: d.ID, Kind: d.Kind, Event: d.Event, Headers: map[string]string{}, Body: string(d.Payload)}
			for k, v := range h.Headers(t, d, now) {
				ev.Headers[k] = v[0]
			}
			if send("delivery", d.ID, ev) != nil {
				return nil
			}
			cur.sent[d.ID] = true
			lastWrite = now
		}
		if err == nil {
			cur.seen(now, max(highest, cur.floor))
		}
		if now.Sub(lastWrite) >= listenHeartbeat {
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return nil
			}
			lastWrite = now
		}
		select {
		case <-ctx.Done():
			return nil
		case <-h.Listeners.stop:
			_ = send("bye", 0, map[string]any{"code": "server_stopping", "reason": "the server is stopping: reconnect", "retry": true})
			return nil
		case <-tick:
			if !authorized() {
				return nil
			}
		case <-wake:
		case <-time.After(listenPoll):
		}
	}
}

// listenTarget is what a listener's forwarded notification of the kind is
// sent as: signed under the listen secret, with the X-Secret-Key of the
// tenant's target of the kind when it has one of type SECRET_KEY.
func (h *Handler) listenTarget(ctx context.Context, tenant recon.TenantID, kind, secret string) (*recon.Target, error) {
	t := &recon.Target{AuthType: recon.AuthNone, SigningSecret: secret}
	stored, err := h.Store.DeliveryTarget(ctx, tenant.ID(), kind)
	switch {
	case recon.ErrorCode(err) == recon.ENOTFOUND:
	case err != nil:
		return nil, err
	case stored.AuthType == recon.AuthSecretKey:
		t.AuthType, t.Secret = stored.AuthType, stored.Secret
	}
	return t, nil
}

// listenAnswer is the body of POST /v1/listen/answers.
type listenAnswer struct {
	DeliveryID int64  `json:"delivery_id"`
	ListenerID string `json:"listener_id"`
	ForwardTo  string `json:"forward_to"`
	StatusCode int    `json:"status_code"`
	LatencyMS  int64  `json:"latency_ms"`
	Response   string `json:"response"`
	Error      string `json:"error"`
}

// listenAnswers serves POST /v1/listen/answers: a listener's local answer to
// a notification, recorded as an attempt (docs/design.md, D7, D10).
func (h *Handler) listenAnswers(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	if m.Tenant.Live() {
		return recon.Errorf(recon.EFORBIDDEN, "recon listen works in test mode only: use the test-mode merchant credentials")
	}
	var in listenAnswer
	if err := web.DecodeJSON(r, &in); err != nil {
		return err
	}
	switch {
	case in.DeliveryID <= 0:
		return recon.FieldError("delivery_id", "delivery_id must be a positive integer")
	case in.ListenerID == "" || len(in.ListenerID) > 64:
		return recon.FieldError("listener_id", "listener_id is required (at most 64 characters): the one the stream's ready event gave")
	case len(in.ForwardTo) > recon.MaxTargetURLLen:
		return recon.FieldError("forward_to", "forward_to must be at most %d characters", recon.MaxTargetURLLen)
	case in.StatusCode != 0 && (in.StatusCode < 100 || in.StatusCode > 599):
		return recon.FieldError("status_code", "status_code must be an HTTP status from 100 to 599, or 0 when no answer came")
	case in.LatencyMS < 0 || in.LatencyMS > 3_600_000:
		return recon.FieldError("latency_ms", "latency_ms must be from 0 to 3600000")
	case len(in.Response) > 4*maxExcerpt || len(in.Error) > 4*maxExcerpt:
		return recon.FieldError("response", "response and error must be at most %d bytes (an excerpt)", 4*maxExcerpt)
	}
	ctx := r.Context()
	d, err := h.Store.Delivery(ctx, m.Tenant, in.DeliveryID)
	if err != nil {
		return err // ENOTFOUND for another tenant's
	}
	a := &recon.DeliveryAttempt{DeliveryID: d.ID, At: h.now(), URL: cut("listen "+in.ListenerID+" → "+in.ForwardTo, recon.MaxTargetURLLen),
		StatusCode: in.StatusCode, Latency: time.Duration(in.LatencyMS) * time.Millisecond,
		Response: cut(in.Response, maxExcerpt), Error: cut(in.Error, maxExcerpt)}
	status := recon.DeliveryPending // keeps its next attempt time
	if in.StatusCode >= 200 && in.StatusCode < 300 && in.Error == "" {
		status = recon.DeliveryDelivered
	}
	if err := h.Store.RecordAttempts(ctx, []recon.AttemptOutcome{{Attempt: a, Status: status}}); err != nil {
		return err
	}
	if d, err = h.Store.Delivery(ctx, m.Tenant, in.DeliveryID); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"delivery_id": d.ID, "status": d.Status, "attempts": d.Attempts})
	return nil
}

// cut returns s cut to at most n bytes at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
