package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"
)

// Delivery is a notification in the outbox (an IPN, a hub webhook).
type Delivery struct {
	ID        int64  `json:"id"`
	CompanyID int64  `json:"company_id"`
	Kind      string `json:"kind"`   // ipn or webhook
	Event     string `json:"event"`  // ORDER_PAID, TRANSACTION_VOID, ...
	Status    string `json:"status"` // pending, delivered or dead
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error"`
	// Times are RFC 3339 in UTC.
	CreatedAt     string  `json:"created_at"`
	NextAttemptAt *string `json:"next_attempt_at,omitempty"` // pending only
	DeliveredAt   *string `json:"delivered_at,omitempty"`
	// Payload and AttemptLog are filled by GetDelivery only.
	Payload    json.RawMessage   `json:"payload,omitempty"`
	AttemptLog []DeliveryAttempt `json:"attempt_log,omitempty"`
}

// DeliveryAttempt is one try at sending a notification.
type DeliveryAttempt struct {
	At         string `json:"at"`
	URL        string `json:"url"`
	StatusCode int    `json:"status_code"`
	LatencyMS  int64  `json:"latency_ms"`
	Response   string `json:"response"` // the first KiB of the answer
	Error      string `json:"error"`
}

// DeliveryFilter selects deliveries. Zero fields filter nothing.
type DeliveryFilter struct {
	Status   string // pending, delivered, dead
	Kind     string // ipn, webhook
	Limit    int    // 1 to 500 (0: the server's default, 50)
	BeforeID int64  // only deliveries with a smaller id (the next page)
}

// ListDeliveries returns one page of the company's notifications, newest
// first: GET /api/v1/deliveries (scope delivery:read). The next page is
// the same filter with BeforeID set to the last delivery's ID.
func (c *Client) ListDeliveries(ctx context.Context, f DeliveryFilter) ([]Delivery, error) {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Kind != "" {
		q.Set("kind", f.Kind)
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.BeforeID != 0 {
		q.Set("before_id", strconv.FormatInt(f.BeforeID, 10))
	}
	var out envelope[[]Delivery]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/deliveries", query: q, auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Deliveries iterates over every notification the filter selects, newest
// first, page after page (by id, so nothing is skipped or repeated). An
// error ends the iteration.
func (c *Client) Deliveries(ctx context.Context, f DeliveryFilter) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) {
		for {
			page, err := c.ListDeliveries(ctx, f)
			if err != nil {
				yield(Delivery{}, err)
				return
			}
			for _, d := range page {
				if !yield(d, nil) {
					return
				}
			}
			if len(page) == 0 || (f.Limit > 0 && len(page) < f.Limit) || (f.Limit == 0 && len(page) < 50) {
				return
			}
			f.BeforeID = page[len(page)-1].ID
		}
	}
}

// GetDelivery returns one notification with its payload and every attempt:
// GET /api/v1/deliveries/{id}.
func (c *Client) GetDelivery(ctx context.Context, id int64) (*Delivery, error) {
	var out envelope[Delivery]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/deliveries/" + strconv.FormatInt(id, 10), auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// ReplayDelivery sends a notification again now, whatever its state: POST
// /api/v1/deliveries/{id}/replay (scope delivery:write, Admin). Not retried
// on 5xx: a replay that reached the server sends once more.
func (c *Client) ReplayDelivery(ctx context.Context, id int64) (*Delivery, error) {
	var out envelope[Delivery]
	if _, err := c.do(ctx, &request{method: "POST", path: "/api/v1/deliveries/" + strconv.FormatInt(id, 10) + "/replay", auth: authBearer}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// ReplayFailed sends again every failed notification (dead, or waiting for
// a retry) created since since, of one kind or any (""): POST
// /api/v1/deliveries/replay (scope delivery:write, Admin). since is
// "YYYY-MM-DD HH:MM:SS" in the server's business time zone, or RFC 3339. It
// returns how many were made due.
func (c *Client) ReplayFailed(ctx context.Context, since, kind string) (int64, error) {
	body := map[string]string{"since": since}
	if kind != "" {
		body["kind"] = kind
	}
	var out envelope[struct {
		Replayed int64 `json:"replayed"`
	}]
	if _, err := c.do(ctx, &request{method: "POST", path: "/api/v1/deliveries/replay", auth: authBearer, json: body}, &out); err != nil {
		return 0, err
	}
	return out.Data.Replayed, nil
}

// DeliveryStats are the figures of one kind of notification.
type DeliveryStats struct {
	Kind         string  `json:"kind"`
	Delivered    int64   `json:"delivered"`
	Pending      int64   `json:"pending"`
	Failing      int64   `json:"failing"` // pending after a failed attempt
	Dead         int64   `json:"dead"`
	Attempts     int64   `json:"attempts"`
	Succeeded    int64   `json:"succeeded"`
	SuccessRate  float64 `json:"success_rate"`
	LatencyP50MS float64 `json:"latency_p50_ms"`
	LatencyP95MS float64 `json:"latency_p95_ms"`
}

// GetDeliveryStats returns the figures of each kind of notification created
// since since ("" for the last 7 days): GET /api/v1/deliveries/stats.
func (c *Client) GetDeliveryStats(ctx context.Context, since string) ([]DeliveryStats, error) {
	q := url.Values{}
	if since != "" {
		q.Set("since", since)
	}
	var out envelope[[]DeliveryStats]
	if _, err := c.do(ctx, &request{method: "GET", path: "/api/v1/deliveries/stats", query: q, auth: authBearer, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// SendTestNotification sends a signed TEST_NOTIFICATION to the company's
// active target of the kind (ipn, webhook or hub_ipn): POST
// /api/v1/deliveries/test (scope delivery:write, Admin).
func (c *Client) SendTestNotification(ctx context.Context, kind string) (*Delivery, error) {
	var out envelope[Delivery]
	if _, err := c.do(ctx, &request{method: "POST", path: "/api/v1/deliveries/test", auth: authBearer, json: map[string]string{"kind": kind}}, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}
